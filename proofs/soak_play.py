"""The players of proofs/crash_soak.py: accounts and boards made by mail,
moves drawn from the game's legal moves on a mirror of each board, sent by
clients that retry like an MTA; and what the database and the maildir say
afterwards."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from email.parser import BytesHeaderParser
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from pbmserv.gamekit import get_game
from pbmserv.store.models import Board, InboundMail, Move, OutboxMail
from proofs.soak_parts import SERVER, Database, Delivered, send_until_taken

GAME = "majority"
#: 120 moves a game: room for 100 on each board
OPTIONS = {"size": "12", "stones": "60"}
CLIENTS = 10
Progress = Callable[[float, str], None]


@dataclass
class Mirror:
    """A board as the clients know it: its number, its players by seat, its state, the moves sent."""

    number: int
    players: list[str]
    state: Any
    rng: random.Random
    sent: list[str] = field(default_factory=list)


@dataclass
class Check:
    accepted: int
    processed: int
    failed: int
    applied: int
    twice: int
    unlike: int
    replies: int
    error_replies: int
    dead: int
    undelivered: int
    delivered_distinct: int
    duplicates: int
    waits: list[float]


def mail(userid: str, subject: str, message_id: str) -> bytes:
    return (f"From: {userid}@example.org\r\nTo: {SERVER}\r\nSubject: {subject}\r\nMessage-ID: {message_id}\r\n\r\n"
            "\r\n").encode()


def welcome_replies(maildir: Path, signups: int) -> list[tuple[str, str, str]]:
    """Each player's reply to the welcome of their signup (userid, Subject, Message-ID), once all have come."""
    parser = BytesHeaderParser()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        new = maildir / "new"
        subjects = [str(parser.parsebytes(path.read_bytes())["Subject"]) for path in new.iterdir()] if new.exists() else []
        welcomes = [subject for subject in subjects if subject.startswith("confirm ")]
        if len(welcomes) >= signups:
            return [(subject.split()[1], f"Re: {subject}", f"<confirm-{subject.split()[1]}@soak>") for subject in welcomes]
        time.sleep(0.2)
    raise AssertionError(f"{signups} signups were not all welcomed within 120 s")


class Soak:
    def __init__(self, port: int, database: Database, boards: int, moves: int, rng: random.Random):
        self.port = port
        self.database = database
        self.game = get_game(GAME)
        self.game_name = GAME
        self.board_count = boards
        self.total = moves
        self.rng = rng
        self.boards: list[Mirror] = []
        self.message_ids: list[str] = []  # every mail answered 250
        self.answers: Counter[str] = Counter()
        self.accepted = 0  # moves answered 250
        self.left: set[str] = set()  # replies undelivered when serve was killed the last time
        self.first_of_left: float | None = None  # when the first of them was delivered
        self.recovery_cpu = 0.0  # CPU seconds serve and its children used from their restart until they were
        self.began = 0.0  # when the first move was sent
        self.target = moves  # the moves in all by the end of the present `play`
        self.processed_at: float | None = None  # when every mail accepted was first seen processed
        self.processed_moves = 0  # the moves accepted then
        self.done = threading.Event()
        self._lock = threading.Lock()

    def _send(self, userid: str, subject: str, message_id: str, answers: Counter[str]) -> None:
        send_until_taken(self.port, f"{userid}@example.org", mail(userid, subject, message_id), answers)
        with self._lock:
            self.message_ids.append(message_id)

    def set_up(self, progress: Progress, maildir: Path) -> None:
        """An account for each player (two a board), confirmed by a reply to
        its welcome, and the boards, by mail; waits until they are processed."""
        pairs = [(f"s{number}a", f"s{number}b") for number in range(self.board_count)]
        signups = [(uid, f"signup {uid} pw-{uid}", f"<signup-{uid}@soak>") for pair in pairs for uid in pair]
        options = " ".join(f"-{name}={value}" for name, value in OPTIONS.items())
        challenges = [(a, f"{GAME} challenge {options} {a} {b}", f"<challenge-{a}@soak>") for a, b in pairs]
        for step in (signups, "confirmations", challenges):
            mails = welcome_replies(maildir, len(signups)) if isinstance(step, str) else step
            for done, (uid, subject, message_id) in enumerate(mails):
                self._send(uid, subject, message_id, self.answers)
                progress(done / len(mails), f"{done + 1} of {len(mails)} mails")
            while self.processed() < len(self.message_ids):
                progress(1.0, f"{self.processed()} of {len(self.message_ids)} processed")
                time.sleep(0.2)
        stmt = select(Board.board, Board.seats, Board.options).where(Board.game_type == GAME).order_by(Board.board)
        with self.database.engine.connect() as connection:
            for number, seats, options in connection.execute(stmt):
                state = self.game.new(options, list(seats))
                self.boards.append(Mirror(number, list(seats), state, random.Random(self.rng.random())))
        assert len(self.boards) == self.board_count, f"{len(self.boards)} boards made of {self.board_count}"

    def all_processed(self) -> bool:
        """Whether every mail accepted is processed (noting when that was first seen)."""
        if self.processed() < len(self.message_ids):
            return False
        if self.processed_at is None:
            self.processed_at, self.processed_moves = time.monotonic(), self.accepted
        return True

    def processed(self) -> int:
        """Mails processed (or dropped: none should be)."""
        with self.database.engine.connect() as connection:
            return connection.scalar(select(func.count()).where(InboundMail.status != "pending")) or 0

    def play(self, disturb: Callable[[Soak], None], progress: Progress, upto: int) -> float:
        """The moves up to `upto` in all, from `CLIENTS` clients (each with
        boards of its own) while `disturb` runs; the seconds it took."""
        quota = [upto // self.board_count + (1 if index < upto % self.board_count else 0) for index in range(self.board_count)]
        self.target = upto
        self.done.clear()
        began = time.monotonic()
        self.began = self.began or began
        clients = [threading.Thread(target=self._client, args=(list(range(index, self.board_count, CLIENTS)), quota))
                   for index in range(CLIENTS)]
        failure: list[BaseException] = []

        def disturbing() -> None:
            try:
                disturb(self)
            except BaseException as error:
                failure.append(error)

        disturber = threading.Thread(target=disturbing)
        disturber.start()
        for client in clients:
            client.start()
        while any(client.is_alive() for client in clients):
            progress(self.accepted / upto, f"moves accepted {self.accepted} of {upto}")
            time.sleep(0.2)
        played = time.monotonic() - began
        self.done.set()
        disturber.join()
        if failure:
            raise failure[0]
        return played

    def _client(self, indexes: list[int], quota: list[int]) -> None:
        answers: Counter[str] = Counter()
        while any(len(self.boards[index].sent) < quota[index] for index in indexes):
            for index in indexes:
                board = self.boards[index]
                if len(board.sent) >= quota[index]:
                    continue
                [seat] = self.game.to_move(board.state)
                move = board.rng.choice(self.game.legal_moves(board.state, seat))
                number = len(board.sent) + 1
                userid = board.players[seat]
                subject = f"{GAME} move {board.number} {userid} pw-{userid} {move}#{number}"
                self._send(userid, subject, f"<move-{board.number}-{number}@soak>", answers)
                board.state = self.game.play(board.state, seat, move)
                board.sent.append(move)
                with self._lock:
                    self.accepted += 1
        with self._lock:
            self.answers.update(answers)

    def replies(self) -> set[str]:
        """The Message-IDs of every reply in the outbox."""
        with self.database.engine.connect() as connection:
            return set(connection.scalars(select(OutboxMail.message_id)))

    def settle(
        self, delivered: Delivered, seconds: float, progress: Callable[[str], None], replies: set[str] | None = None,
    ) -> float | None:
        """When these `replies` were delivered, or (None) every accepted mail
        was processed and every reply in the outbox delivered; None if not within `seconds`."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            with self.database.engine.connect() as connection:
                pending = connection.scalar(select(func.count()).where(InboundMail.status == "pending")) or 0
            missing = (self.replies() if replies is None else replies) - set(delivered.scan())
            if replies is not None and len(missing) < len(replies) and self.first_of_left is None:
                self.first_of_left = time.monotonic()
            if not missing and (replies is not None or pending == 0 and self.all_processed()):
                return time.monotonic()
            progress(f"settling: {pending} mails to process, {len(missing)} replies to deliver")
            time.sleep(0.1)
        return None

    def check(self, delivered: Delivered) -> Check:
        with self.database.engine.connect() as connection:
            inbound: dict[str, str] = {
                message_id: status for message_id, status in connection.execute(select(InboundMail.message_id, InboundMail.status))
            }
            outbox = connection.execute(
                select(OutboxMail.message_id, OutboxMail.status, OutboxMail.kind, OutboxMail.created_at, OutboxMail.next_try_at),
            ).all()
            applied = connection.execute(
                select(Board.board, Move.number, Move.text).join(Board, Board.id == Move.board_id).order_by(Board.board, Move.number),
            ).all()
        counts = delivered.scan()
        by_board: dict[int, list[str]] = {}
        for number, _, text in applied:
            by_board.setdefault(number, []).append(text)
        twice = sum(max(0, len(by_board.get(board.number, [])) - len(board.sent)) for board in self.boards)
        unlike = sum(
            sum(1 for sent, kept in zip(board.sent, by_board.get(board.number, [])) if sent != kept) for board in self.boards
        )
        accepted = set(self.message_ids)
        return Check(
            accepted=len(accepted), processed=sum(1 for message_id in accepted if inbound.get(message_id) == "done"),
            failed=list(inbound.values()).count("failed"), applied=len(applied), twice=twice,
            unlike=unlike, replies=len(outbox), error_replies=[row.kind for row in outbox].count("error"),
            dead=[row.status for row in outbox].count("dead"),
            undelivered=sum(1 for row in outbox if counts[row.message_id] == 0),
            delivered_distinct=sum(1 for count in counts.values() if count), duplicates=sum(count - 1 for count in counts.values() if count > 1),
            waits=[  # the last act's replies wait for the deliverer it stopped on purpose
                (row.next_try_at - row.created_at).total_seconds() for row in outbox
                if row.status == "sent" and row.message_id not in self.left
            ],
        )
