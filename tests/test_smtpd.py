"""pbmserv's SMTP listener on a real loopback socket, spoken to with smtplib."""

from __future__ import annotations

import asyncio
import smtplib
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select, text
from sqlalchemy.engine import make_url

from pbmserv.config import Settings
from pbmserv.runtime import Runtime
from pbmserv.smtpd import start_listener
from pbmserv.store.models import InboundMail
from tests.mailtools import make_mail, read_maildir
from tests.smtp_helpers import close_server, loop_thread


def wait_for_mail(maildir: Path, count: int, timeout: float = 10.0) -> list[bytes]:
    deadline = time.monotonic() + timeout
    found = read_maildir(maildir)
    while len(found) < count and time.monotonic() < deadline:
        time.sleep(0.05)
        found = read_maildir(maildir)
    return found


def settle(runtime: Runtime, timeout: float = 10.0) -> None:
    """Wait until no inbound mail is pending."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with runtime.sessions() as session:
            if session.scalar(select(InboundMail.id).where(InboundMail.status == "pending")) is None:
                return
        time.sleep(0.05)
    raise AssertionError("inbound mail still pending")


def inbound_rows(runtime: Runtime) -> list[InboundMail]:
    with runtime.sessions() as session:
        return list(session.scalars(select(InboundMail).order_by(InboundMail.id)))


def test_a_mail_gets_its_reply_in_the_maildir(listener: tuple[int, Path], runtime: Runtime) -> None:
    port, maildir = listener
    with smtplib.SMTP("127.0.0.1", port, timeout=10) as client:
        code, _ = client.noop()
        assert code == 250
        client.sendmail("alice@example.org", ["pbmserv@localhost"], make_mail("alice@example.org", "signup alice secret1"))
    [reply] = wait_for_mail(maildir, 1)
    assert b"Subject: confirm alice " in reply


def test_mail_for_other_addresses_is_refused_with_550(listener: tuple[int, Path]) -> None:
    port, _ = listener
    with smtplib.SMTP("127.0.0.1", port, timeout=10) as client:
        client.ehlo()
        code, message = client.rcpt("someone@elsewhere.example") if client.mail("a@example.org") else (0, b"")
        assert code == 550 and b"no such mailbox" in message


def test_oversize_mail_is_refused_with_552(listener: tuple[int, Path], runtime: Runtime) -> None:
    port, _ = listener
    big = make_mail("alice@example.org", "help", "x" * 30_000)
    with smtplib.SMTP("127.0.0.1", port, timeout=10) as client:
        with pytest.raises(smtplib.SMTPResponseException) as refused:
            client.sendmail("alice@example.org", ["pbmserv@localhost"], big)
    assert refused.value.smtp_code == 552
    assert inbound_rows(runtime) == []


def test_a_second_delivery_is_acknowledged_and_not_applied(listener: tuple[int, Path], runtime: Runtime) -> None:
    port, maildir = listener
    mail = make_mail("alice@example.org", "signup alice secret1")
    with smtplib.SMTP("127.0.0.1", port, timeout=10) as client:
        client.sendmail("alice@example.org", ["pbmserv@localhost"], mail)
        client.sendmail("alice@example.org", ["pbmserv@localhost"], mail)
    wait_for_mail(maildir, 1)
    settle(runtime)
    time.sleep(0.5)
    assert len(wait_for_mail(maildir, 1)) == 1
    assert [row.status for row in inbound_rows(runtime)] == ["done"]


def test_mails_arriving_together_are_stored_together_each_once(listener: tuple[int, Path], runtime: Runtime) -> None:
    """Twelve sessions at once (the same mail among them twice): every one
    gets its 250, each distinct mail is stored and answered once."""
    port, maildir = listener
    mails = [make_mail(f"p{n}@example.org", f"signup p{n} secret{n}") for n in range(10)]
    mails += [mails[0], mails[1]]
    answers: list[int] = []

    def deliver(raw: bytes) -> None:
        with smtplib.SMTP("127.0.0.1", port, timeout=10) as client:
            client.ehlo()
            client.mail("sender@example.org")
            client.rcpt("pbmserv@localhost")
            answers.append(client.data(raw)[0])

    threads = [threading.Thread(target=deliver, args=(raw,)) for raw in mails]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == [250] * 12
    settle(runtime)
    assert len(wait_for_mail(maildir, 10)) == 10
    assert [row.status for row in inbound_rows(runtime)] == ["done"] * 10


@contextmanager
def writer_lock_held(path: str) -> Iterator[None]:
    """Another writer inside a transaction on the SQLite file `path`: it holds SQLite's write lock."""
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("PRAGMA journal_mode=WAL")  # as the database and the spool run
        holder.execute("BEGIN IMMEDIATE")
        yield
    finally:
        holder.rollback()
        holder.close()


@contextmanager
def intake_store_locked(database_url: str) -> Iterator[None]:
    """Another program holding the lock intake needs to store a mail: on
    SQLite the arrival spool's, on PostgreSQL a lock on inbound_mails."""
    url = make_url(database_url)
    if url.get_backend_name() == "sqlite":
        with writer_lock_held(f"{url.database}-spool"):
            yield
        return
    engine = create_engine(database_url)
    try:
        with engine.begin() as connection:
            connection.execute(text("LOCK TABLE inbound_mails IN ACCESS EXCLUSIVE MODE"))
            yield
    finally:
        engine.dispose()


def test_intake_answers_451_when_the_mail_cannot_be_stored(database_url: str, key_file: str) -> None:
    """Another writer holds what intake stores into past the busy timeout: the mail is
    not safe with us, so the sending server is told to try again, and it is
    told within the timeout rather than left waiting."""
    settings = Settings(database_url=database_url, mail_backend="memory", database_busy_seconds=1.0, key_file=key_file)
    runtime = Runtime(settings)
    with loop_thread() as loop, intake_store_locked(database_url):
        server = asyncio.run_coroutine_threadsafe(start_listener(runtime.intake, threading.Event(), "127.0.0.1", 0), loop).result(10)
        started = time.monotonic()
        with smtplib.SMTP("127.0.0.1", server.sockets[0].getsockname()[1], timeout=30) as client:
            with pytest.raises(smtplib.SMTPDataError) as refused:
                client.sendmail("alice@example.org", ["pbmserv@localhost"], make_mail("alice@example.org", "help"))
        waited = time.monotonic() - started
        close_server(server, loop)
    assert refused.value.smtp_code == 451
    assert 0.9 <= waited < 20, waited
    assert inbound_rows(runtime) == []
    runtime.close()


LOOP_RULES = {
    "auto-submitted": ({"Auto-Submitted": "auto-generated"}, "alice@example.org", "Auto-Submitted"),
    "auto-replied": ({"Auto-Submitted": "auto-replied"}, "alice@example.org", "Auto-Submitted"),
    "empty return path": ({}, "", "empty return path"),
    "precedence bulk": ({"Precedence": "bulk"}, "alice@example.org", "Precedence: bulk"),
    "precedence junk": ({"Precedence": "junk"}, "alice@example.org", "Precedence: junk"),
    "precedence list": ({"Precedence": "list"}, "alice@example.org", "Precedence: list"),
    "list-id": ({"List-Id": "Players <players.example.org>"}, "alice@example.org", "List-Id"),
    "x-auto-response-suppress": ({"X-Auto-Response-Suppress": "OOF"}, "alice@example.org", "X-Auto-Response-Suppress"),
    "mailer-daemon": ({}, "MAILER-DAEMON@example.org", "mailer-daemon@example.org"),
    "postmaster": ({}, "postmaster@example.org", "postmaster@example.org"),
}


@pytest.mark.parametrize("rule", list(LOOP_RULES))
def test_loop_protection(listener: tuple[int, Path], runtime: Runtime, rule: str) -> None:
    port, maildir = listener
    headers, envelope_sender, reason = LOOP_RULES[rule]
    author = envelope_sender or "alice@example.org"
    with smtplib.SMTP("127.0.0.1", port, timeout=10) as client:
        client.sendmail(envelope_sender, ["pbmserv@localhost"], make_mail(author, "help", headers=headers))
        client.sendmail("bob@example.org", ["pbmserv@localhost"], make_mail("bob@example.org", "help"))
    replies = wait_for_mail(maildir, 1)
    settle(runtime)
    time.sleep(0.3)
    assert [b"To: bob@example.org" in r for r in wait_for_mail(maildir, 1)] == [True], "only the ordinary mail is answered"
    dropped, answered = inbound_rows(runtime)
    assert dropped.status == "dropped" and reason in dropped.error
    assert answered.status == "done"
    assert replies


def test_the_handover_pipe_carries_ids_and_never_blocks_its_writer() -> None:
    import multiprocessing

    from pbmserv.pipes import Handover

    handover = Handover(multiprocessing.get_context("spawn"))
    assert not handover.wait(0) and handover.take() == ([], [])
    handover.send([3, 4], [7])
    handover.send(list(range(10, 1010)))  # more than one line
    assert handover.wait(0)
    assert handover.take() == ([3, 4, *range(10, 1010)], [7])
    started = time.monotonic()
    for _ in range(200):  # nobody reads: the pipe fills up, and the rest is dropped at once
        handover.send(list(range(1000, 1400)))
    assert time.monotonic() - started < 2
    taken, _ = handover.take()
    assert 0 < len(taken) < 200 * 400 and len(taken) % 400 == 0, "whole lines only"


def test_the_outcomes_pipe_keeps_what_does_not_fit_for_later() -> None:
    import multiprocessing
    from datetime import UTC, datetime

    from pbmserv.pipes import OutcomesPipe

    pipe = OutcomesPipe(multiprocessing.get_context("spawn"))
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    last_error = "451 ü" * 400
    outcome = {"row_id": 1, "status": "pending", "attempts": 2, "last_error": last_error, "next_try_at": when}
    left = pipe.send([outcome] * 1000)
    assert 0 < len(left) < 1000
    taken = pipe.take()
    assert len(taken) + len(left) == 1000
    assert taken[0] == {**outcome, "last_error": last_error[:OutcomesPipe.ERROR_CHARS]}
