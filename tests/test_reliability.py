"""The reliability contract at the service level: every bad input gives one
clear error mail and leaves the database as it was; a crash loses nothing and
applies nothing; duplicates are applied once; passwords never stay in clear."""

from __future__ import annotations

import logging
import random
import threading
from dataclasses import replace
from email import policy
from email.parser import BytesParser
from typing import Any, Literal

import pytest
from argon2 import PasswordHasher
from sqlalchemy import func, select, update
from sqlalchemy.orm.exc import StaleDataError

from pbmserv.config import Settings
from pbmserv.gamekit import IllegalMove
from pbmserv.mail.backends import MemoryBackend
from pbmserv.runtime import Runtime
from pbmserv.service.processing import guesses
from pbmserv.service.processing.batches import BatchDone
from pbmserv.service.processing.catalog import Catalog
from pbmserv.service.processing.passwords import Passwords
from pbmserv.store import records
from pbmserv.store.models import Address, Board, InboundMail, Move, OutboxMail, User
from tests.conftest import FakeClock
from tests.mailtools import body, make_mail, send, send_raw, signup
from tests.toygame import Toy, ToyMove, ToyState


def snapshot(runtime: Runtime) -> dict[str, list[Any]]:
    """Everything a command may change (not the mail tables)."""
    with runtime.sessions() as session:
        return {
            "users": [(u.userid, u.password_hash) for u in session.scalars(select(User).order_by(User.id))],
            "addresses": [(a.user_id, a.address) for a in session.scalars(select(Address).order_by(Address.id))],
            "boards": [
                (b.game_type, b.board, b.seats, b.state, b.move_count, b.status, b.result, b.version)
                for b in session.scalars(select(Board).order_by(Board.id))
            ],
            "moves": [(m.board_id, m.number, m.seat, m.text) for m in session.scalars(select(Move).order_by(Move.id))],
        }


ERROR_PATHS = {
    "wrong password": ("toy move 101 bob not-it a1", "password for 'bob' is wrong"),
    "unknown user": ("toy move 101 zoe secret2 a1", "no player with the userid 'zoe'"),
    "unknown game": ("chess move 101 bob secret2 a1", "'chess' is neither a command nor a game"),
    "unknown command": ("toy fly 101 bob secret2", "'fly' is not a toy command"),
    "bad option value": ("toy challenge -size=7 alice bob", "-size=7 is not allowed"),
    "unknown option": ("toy challenge -speed=7 alice bob", "has no option -speed"),
    "not your turn": ("toy move 101 alice secret1 a1", "not your turn"),
    "stale guard": ("toy move 101 bob secret2 a1 #1", "guard #1 does not match"),
    "game over": ("toy move 102 bob secret2 a1", "is over"),
    "malformed move": ("toy move 101 bob secret2 zz", "'zz' is not a square"),
    "taken square": ("toy move 101 bob secret2 b2", "b2 is taken"),
    "not a player": ("toy challenge alice bob carol", "played by 2 players"),
    "no such board": ("toy move 555 bob secret2 a1", "no Toy board 555"),
    "signup taken": ("signup alice other1", "is taken"),
    "resign twice": ("toy resign 102 alice secret1", "is over"),
}


@pytest.mark.parametrize("path", list(ERROR_PATHS))
def test_error_path_gives_one_error_mail_and_changes_nothing(toy_boards: Runtime, path: str) -> None:
    subject, says = ERROR_PATHS[path]
    before = snapshot(toy_boards)
    replies = send(toy_boards, "bob@example.org", subject)
    assert snapshot(toy_boards) == before
    assert len(replies) == 1
    recipient, message = replies[0]
    assert recipient == "bob@example.org"
    assert message["Subject"].endswith("Error")
    text = body(message)
    assert says in text
    assert "How to do it right:" in text
    assert "secret2" not in text, "the quoted mail must not repeat the password"


def test_refused_move_shows_the_board_from_the_movers_side(toy_boards: Runtime) -> None:
    [(_, message)] = send(toy_boards, "bob@example.org", "toy move 101 bob secret2 b2")
    assert "2 . X . 2" in body(message)


class CrashingToy(Toy):
    def apply(self, state: ToyState, seat: int, move: ToyMove) -> ToyState:
        if move.square == "a1":
            raise RuntimeError("a bug in the game")
        return super().apply(state, seat, move)


def test_a_crash_applies_nothing_keeps_the_mail_and_answers_once(runtime: Runtime) -> None:
    runtime.processor.catalog = Catalog([CrashingToy()])
    signup(runtime, "alice", "secret1")
    signup(runtime, "bob", "secret2")
    send(runtime, "alice@example.org", "multiple", "toy challenge alice bob\ntoy move 101 alice secret1 b2")
    before = snapshot(runtime)
    replies = send(runtime, "bob@example.org", "multiple", "toy move 101 bob secret2 c3\ntoy move 101 alice secret1 a1")
    assert snapshot(runtime) == before, "the first command of the mail must be rolled back too"
    assert [r for r, _ in replies] == ["bob@example.org"]
    assert "nothing in it was carried out" in body(replies[0][1])
    with runtime.sessions() as session:
        failed = session.scalars(select(InboundMail).where(InboundMail.status == "failed")).one()
        assert "a bug in the game" in failed.error


def test_in_one_batch_each_mail_stands_alone(runtime: Runtime) -> None:
    """Mails processed in one transaction: a crash, a refusal and a success
    between them each have their own outcome and their own answers."""
    runtime.processor.catalog = Catalog([CrashingToy()])
    signup(runtime, "alice", "secret1")
    signup(runtime, "bob", "secret2")
    send(runtime, "alice@example.org", "toy challenge alice bob")
    backend = runtime.backend
    assert isinstance(backend, MemoryBackend)
    backend.sent.clear()
    for sender, subject in [
        ("alice@example.org", "toy move 101 alice secret1 b2"),
        ("bob@example.org", "toy move 101 bob secret2 a1"),  # the game crashes
        ("bob@example.org", "toy move 101 bob wrong c3"),  # refused
        ("bob@example.org", "toy move 101 bob secret2 c3"),
    ]:
        runtime.intake.store(make_mail(sender, subject))
    assert runtime.processor.process_batch(seconds=60) == BatchDone(4, False)
    runtime.delivery.deliver_due()
    with runtime.sessions() as session:
        assert [m.text for m in session.scalars(select(Move).order_by(Move.id))] == ["b2", "c3"]
        outcomes = session.execute(select(InboundMail.status).order_by(InboundMail.id)).scalars().all()[-4:]
    assert outcomes == ["done", "failed", "done", "done"]
    parsed = [BytesParser(policy=policy.default).parsebytes(raw) for _, raw in backend.sent]
    subjects = [message["Subject"] for message in parsed]
    assert subjects == [
        "Toy Board 101", "Toy Board 101", "pbmserv Error", "Toy Board 101 Error",
        "Toy Board 101", "Toy Board 101",
    ]


def test_a_batch_ends_at_its_size_or_time_limit_and_the_rest_waits_in_order(runtime: Runtime) -> None:
    for number in range(5):
        runtime.intake.store(make_mail(f"user{number}@example.org", "help"))
    assert runtime.processor.process_batch(most=2, seconds=60) == BatchDone(2, True)
    assert runtime.processor.process_batch(seconds=0) == BatchDone(1, True), "the time limit ends a batch after the mail at hand"
    assert runtime.processor.process_batch(most=2, seconds=60) == BatchDone(2, True), "a full batch cannot know that it was the last"
    assert runtime.processor.process_batch() == BatchDone(0, False)
    with runtime.sessions() as session:
        assert session.execute(select(InboundMail.status)).scalars().all() == ["done"] * 5


def test_mails_stored_together_are_each_recognised(runtime: Runtime) -> None:
    first, second = make_mail("alice@example.org", "help"), make_mail("bob@example.org", "help")
    [(first_id, _)] = [runtime.intake.store(first)]
    outcomes = runtime.intake.store_many([(second, None, ""), (first, None, ""), (second, None, "")])
    assert outcomes == [(first_id + 1, False), (first_id, True), (first_id + 1, True)]


def test_writers_storing_the_same_mails_at_once_each_store_every_mail_once(
    runtime: Runtime, caplog: pytest.LogCaptureFixture,
) -> None:
    """Four intakes (as of several `serve` processes) store overlapping
    groups of the same mails at the same moment: none fails, whatever the
    interleaving, and each mail is stored once, as new to exactly one of
    them. Nothing alarming is logged meanwhile (a unique-key error inside
    psycopg's pipeline would make it warn)."""
    mails = [make_mail(f"p{n}@example.org", f"signup p{n} secret{n}") for n in range(24)]
    outcomes: list[tuple[int, bool]] = []
    start = threading.Barrier(4)

    def intake(seed: int) -> None:
        order = random.Random(seed).sample(mails, len(mails))
        start.wait()
        for group in range(0, len(order), 4):
            outcomes.extend(runtime.intake.store_many([(raw, None, "") for raw in order[group:group + 4]]))

    threads = [threading.Thread(target=intake, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(outcomes) == 4 * len(mails)
    assert sorted(row_id for row_id, duplicate in outcomes if not duplicate) == sorted({row_id for row_id, _ in outcomes})
    assert [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING] == []
    with runtime.sessions() as session:
        assert session.scalar(select(func.count(InboundMail.id))) == len(mails)


def test_a_board_is_not_written_over_another_writers_change(toy_boards: Runtime) -> None:
    """The version guard of the board's UPDATE."""
    with toy_boards.engine.connect() as connection:
        board = records.find_board(connection, "toy", 101)
        assert board is not None
        connection.execute(update(Board.__table__).where(Board.__table__.c.id == board.id).values(version=board.version + 1))
        with pytest.raises(StaleDataError):
            records.save_board(connection, replace(board, move_count=board.move_count + 1))
        connection.rollback()
    with toy_boards.engine.connect() as connection:
        stored = records.find_board(connection, "toy", 101)
        assert stored is not None and stored.move_count == board.move_count


def test_a_duplicate_delivery_is_applied_once(runtime: Runtime) -> None:
    signup(runtime, "alice", "secret1")
    signup(runtime, "bob", "secret2")
    send(runtime, "alice@example.org", "toy challenge alice bob")
    raw = make_mail("alice@example.org", "toy move 101 alice secret1 b2")
    assert len(send_raw(runtime, raw)) == 2
    before = snapshot(runtime)
    assert send_raw(runtime, raw) == []
    assert snapshot(runtime) == before
    _, duplicate = runtime.intake.store(raw)
    assert duplicate


def test_same_bytes_without_message_id_are_one_mail(runtime: Runtime) -> None:
    raw = b"From: alice@example.org\r\nSubject: signup alice secret1\r\n\r\n\r\n"
    assert len(send_raw(runtime, raw)) == 1
    assert send_raw(runtime, raw) == []


def test_passwords_are_masked_in_stored_mail_and_hashed_with_argon2id(runtime: Runtime) -> None:
    signup(runtime, "alice", "Secret-One")
    send(runtime, "alice@example.org", "multiple", "change password alice Secret-One Second-Two\nhelp")
    with runtime.sessions() as session:
        rows = session.scalars(select(InboundMail)).all()
        for row in rows:
            assert b"Secret-One" not in row.raw and b"Second-Two" not in row.raw
        assert [b"********" in row.raw for row in rows] == [True, False, True]  # the confirming reply holds none
        user = session.scalars(select(User)).one()
        assert user.password_hash.startswith("$argon2id$")
        for row in session.scalars(select(OutboxMail)):
            assert b"Secret-One" not in row.raw and b"Second-Two" not in row.raw


def test_production_password_cost_is_explicit() -> None:
    hashed = Passwords(Settings()).hash("secret1")
    assert hashed.startswith("$argon2id$v=19$m=19456,t=2,p=1$")


@pytest.mark.parametrize(
    "headers",
    [
        {"Auto-Submitted": "auto-replied"},
        {"Precedence": "bulk"},
        {"List-Id": "<players.example.org>"},
        {"X-Auto-Response-Suppress": "All"},
    ],
)
def test_robot_mail_is_never_answered(runtime: Runtime, headers: dict[str, str]) -> None:
    assert send(runtime, "alice@example.org", "help", headers=headers) == []
    with runtime.sessions() as session:
        row = session.scalars(select(InboundMail)).one()
        assert row.status == "dropped" and row.error


def test_bounces_are_never_answered(runtime: Runtime) -> None:
    assert send_raw(runtime, make_mail("mailer-daemon@example.org", "help")) == []
    assert send_raw(runtime, make_mail("alice@example.org", "help"), envelope_sender="") == []


def test_game_rules_errors_reach_the_player_in_their_words(toy_boards: Runtime) -> None:
    class Strict(Toy):
        def read_move(self, state: ToyState, seat: int, text: str) -> ToyMove:
            raise IllegalMove("c3 is a light square: you play on dark squares.")

    toy_boards.processor.catalog = Catalog([Strict()])
    [(_, message)] = send(toy_boards, "bob@example.org", "toy move 101 bob secret2 c3")
    assert "c3 is a light square: you play on dark squares." in body(message)


def test_remembered_password_checks_never_accept_a_wrong_or_changed_password() -> None:
    passwords = Passwords(Settings(password_time_cost=1, password_memory_kib=1024))
    stored = passwords.hash("right-one")
    assert passwords.remembered(stored, "right-one") is None
    assert passwords.verify(stored, "right-one") and passwords.remembered(stored, "right-one") is True
    assert not passwords.verify(stored, "wrong-one") and passwords.remembered(stored, "wrong-one") is False
    changed = passwords.hash("right-one")  # same password, new salt: a new stored hash
    assert passwords.remembered(changed, "right-one") is None and passwords.verify(changed, "right-one")
    assert not passwords.verify(passwords.hash("new-one"), "right-one")


class CountingHasher(PasswordHasher):
    """The real hasher, with the parameters of `hasher`, counting the full checks it makes."""

    def __init__(self, hasher: PasswordHasher):
        super().__init__(
            time_cost=hasher.time_cost, memory_cost=hasher.memory_cost, parallelism=hasher.parallelism,
            hash_len=hasher.hash_len, salt_len=hasher.salt_len, type=hasher.type,
        )
        self.checks = 0

    def verify(self, hash: str | bytes, password: str | bytes) -> Literal[True]:
        self.checks += 1
        return super().verify(hash, password)


def test_a_flood_of_wrong_passwords_from_one_address_costs_few_full_checks(toy_boards: Runtime) -> None:
    passwords = toy_boards.processor.passwords
    hasher = passwords._hasher = CountingHasher(passwords._hasher)
    for attempt in range(3 * guesses.PER_SENDER):
        send(toy_boards, "mallory@example.org", f"toy move 101 bob guess{attempt % 3 if attempt < 3 else attempt} a1")
    assert hasher.checks == guesses.PER_SENDER, "the same wrong password again costs nothing, and then none is checked"


def test_a_guesser_gets_a_clear_answer_and_the_player_is_not_locked_out(toy_boards: Runtime) -> None:
    toy_boards.processor.settings = replace(toy_boards.settings, replies_per_hour=100, error_replies_per_hour=100)
    for attempt in range(guesses.PER_SENDER):
        [(_, message)] = send(toy_boards, "mallory@example.org", f"toy move 101 bob guess{attempt} a1")
        assert "The password for 'bob' is wrong." in body(message)
    [(_, message)] = send(toy_boards, "mallory@example.org", "toy move 101 bob secret2 a1")
    text = " ".join(body(message).split())
    assert "Too many wrong passwords came from mallory@example.org in the last 15 minutes" in text
    assert "send your mail from one of your account's own addresses" in text
    toy_boards.processor.passwords = Passwords(toy_boards.settings)  # a restart: nothing remembered
    replies = send(toy_boards, "bob@example.org", "toy move 101 bob secret2 a1")
    assert replies and all("Error" not in message["Subject"] for _, message in replies)
    assert isinstance(toy_boards.clock, FakeClock)
    toy_boards.clock.advance(minutes=16)
    [(_, message)] = send(toy_boards, "mallory@example.org", "toy move 101 bob guess99 c3")
    assert "The password for 'bob' is wrong." in body(message), "checked again once the window moved on"


def test_answers_to_one_sender_are_capped_per_hour_but_board_mails_are_not(runtime: Runtime) -> None:
    from dataclasses import replace

    runtime.processor.settings = replace(runtime.settings, replies_per_hour=3, error_replies_per_hour=2)
    assert len(send(runtime, "loop@example.org", "help")) == 1
    assert len(send(runtime, "loop@example.org", "nonsense")) == 1
    assert len(send(runtime, "loop@example.org", "nonsense")) == 1
    assert send(runtime, "loop@example.org", "nonsense") == [], "third error in the hour is held back"
    assert send(runtime, "loop@example.org", "help") == [], "fourth answer in the hour is held back"
    with runtime.sessions() as session:
        last = session.scalars(select(InboundMail).order_by(InboundMail.id.desc())).first()
        assert "reached the hourly cap" in last.error
    assert isinstance(runtime.clock, FakeClock)
    runtime.clock.advance(hours=1, minutes=1)
    assert len(send(runtime, "loop@example.org", "help")) == 1
