"""Timers with the fake clock: reminders once per nag period, forfeits rated
like a resignation, custom timers, vacations within their yearly allowance,
`pbmserv-admin cleanup` and the worker of `serve`."""

from __future__ import annotations

import sqlite3
import time
from dataclasses import replace
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path

import pytest
from sqlalchemy import select

from pbmserv.mail.backends import MemoryBackend
from pbmserv.protocol import ParseError, parse_command, parse_request
from pbmserv.protocol.commands import Vacation
from pbmserv.runtime import Runtime
from pbmserv.service.play.board import replay
from pbmserv.service.processing import processor
from pbmserv.store import records
from pbmserv.store.models import Board
from pbmserv.worker import Worker
from tests.conftest import FakeClock
from tests.mailtools import body, make_mail, send, signup
from tests.test_cli import admin, receive, receive_signup


@pytest.mark.parametrize(
    ("text", "expected"),
    [("vacation Alice Pw on", Vacation("alice", "Pw", True)), ("VACATION alice Pw OFF", Vacation("alice", "Pw", False))],
)
def test_vacation_parses(text: str, expected: Vacation) -> None:
    assert parse_command(text, ("toy",)) == expected


@pytest.mark.parametrize("text", ["vacation alice pw", "vacation alice pw maybe", "vacation alice pw on now", "vacation a pw on"])
def test_vacation_refuses(text: str) -> None:
    with pytest.raises(ParseError):
        parse_command(text, ("toy",))


def test_vacation_passwords_are_found() -> None:
    assert parse_request("vacation alice s3cret on", "", []).passwords == ("s3cret",)
    assert parse_request("Re: vacation alice s3cret", "", []).passwords == ("alice", "s3cret")


def cleanup(runtime: Runtime) -> tuple[list[str], list[tuple[str, EmailMessage]]]:
    """One timer pass; returns its report and the mails it sent."""
    backend = runtime.backend
    assert isinstance(backend, MemoryBackend)
    backend.sent.clear()
    report = runtime.processor.run_timers()
    runtime.delivery.deliver_due()
    parser = BytesParser(policy=policy.default)
    return report, [(to, parser.parsebytes(raw)) for to, raw in backend.sent]


def text(message: EmailMessage) -> str:
    """The body as one line: what it says, however it is wrapped."""
    return " ".join(body(message).split())


def days(runtime: Runtime, count: float) -> None:
    assert isinstance(runtime.clock, FakeClock)
    runtime.clock.advance(days=count)


@pytest.fixture
def waiting(runtime: Runtime) -> Runtime:
    """Toy board 101, alice to move since the start."""
    for userid in ("alice", "bob"):
        signup(runtime, userid, f"{userid}-pw")
    send(runtime, "alice@example.org", "toy challenge alice bob")
    return runtime


def test_a_pass_over_more_boards_than_one_transaction_takes_reaches_every_board(
    waiting: Runtime, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The pass takes the boards a few at a time (here two): every late
    board is still reminded or forfeited once, in board order."""
    monkeypatch.setattr(processor, "TIMER_BOARDS_PER_TRANSACTION", 2)
    for _ in range(4):
        send(waiting, "alice@example.org", "toy challenge alice bob")  # boards 102-105
    send(waiting, "alice@example.org", "toy move 103 alice alice-pw a1")  # bob to move there
    days(waiting, 7)
    report, mails = cleanup(waiting)
    assert report == [
        f"toy board {board}: reminded {player} (7 days late)"
        for board, player in [(101, "alice"), (102, "alice"), (103, "bob"), (104, "alice"), (105, "alice")]
    ]
    assert len(mails) == 5
    days(waiting, 14)
    report, _ = cleanup(waiting)
    assert [line.split(":")[0] for line in report] == [f"toy board {board}" for board in range(101, 106)]
    assert all("forfeited" in line for line in report)
    assert cleanup(waiting) == ([], [])


def test_a_late_player_is_reminded_once_per_nag_period(waiting: Runtime) -> None:
    days(waiting, 6.9)
    assert cleanup(waiting) == ([], [])
    days(waiting, 0.1)
    report, mails = cleanup(waiting)
    assert report == ["toy board 101: reminded alice (7 days late)"]
    [(to, nag)] = mails
    assert to == "alice@example.org" and nag["Subject"] == "Toy Board 101" and "Reminder:" in body(nag)
    assert "Without a move by 2026-01-26 09:00 UTC the game is forfeited" in text(nag)
    assert "Toy Board 101: alice (X) vs bob (O)" in body(nag)
    days(waiting, 1)
    assert cleanup(waiting) == ([], [])
    days(waiting, 6)
    assert cleanup(waiting)[0] == ["toy board 101: reminded alice (14 days late)"]


def test_a_move_restarts_the_clock(waiting: Runtime) -> None:
    days(waiting, 7)
    cleanup(waiting)
    send(waiting, "alice@example.org", "toy move 101 alice alice-pw b2")
    days(waiting, 6)
    assert cleanup(waiting) == ([], [])
    days(waiting, 1)
    assert cleanup(waiting)[0] == ["toy board 101: reminded bob (7 days late)"]


def test_a_forfeit_is_a_loss_and_a_server_move(waiting: Runtime) -> None:
    days(waiting, 21)
    report, mails = cleanup(waiting)
    assert report == ["toy board 101: alice did not move within 21 days and forfeited"]
    assert {to for to, _ in mails} == {"alice@example.org", "bob@example.org"}
    final = body(dict(mails)["bob@example.org"])
    assert "Game won by bob: alice did not move within 21 days and forfeited." in final
    assert "Not rated: a board counts once each player has made 2 moves." in final and "1. alice forfeit" in final
    assert cleanup(waiting) == ([], [])
    with waiting.engine.connect() as connection:
        board = records.find_board(connection, "toy", 101)
        assert board is not None
        game = waiting.processor.catalog.get("toy")
        assert game.encode(replay(game, board, records.board_moves(connection, board.id))) == board.state


def test_timers_set_at_challenge(waiting: Runtime) -> None:
    send(waiting, "bob@example.org", "toy challenge --nagtime=1 --forfeittime=2 bob alice")
    days(waiting, 1)
    assert cleanup(waiting)[0] == ["toy board 102: reminded bob (1 day late)"]
    days(waiting, 1)
    assert cleanup(waiting)[0] == ["toy board 102: bob did not move within 2 days and forfeited"]


def test_default_timers_come_from_the_settings(waiting: Runtime) -> None:
    waiting.processor.settings = replace(waiting.processor.settings, nagtime=2, forfeittime=4)
    send(waiting, "bob@example.org", "toy challenge bob alice")
    days(waiting, 2)
    assert cleanup(waiting)[0] == ["toy board 102: reminded bob (2 days late)"]
    days(waiting, 2)
    assert cleanup(waiting)[0] == ["toy board 102: bob did not move within 4 days and forfeited"]


def test_a_vacation_pauses_reminders_and_forfeits(waiting: Runtime) -> None:
    days(waiting, 5)
    [(_, answer)] = send(waiting, "alice@example.org", "vacation alice alice-pw on")
    assert "at the latest on 2026-02-09 09:00 UTC" in text(answer)
    days(waiting, 25)
    assert cleanup(waiting) == ([], [])
    [(_, answer)] = send(waiting, "alice@example.org", "vacation alice alice-pw off")
    assert "5 of the 30 vacation days of the year are left" in text(answer)
    days(waiting, 2)  # 5 days before the vacation and 2 after: late 7 days
    assert cleanup(waiting)[0] == ["toy board 101: reminded alice (7 days late)"]


def test_a_vacation_ends_when_the_allowance_is_used_up(waiting: Runtime) -> None:
    send(waiting, "alice@example.org", "vacation alice alice-pw on")
    days(waiting, 31)
    report, mails = cleanup(waiting)
    assert report == ["vacation of alice ended: allowance used up"]
    assert "vacation days of 2026 are used up" in text(dict(mails)["alice@example.org"])
    [(_, refused)] = send(waiting, "alice@example.org", "vacation alice alice-pw on")
    assert "alice has used all 30 vacation days of 2026." in text(refused)
    days(waiting, 6)  # late since the vacation ended: 7 days
    assert cleanup(waiting)[0] == ["toy board 101: reminded alice (7 days late)"]
    days(waiting, 365)
    [(_, answer)] = send(waiting, "alice@example.org", "vacation alice alice-pw on")
    assert "alice is on vacation from now" in body(answer)


def test_vacation_errors(waiting: Runtime) -> None:
    [(_, refused)] = send(waiting, "alice@example.org", "vacation alice alice-pw off")
    assert body(refused).startswith("alice is not on vacation.")
    send(waiting, "alice@example.org", "vacation alice alice-pw on")
    [(_, refused)] = send(waiting, "alice@example.org", "vacation alice alice-pw on")
    assert body(refused).startswith("alice is on vacation already.")
    [(_, refused)] = send(waiting, "alice@example.org", "vacation alice wrong-pw off")
    assert "vacation alice ******** off" in body(refused) and "wrong-pw" not in body(refused)


def test_admin_cleanup_forfeits_a_late_board(tmp_path: Path) -> None:
    for userid in ("alice", "bob"):
        receive_signup(tmp_path, userid, f"{userid}-pw")
    receive(tmp_path, make_mail("alice@example.org", "toy challenge alice bob"))
    assert admin(tmp_path, "cleanup").splitlines() == ["0 reminder(s), forfeit(s) and vacation end(s)"]
    with sqlite3.connect(tmp_path / "pbmserv.db") as connection:
        connection.execute("UPDATE boards SET updated_at = '2000-01-01 00:00:00.000000'")
    assert admin(tmp_path, "cleanup").splitlines() == [
        "toy board 101: alice did not move within 21 days and forfeited",
        "1 reminder(s), forfeit(s) and vacation end(s)",
    ]


def test_the_worker_runs_the_timers(waiting: Runtime) -> None:
    days(waiting, 21)
    worker = Worker(waiting)
    worker.start()
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with waiting.sessions() as session:
                if session.scalar(select(Board.status)) == "finished":
                    break
            time.sleep(0.05)
    finally:
        worker.stop()
    assert isinstance(waiting.backend, MemoryBackend)
    assert waiting.backend.sent  # the final mails went out
    with waiting.sessions() as session:
        assert session.scalar(select(Board.status)) == "finished"
