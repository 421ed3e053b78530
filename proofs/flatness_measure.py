"""The measuring side of proofs/cost_flatness.py: a database as serve's
worker sees it, moves mailed to a board's reply address and processed by
the worker's own batch (`Processor.process_batch`, as `Worker` calls it,
with the claim of due outbox mail that serve's worker adds to a batch
once a second), timed one mail at a time; the mails a real game leaves behind, for the
generator; the database's size."""

from __future__ import annotations

import os
import random
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path

from sqlalchemy import Engine, func, select, text

from pbmserv.config import Settings
from pbmserv.mail.backends import MemoryBackend
from pbmserv.runtime import Runtime
from pbmserv.service.play.reply_addresses import seat_address
from pbmserv.service.processing.batches import DeliveryOrder
from pbmserv.service.processing.passwords import Passwords
from pbmserv.store import records
from pbmserv.store.database import reading, sqlite_file, upgrade
from pbmserv.store.models import InboundMail
from pbmserv.worker import CLAIMED_PER_BATCH
from proofs.flatness_fill import BOARDS, MOVES, OUTBOX, USERS, Filler, MoveMail, Spec, Writer, address_of, fill_engine, userid
from proofs.flatness_games import Templates, player_mail

INBOUND = InboundMail.__table__


@dataclass(frozen=True)
class Sample:
    cpu: float  # seconds of this process's CPU for the mail's batch
    wall: float


@dataclass
class Probe:
    """A board a run makes moves on, and how many it has made."""

    spec: Spec
    number: int
    played: int = 0

    @property
    def game(self) -> str:
        return self.spec.played.game.name


@dataclass
class Server:
    """One database, with the worker's processor and intake over it (and the arrival spool on SQLite)."""

    settings: Settings
    quoted: dict[str, str]  # by game: the board mail a player's move quotes
    runtime: Runtime = field(init=False)
    handed_over: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.runtime = Runtime(self.settings, backend=MemoryBackend())

    def move(self, probe: Probe) -> Sample:
        """The probe's next move mailed by its player and processed by the worker; its cost."""
        game = probe.spec.played.game
        seat, move, _ = probe.spec.played.moves[probe.spec.cut + probe.played]
        user = probe.spec.seats[seat]
        with reading(self.runtime.engine) as connection:
            account = records.find_account(connection, userid(user))
        assert account is not None
        reply_to = seat_address(self.runtime.intake.key, self.settings.address, game.name, probe.number, seat, account)
        number = probe.spec.cut + probe.played + 1
        raw = player_mail(
            address_of(user), reply_to, f"{game.title} Board {probe.number} {userid(user)}", move, number,
            self.quoted[game.name], datetime.now(UTC), f"{os.getpid()}.{probe.number}.{game.name}.{number}",
        )
        self.runtime.intake.accept([(raw, None, reply_to)])
        cpu, wall = time.process_time(), time.perf_counter()
        # as serve's worker orders a batch when a second has passed since the last: the due outbox mail claimed too
        done = self.runtime.processor.process_batch(order=DeliveryOrder(due_to_claim=CLAIMED_PER_BATCH))
        sample = Sample(time.process_time() - cpu, time.perf_counter() - wall)
        self.handed_over.extend(done.answered)
        assert done.processed == 1, f"the worker processed {done.processed} mails, not the one move"
        probe.played += 1
        return sample

    def unplayed(self, probes: list[Probe]) -> list[str]:
        """The probes whose board does not hold every move made on it (a move refused, say)."""
        wrong = []
        with reading(self.runtime.engine) as connection:
            for probe in probes:
                board = records.find_board(connection, probe.game, probe.number)
                if board is None or board.move_count != probe.spec.cut + probe.played:
                    wrong.append(f"{probe.game} {probe.number}: {board.move_count if board else None} moves")
        return wrong

    def close(self) -> None:
        self.runtime.close()


def settings_for(url: str, key_file: Path) -> Settings:
    return replace(Settings(), database_url=url, key_file=str(key_file), mail_backend="memory")


def password_hash(settings: Settings) -> str:
    return Passwords(settings).hash("secret-password-1")


def sample_mails(work: Path, key_file: Path, templates: Templates, moves: int) -> tuple[dict[str, list[MoveMail]], dict[str, str]]:
    """A real game's first `moves` moves of each game, played through the
    worker on a scratch database: what each move left behind (the mail as
    kept, the board mails), and the last board mail's text, for moves to quote."""
    url = f"sqlite:///{work / 'samples.db'}"
    upgrade(url)
    settings = settings_for(url, key_file)
    engine = fill_engine(url)
    placeholder = MoveMail(b"", "", (b"", b""))
    filler = Filler(Writer(engine), {game: [placeholder] for game in templates.games}, password_hash(settings), random.Random(5))
    filler.add_users(2)
    probes = []
    for played in templates.games.values():
        longest = max(played, key=lambda p: len(p.moves))
        spec = Spec(longest, 0, "running", [1, 2])
        probes.append(Probe(spec, filler.add_board(spec)))
    filler.writer.flush()
    engine.dispose()
    server = Server(settings, {game: "" for game in templates.games})
    mails: dict[str, list[MoveMail]] = {}
    quoted: dict[str, str] = {}
    for probe in probes:
        taken = []
        for _ in range(min(moves, len(probe.spec.played.moves) - 1)):
            server.move(probe)
            with reading(server.runtime.engine) as connection:
                row = connection.execute(select(INBOUND.c.id, INBOUND.c.raw, INBOUND.c.reply_token).order_by(INBOUND.c.id.desc()).limit(1)).one()
                outbox = connection.scalars(select(OUTBOX.c.raw).where(OUTBOX.c.inbound_id == row.id).order_by(OUTBOX.c.id)).all()
            taken.append(MoveMail(row.raw, row.reply_token, tuple(outbox)))
            server.quoted[probe.game] = quoted[probe.game] = body_of(server.runtime.intake.key.unseal(outbox[0]))
        mails[probe.game] = taken
    server.close()
    return mails, quoted


def body_of(raw: bytes) -> str:
    """The text of a board mail (as sent: the outbox keeps it sealed)."""
    mail = message_from_bytes(raw, policy=policy.default)
    assert isinstance(mail, EmailMessage)
    part = mail.get_body(("plain",))
    assert part is not None
    return str(part.get_content())


def database_size(engine: Engine) -> tuple[int, dict[str, int]]:
    """Bytes on disk: the SQLite file (with its WAL), or pg_database_size; and each table's (PostgreSQL: with its indexes and TOAST)."""
    if engine.dialect.name == "postgresql":
        with engine.connect() as connection:
            total = connection.scalar(text("SELECT pg_database_size(current_database())"))
            tables = dict(connection.execute(text(
                "SELECT relname, pg_total_relation_size(oid) FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace"
            )).tuples().all())
        return int(total or 0), {name: int(size) for name, size in tables.items()}
    path = sqlite_file(str(engine.url))
    assert path is not None
    wal = path.with_name(path.name + "-wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0), {}


def counts(engine: Engine) -> dict[str, int]:
    """How many rows the database holds of what the figures are per."""
    with engine.connect() as connection:
        found = {table.name: connection.scalar(select(func.count()).select_from(table)) for table in (BOARDS, MOVES, INBOUND, OUTBOX, USERS)}
        found["finished boards"] = connection.scalar(select(func.count()).where(BOARDS.c.status == "finished"))
    return {name: int(count or 0) for name, count in found.items()}
