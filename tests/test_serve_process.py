"""`pbmserv serve` as real processes: a SIGKILL right after 250 loses
nothing and applies nothing twice, and two processes on one database never
apply the same mail or two moves at one move number."""

from __future__ import annotations

import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session

from pbmserv.store.models import Board, InboundMail, Move, OutboxMail, User
from tests.mailtools import make_mail
from tests.serve_helpers import ServeProcess, child_pids, count, wait_until


def test_sigkill_right_after_250_loses_nothing_and_applies_once(database_url: str, tmp_path: Path) -> None:
    server = ServeProcess(database_url, tmp_path).start()
    mail = make_mail("alice@example.org", "signup alice secret1")
    try:
        server.send(mail, "alice@example.org")
        server.kill()  # at once: the mail may not be processed yet
        server.start()
        wait_until(lambda: count(database_url, InboundMail.id, InboundMail.status == "done") == 1)
        server.send(mail, "alice@example.org")  # the client retries: acknowledged, not applied
        wait_until(lambda: len(server.mails()) >= 1)
        time.sleep(1)
    finally:
        server.stop()
    assert count(database_url, User.id) == 1
    assert count(database_url, InboundMail.id) == 1
    assert count(database_url, InboundMail.id, InboundMail.status == "done") == 1
    assert count(database_url, OutboxMail.id) == 1
    assert any(b"Subject: confirm alice " in m for m in server.mails())


def test_pending_mail_left_by_a_crash_is_processed_at_start(database_url: str, tmp_path: Path) -> None:
    from pbmserv.config import Settings
    from pbmserv.runtime import Runtime
    from pbmserv.service.processing.catalog import Catalog

    settings = Settings(database_url=database_url, key_file=str(tmp_path / "pbmserv.key"), mail_backend="memory")
    runtime = Runtime(settings, catalog=Catalog([]))
    for number in range(3):
        runtime.intake.store(make_mail(f"p{number}@example.org", f"signup player{number} secret1"))
    runtime.close()
    server = ServeProcess(database_url, tmp_path).start()
    try:
        wait_until(lambda: len(server.mails()) == 3)
    finally:
        server.stop()
    assert count(database_url, User.id) == 3


def test_two_processes_never_apply_a_mail_twice_nor_two_moves_at_one_number(database_url: str, tmp_path: Path) -> None:
    first = ServeProcess(database_url, tmp_path, "first").start()
    # either serve's deliverer may send any reply: one maildir holds them all
    second = ServeProcess(database_url, tmp_path, "second", outbox=first.maildir).start()
    boards = 6
    try:
        first.signup("alice", "secret1")
        first.signup("bob", "secret2")
        setup = [make_mail("alice@example.org", "toy challenge alice bob") for _ in range(boards)]
        for mail in setup:
            first.send(mail)
        wait_until(lambda: count(database_url, Board.id) == boards, 30.0, first, second)
        races = []
        for board in range(101, 101 + boards):
            same = make_mail("alice@example.org", f"toy move {board} alice secret1 b2")
            races += [(first, same), (second, same)]  # one mail delivered to both processes
            races += [
                (first, make_mail("alice@example.org", f"toy move {board} alice secret1 a1 #1")),
                (second, make_mail("alice@example.org", f"toy move {board} alice secret1 c3 #1")),
            ]
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda job: job[0].send(job[1]), races))
        # every mail has its 250, but on SQLite it may still wait in the spool, not yet pending
        stored = 4 + len(setup) + 3 * boards  # the signups and their confirmations too
        wait_until(lambda: count(database_url, InboundMail.id, InboundMail.status != "pending") >= stored, 30.0, first, second)
    finally:
        try:
            first.stop()
        finally:
            second.stop()
    assert count(database_url, InboundMail.id) == stored, "the mail sent to both is stored once"
    assert count(database_url, Move.id) == boards, "exactly one first move per board"
    engine = create_engine(database_url)
    with Session(engine) as session:
        numbers = session.execute(select(Move.board_id, Move.number)).all()
    engine.dispose()
    assert sorted(numbers) == sorted({(board_id, 1) for board_id, _ in numbers})


def test_serve_plays_the_bot_once_though_its_processes_are_killed_while_it_thinks(database_url: str, tmp_path: Path) -> None:
    """The strong bot thinks for seconds: every child of `serve` (the bots'
    process, the worker, the deliverer) is killed in the middle of it. The
    new ones play the bot's turn, once."""
    server = ServeProcess(database_url, tmp_path).start()
    try:
        server.signup("alice", "secret1")
        server.send(make_mail("alice@example.org", "toy challenge -bot=strong bot alice"), "alice@example.org")
        wait_until(lambda: len(server.mails()) == 3)  # the welcome, the confirmation, the new board
        time.sleep(1.5)  # the bot is thinking
        for pid in server.children(3):
            os.kill(pid, signal.SIGKILL)
        wait_until(lambda: len(server.mails()) == 4, 60)
        time.sleep(2 * 0.2 + 1)  # a second move would come within a few polls
    finally:
        server.stop()
    assert count(database_url, Move.id) == 1
    assert len(server.mails()) == 4 and any(b"1. bot-strong" in mail for mail in server.mails())


def test_killed_worker_and_delivery_processes_are_replaced_and_smtp_never_hangs(database_url: str, tmp_path: Path) -> None:
    server = ServeProcess(database_url, tmp_path).start()
    try:
        assert server.process is not None
        serve_pid = server.process.pid
        killed = server.children(3)  # the worker, the deliverer, the bots
        for pid in killed:
            os.kill(pid, signal.SIGKILL)
        started = time.monotonic()
        server.send(make_mail("alice@example.org", "signup alice secret1"), "alice@example.org")
        assert time.monotonic() - started < 5, "intake must not wait for the dead processes"
        wait_until(lambda: len(server.mails()) == 1)  # the watchdog's new processes answer
        assert not set(child_pids(serve_pid)) & set(killed)
        server.process.terminate()
        server.process.wait(timeout=15)
    finally:
        server.stop()
    assert "stopped" in server.log.read_text()


def test_a_mail_the_worker_cannot_finish_is_given_up_and_the_others_go_on(database_url: str, tmp_path: Path) -> None:
    """A game bug makes one move run for ever: the watchdog kills the
    worker after `stuck_seconds`, marks that mail failed with an apology,
    and the new worker answers the mail behind it."""
    server = ServeProcess(
        database_url, tmp_path, PBMSERV_STUCK_SECONDS="2",
        PBMSERV_EXTRA_GAMES="tests.toygame:Toy,tests.toygame:Stuck",
    ).start()
    try:
        server.signup("alice", "secret1")
        server.signup("bob", "secret2")
        server.send(make_mail("alice@example.org", "stuck challenge alice bob"), "alice@example.org")
        wait_until(lambda: count(database_url, Board.id) == 1)
        server.send(make_mail("alice@example.org", "stuck move 101 alice secret1 forever"), "alice@example.org")
        server.send(make_mail("bob@example.org", "help"), "bob@example.org")
        wait_until(lambda: count(database_url, InboundMail.id, InboundMail.status == "pending") == 0, timeout=60)
        wait_until(lambda: any(b"nothing in it was carried out" in mail for mail in server.mails()))
        wait_until(lambda: any(b"To: bob@example.org" in mail for mail in server.mails()))
    finally:
        server.stop()
    assert count(database_url, InboundMail.id, InboundMail.status == "failed") == 1
    assert count(database_url, InboundMail.id, InboundMail.error.contains("given up")) == 1
    assert count(database_url, Move.id) == 0, "nothing of the stuck move was applied"
    apology = next(mail for mail in server.mails() if b"nothing in it was carried out" in mail)
    assert b"To: alice@example.org" in apology and b"secret1" not in apology
    assert "restarting it" in server.log.read_text()


LISTENER_IMPORTS = """
import sys
from pbmserv.cli import main
from pbmserv.config import Settings
from pbmserv.supervisor import listening_intake

intake = listening_intake(Settings(database_url=sys.argv[1], key_file=sys.argv[2], extra_games=("tests.toygame:Toy",)))
intake.accept([(sys.stdin.buffer.read(), "alice@example.org")])
loaded = [name for name in sys.modules if name.split(".")[0] in ("games", "tests") or name.endswith(".catalog")]
print(" ".join(loaded) or "none")
"""


def test_the_listening_process_loads_no_game(tmp_path: Path) -> None:
    """`serve`'s listener stores mail without a game loaded (nor the game
    catalog); a mail that holds a password is still sealed, also for a game
    that only `[games] extra` names."""
    import subprocess
    import sys

    from pbmserv.store.database import upgrade

    sqlite_url = f"sqlite:///{tmp_path / 'pbmserv.db'}"
    upgrade(sqlite_url)
    mail = make_mail("alice@example.org", "toy move 1 alice Zq7-secret a1")
    found = subprocess.run(
        [sys.executable, "-c", LISTENER_IMPORTS, sqlite_url, str(tmp_path / "pbmserv.key")],
        input=mail, capture_output=True, check=True, cwd=Path(__file__).parent.parent,
    )
    assert found.stdout.split() == [b"none"], found.stderr.decode()
    spooled = [path for path in tmp_path.iterdir() if path.name.startswith("pbmserv.db-spool")]
    assert spooled and not [path for path in spooled if b"Zq7-secret" in path.read_bytes()]
    assert any(b"toy move" in path.read_bytes() for path in spooled), "stored, the Subject masked"


def test_sighup_is_logged_and_serving_goes_on(database_url: str, tmp_path: Path) -> None:
    """Before, SIGHUP (an operator's "reload", or the hangup of the terminal
    serve was started from, sent to its whole process group) ended serve and
    its children without a log line."""
    server = ServeProcess(database_url, tmp_path).start()
    try:
        children = server.children(3)
        assert server.process is not None
        os.killpg(server.process.pid, signal.SIGHUP)  # as a terminal's hangup: serve and every child
        wait_until(lambda: "got SIGHUP and goes on serving" in server.log.read_text(), 30.0, server)
        server.signup("alice", "secret1")  # the mail is still answered, by the same children
        assert server.process.poll() is None and server.children(3) == children
    finally:
        server.stop()
    assert server.process.returncode == 0
