"""Bots as players (issue 20): a challenge seats one, its turns are played
outside the worker as mails to its reply address, exactly once, and no
mail is ever sent to it."""

from __future__ import annotations

import signal
import subprocess
import time
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path

from sqlalchemy import select

from pbmserv.mail.backends import MemoryBackend
from pbmserv.runtime import Runtime
from pbmserv.service.bots.queue import play_due_turns
from pbmserv.service.bots.turns import BOT_DOMAIN
from pbmserv.store import records
from pbmserv.store.database import reading
from pbmserv.store.models import InboundMail, OutboxMail
from tests.conftest import FakeClock
from tests.mailtools import body, make_mail, send, signup
from tests.test_cli import BIN, env_for, maildir_mails, receive, receive_signup

ITERATIONS = 50  # a fixed search: the same moves in every run


def sign_up(runtime: Runtime) -> None:
    signup(runtime, "alice", "secret1")


def bot_turns(runtime: Runtime) -> list[tuple[str, EmailMessage]]:
    """`pbmserv bots --once`: the turns due, played; the mails they sent."""
    backend = runtime.backend
    assert runtime.catalog is not None and isinstance(backend, MemoryBackend)
    backend.sent.clear()
    play_due_turns(runtime.engine, runtime.intake, runtime.catalog, runtime.clock, iterations=ITERATIONS)
    runtime.processor.process_pending()
    runtime.delivery.deliver_due()
    parser = BytesParser(policy=policy.default)
    return [(to, parser.parsebytes(raw)) for to, raw in backend.sent]


def moves_of(runtime: Runtime, game: str, board: int = 101) -> list[tuple[int, str]]:
    with reading(runtime.engine) as connection:
        found = records.find_board(connection, game, board)
        assert found is not None
        return [(move.seat, move.text) for move in records.board_moves(connection, found.id)]


def test_a_challenge_seats_the_bot_which_gets_no_mail(runtime: Runtime) -> None:
    sign_up(runtime)
    mails = send(runtime, "alice@example.org", "toy challenge alice bot")
    assert [to for to, _ in mails] == ["alice@example.org"]
    assert "alice (X) vs bot (O)" in body(mails[0][1])
    [(_, strong)] = send(runtime, "alice@example.org", "toy challenge -bot=strong bot alice")
    assert "bot-strong (X) vs alice (O)" in body(strong)


def test_bot_challenges_are_checked(runtime: Runtime) -> None:
    sign_up(runtime)
    [(_, wrong)] = send(runtime, "alice@example.org", "toy challenge -bot=silly alice bot")
    assert "-bot=silly is not a strength" in body(wrong)
    [(_, without)] = send(runtime, "alice@example.org", "toy challenge -bot=easy alice alice2")
    assert "does not name the bot" in " ".join(body(without).split())
    [(_, reserved)] = send(runtime, "mallory@example.org", "signup bot-easy secret1")
    assert "reserved" in body(reserved)


def test_the_bot_moves_by_mail_and_only_once(runtime: Runtime) -> None:
    sign_up(runtime)
    send(runtime, "alice@example.org", "toy challenge alice bot")
    assert bot_turns(runtime) == []  # alice moves first: nothing due
    send(runtime, "alice@example.org", "toy move 101 alice secret1 b2")
    [(to, mail)] = bot_turns(runtime)
    assert to == "alice@example.org" and "It is alice's turn." in body(mail)
    [first, (seat, bot_move)] = moves_of(runtime, "toy")
    assert first == (0, "b2") and seat == 1
    assert bot_turns(runtime) == [] and len(moves_of(runtime, "toy")) == 2  # its turn is over: nothing more
    with runtime.sessions() as session:
        senders = list(session.scalars(select(InboundMail.envelope_sender).where(InboundMail.envelope_sender.like(f"%@{BOT_DOMAIN}"))))
        assert senders == [f"bot@{BOT_DOMAIN}"]
        assert not list(session.scalars(select(OutboxMail.recipient).where(OutboxMail.recipient.like(f"%{BOT_DOMAIN}"))))
    assert bot_move in body(mail)


def test_a_bot_turn_stored_twice_or_thought_out_again_plays_once(runtime: Runtime) -> None:
    """A runner that stops after storing the move (a crash, a restart) and
    one that runs beside it store the same mail, or another move for the
    same turn: one move is played, the other is refused by its guard and
    its answer goes nowhere."""
    from pbmserv.service.bots.turns import due_turns, turn_mail

    sign_up(runtime)
    send(runtime, "alice@example.org", "toy challenge bot alice")
    assert runtime.catalog is not None
    with reading(runtime.engine) as connection:
        [turn] = due_turns(connection, runtime.catalog, runtime.intake.key, runtime.settings.address)
    for move in ("a1", "a1", "c3"):
        runtime.intake.store(turn_mail(turn, move, runtime.clock()), None, turn.reply_to)
    runtime.processor.process_pending()
    runtime.delivery.deliver_due()
    assert moves_of(runtime, "toy") == [(0, "a1")]
    with runtime.sessions() as session:
        outcomes = [(row.status, row.error) for row in session.scalars(
            select(InboundMail).where(InboundMail.envelope_sender == f"bot@{BOT_DOMAIN}").order_by(InboundMail.id)
        )]
    assert [status for status, _ in outcomes] == ["done", "done"]  # the copy was a duplicate, not stored again


def test_timers_never_nag_the_bot(runtime: Runtime, clock: FakeClock) -> None:
    sign_up(runtime)
    send(runtime, "alice@example.org", "toy challenge bot alice")
    clock.advance(days=30)
    assert runtime.processor.run_timers() == []


def test_a_bots_runner_killed_while_thinking_loses_no_turn_and_plays_none_twice(tmp_path: Path) -> None:
    """`pbmserv bots --once` killed (SIGKILL) in the middle of its search,
    then run again: the bot's turn is played exactly once."""
    receive_signup(tmp_path, "alice", "secret1")
    assert receive(tmp_path, make_mail("alice@example.org", "toy challenge -bot=strong bot alice")).returncode == 0
    runner = subprocess.Popen([BIN / "pbmserv", "bots", "--once"], env=env_for(tmp_path), cwd=tmp_path, stderr=subprocess.PIPE)
    time.sleep(2.0)  # imports and the start of the strong bot's search of about 4.5 s
    runner.kill()
    runner.wait(timeout=30)
    assert runner.returncode == -signal.SIGKILL
    again = subprocess.run([BIN / "pbmserv", "bots", "--once"], env=env_for(tmp_path), cwd=tmp_path, capture_output=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert subprocess.run([BIN / "pbmserv", "bots", "--once"], env=env_for(tmp_path), cwd=tmp_path, timeout=120).returncode == 0
    boards = [mail for mail in maildir_mails(tmp_path) if "1. bot-strong" in body(mail)]
    assert [str(mail["Subject"]) for mail in boards] == ["Toy Board 101"]
    assert "1. bot-strong" in body(boards[0]) and "2. " not in body(boards[0])
