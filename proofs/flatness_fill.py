"""The generator of proofs/cost_flatness.py: a database made by pbmserv's
own migrations, filled in bulk with what a server that has run for years
holds (accounts and their addresses and ratings, running and finished
boards with their moves, each move's inbound mail and the board mails it
caused). Rows are written straight into the tables: Core executemany on
SQLite, COPY on PostgreSQL; each board is a template game cut at some
move, so its state is real and its next moves can be played."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import JSON, Engine, Table, create_engine, event, text

from pbmserv.store.models import Address, Board, InboundMail, Move, OutboxMail, Rating, User
from proofs.flatness_games import PLAYERS, Played, resigned_result

USERS, ADDRESSES, BOARDS, MOVES = User.__table__, Address.__table__, Board.__table__, Move.__table__
INBOUND, OUTBOX, RATINGS = InboundMail.__table__, OutboxMail.__table__, Rating.__table__
TABLES = (USERS, ADDRESSES, RATINGS, BOARDS, MOVES, INBOUND, OUTBOX)
#: rows buffered per table before they are written
FLUSH_ROWS = 20_000
NOW = datetime.now(UTC)


def userid(number: int) -> str:
    return f"player{number:06d}"


def address_of(number: int) -> str:
    return f"{userid(number)}@mail{number % 97}.example.org"


@dataclass(frozen=True)
class MoveMail:
    """What one move left behind as a real server stored it: the player's
    mail as kept, its kept reply address, and the board mail to each player."""

    inbound: bytes
    reply_token: str
    outbox: tuple[bytes, ...]


@dataclass
class Spec:
    """A board to store: `played` cut after `cut` moves; running, or over
    (played to its end, or resigned by the player to move)."""

    played: Played
    cut: int
    ending: str  # running | complete | resigned
    seats: list[int]  # user numbers

    @property
    def stored_moves(self) -> int:
        return self.cut + (self.ending == "resigned")


@dataclass
class Writer:
    """Buffers rows per table and writes them in bulk, with ids of its own counting."""

    engine: Engine
    on_rows: Callable[[int], None] = lambda count: None
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {table.name: [] for table in TABLES})
    next_id: dict[str, int] = field(default_factory=lambda: {table.name: 1 for table in TABLES})

    def add(self, table: Table, row: dict[str, Any]) -> int:
        row_id = row["id"] = self.next_id[table.name]
        self.next_id[table.name] += 1
        self.rows[table.name].append(row)
        if len(self.rows[table.name]) >= FLUSH_ROWS:  # every table, parents first: the foreign keys hold
            self.flush()
        return row_id

    def flush(self) -> None:
        for table in TABLES:  # in the order of their foreign keys
            self._write(table)

    def _write(self, table: Table) -> None:
        rows = self.rows[table.name]
        if not rows:
            return
        if self.engine.dialect.name == "postgresql":
            _copy(self.engine, table, rows)
        else:
            with self.engine.begin() as connection:
                connection.execute(table.insert(), rows)
        self.on_rows(len(rows))
        self.rows[table.name] = []

    def settle(self) -> None:
        """What follows a bulk load: sequences past the ids written, statistics (PostgreSQL), the WAL checkpointed (SQLite)."""
        self.flush()
        if self.engine.dialect.name == "postgresql":
            with self.engine.begin() as connection:
                for table in TABLES:
                    connection.execute(text(
                        f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), {self.next_id[table.name]}, false)"
                    ))
            with self.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
                connection.execute(text("VACUUM ANALYZE"))
        else:
            with self.engine.connect() as connection:
                connection.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")


def _copy(engine: Engine, table: Table, rows: list[dict[str, Any]]) -> None:
    names = list(rows[0])
    json_columns = {name for name in names if isinstance(table.c[name].type, JSON)}
    connection = engine.raw_connection()
    driver: Any = connection.driver_connection  # psycopg's own connection, for its COPY
    try:
        with driver.cursor() as cursor, cursor.copy(f"COPY {table.name} ({', '.join(names)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row([json.dumps(row[name]) if name in json_columns else row[name] for name in names])
        connection.commit()
    finally:
        connection.close()


def _named(state: Any, seats: list[str]) -> Any:
    """The template's state with the board's players in place of the template's (games that keep the names)."""
    encoded = json.dumps(state)
    for name, seat in zip(PLAYERS, seats):
        encoded = encoded.replace(json.dumps(name), json.dumps(seat))
    return json.loads(encoded)


def fill_engine(url: str) -> Engine:
    """An engine for the bulk load (SQLite without syncing each commit: a crash only means generating again)."""
    engine = create_engine(url)
    if engine.dialect.name == "sqlite":
        @event.listens_for(engine, "connect")
        def unsynced(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.execute("PRAGMA synchronous=OFF")
    return engine


@dataclass
class Filler:
    """Accounts and boards with their history, written through a `Writer`."""

    writer: Writer
    mails: dict[str, list[MoveMail]]  # by game: the mails of a real game's moves, in order
    password_hash: str
    rng: random.Random
    board_numbers: dict[str, int] = field(default_factory=dict)
    rated: set[tuple[int, str]] = field(default_factory=set)
    users: int = 0
    mails_written: int = 0

    def add_users(self, count: int) -> None:
        for _ in range(count):
            self.users += 1
            joined = NOW - timedelta(days=self.rng.uniform(30, 1500))
            user_id = self.writer.add(USERS, {
                "userid": userid(self.users), "password_hash": self.password_hash, "created_at": joined,
                "disabled_at": None, "disabled_reason": "", "reply_secret": f"{self.rng.getrandbits(128):032x}",
            })
            self.writer.add(ADDRESSES, {
                "user_id": user_id, "address": address_of(self.users), "position": 0, "confirmed_at": joined,
            })
            sample = self.mails["majorities"][0]  # a signup and its welcome, as big as a move's mails
            signup_id = self._message(joined, address_of(self.users), sample, signup=True)
            self._outbox(signup_id, address_of(self.users), sample.outbox[0], joined, "answer")

    def add_board(self, spec: Spec) -> int:
        """Store the board with its moves and mails; returns its number."""
        game = spec.played.game
        number = self.board_numbers.get(game.name, 100) + 1
        self.board_numbers[game.name] = number
        seats = [userid(user) for user in spec.seats]
        days_ago = self.rng.uniform(0.5, 20) if spec.ending == "running" else self.rng.uniform(21, 1400)
        started = NOW - timedelta(days=days_ago)
        step = timedelta(days=days_ago) / (spec.stored_moves + 2)
        result, status = None, "active"
        if spec.ending == "complete":
            result, status = spec.played.result(seats), "finished"
        elif spec.ending == "resigned":
            result, status = resigned_result(self._to_move(spec), seats), "finished"
        board_id = self.writer.add(BOARDS, {
            "game_type": game.name, "board": number, "options": {}, "timers": {"nagtime": 7, "forfeittime": 21},
            "seats": seats, "state": _named(spec.played.states[spec.cut], seats), "move_count": spec.stored_moves, "status": status,
            "result": result, "created_at": started, "updated_at": started + step * (spec.stored_moves + 1),
            "version": spec.stored_moves + 1, "nagged_at": None, "proposal": None,
        })
        samples = self.mails[game.name]
        self._mails(samples[0], spec.seats, started)  # the challenge
        moves = [*spec.played.moves[:spec.cut], *([(self._to_move(spec), "resign", False)] if spec.ending == "resigned" else [])]
        for index, (seat, move, secret) in enumerate(moves):
            at = started + step * (index + 1)
            self.writer.add(MOVES, {
                "board_id": board_id, "number": index + 1, "seat": seat, "text": move, "secret": secret,
                "created_at": at, "comment": "" if self.rng.random() < 0.8 else "Nice move. Let me think about this one.",
                "auto": False,
            })
            self._mails(samples[index % len(samples)], [spec.seats[seat], *spec.seats], at)
        if status == "finished":
            for user in spec.seats:
                self._rate(user, game.name, started)
        return number

    def _to_move(self, spec: Spec) -> int:
        state = spec.played.game.decode(spec.played.states[spec.cut])
        return min(spec.played.game.to_move(state))

    def _mails(self, sample: MoveMail, users: list[int], at: datetime) -> None:
        """The inbound mail from users[0] and the board mails to the players (users[1:])."""
        inbound_id = self._message(at, address_of(users[0]), sample)
        for user, raw in zip(users[1:], sample.outbox * 2):
            self._outbox(inbound_id, address_of(user), raw, at, "board")

    def _message(self, at: datetime, sender: str, sample: MoveMail, *, signup: bool = False) -> int:
        self.mails_written += 1
        message_id = f"<{self.mails_written:010d}.{self.rng.getrandbits(48):012x}@example.org>"
        return self.writer.add(INBOUND, {
            "received_at": at, "envelope_sender": sender, "message_id": message_id,
            "dedup_key": hashlib.sha256(f"{sender}\0{message_id}".encode()).hexdigest(), "raw": sample.inbound,
            "sealed": None, "status": "done", "error": "", "processed_at": at,
            "reply_token": "" if signup else sample.reply_token,
        })

    def _outbox(self, inbound_id: int, recipient: str, raw: bytes, at: datetime, kind: str) -> None:
        self.mails_written += 1
        self.writer.add(OUTBOX, {
            "created_at": at, "inbound_id": inbound_id, "recipient": recipient,
            "message_id": f"<{self.mails_written:010d}.{self.rng.getrandbits(48):012x}@pbmserv.example.net>", "raw": raw,
            "status": "sent", "kind": kind, "attempts": 1, "next_try_at": at, "last_error": "",
        })

    def _rate(self, user: int, game: str, at: datetime) -> None:
        if (user, game) not in self.rated:
            self.rated.add((user, game))
            self.writer.add(RATINGS, {
                "user_id": user, "game_type": game, "rating": self.rng.randint(1200, 1800), "won": self.rng.randint(0, 40),
                "lost": self.rng.randint(0, 40), "drawn": self.rng.randint(0, 3), "last_game_at": at,
            })
