"""What the SMTP listener takes from one client and one sender, and while
there is room (issue 35, item 4, F6, and item 6, F11): on a real listener
on loopback, spoken to with smtplib. A 4xx asks the sending MTA to try
again later, so nothing a real MTA sends is lost."""

from __future__ import annotations

import asyncio
import smtplib
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from pbmserv.config import ConfigError, Settings, load_settings
from pbmserv.mail.backends import MemoryBackend
from pbmserv.runtime import Runtime
from pbmserv.smtp_rates import REFUSED_RECIPIENTS
from pbmserv.smtpd import start_listener
from pbmserv.store.models import InboundMail
from tests.mailtools import make_mail
from tests.smtp_helpers import close_server, loop_thread
from tests.test_cli import BIN, env_for
from tests.test_flood_fairness import bobs_reply_address

SERVER = "pbmserv@localhost"


@contextmanager
def listening(runtime: Runtime, **settings: Any) -> Iterator[int]:
    """The listener with these settings on a free loopback port (no worker: what it takes stays stored)."""
    runtime.settings = replace(runtime.settings, **settings)
    runtime.processor.settings = runtime.intake.settings = runtime.settings
    with loop_thread() as loop:
        server = asyncio.run_coroutine_threadsafe(
            start_listener(runtime.intake, threading.Event(), "127.0.0.1", 0), loop,
        ).result(10)
        try:
            yield server.sockets[0].getsockname()[1]
        finally:
            close_server(server, loop)


def client(port: int, source: str = "127.0.0.1") -> smtplib.SMTP:
    session = smtplib.SMTP("127.0.0.1", port, timeout=30, source_address=(source, 0))
    session.ehlo("test.example.org")
    return session


def mail(session: smtplib.SMTP, sender: str, raw: bytes | None = None, options: tuple[str, ...] = ()) -> str:
    """One mail in the session; the first answer that is not a yes, or the last one."""
    code, message = session.mail(sender, list(options))
    if code == 250:
        code, message = session.rcpt(SERVER)
    if code == 250:
        code, message = session.data(raw if raw is not None else make_mail(sender, "help"))
    if code != 250:
        session.rset()
    return f"{code} {message.decode()}"


def guess(number: int) -> str:
    """A reply address of the right shape, as a guesser makes them: each costs a database look-up."""
    return f"pbmserv+toy-{100 + number}-1-abcdefghjkmnpqrs@localhost"


def test_a_sender_past_its_mails_an_hour_is_told_to_try_again_later(runtime: Runtime) -> None:
    with listening(runtime, sender_mails_per_hour=3) as port, client(port) as session:
        answers = [mail(session, "flood@example.org") for _ in range(4)]
        other = mail(session, "player@example.org")
    assert [answer[:3] for answer in answers] == ["250", "250", "250", "451"]
    assert answers[-1].startswith("451 4.7.1 too much mail from <flood@example.org>")
    assert other.startswith("250")


def test_a_forger_spending_a_players_share_holds_up_no_mail_to_the_players_reply_address(toy_boards: Runtime) -> None:
    """The sender's share is anybody's to spend (the envelope sender is not proven); a reply address is proof."""
    bob = "bob@example.org"
    with listening(toy_boards, sender_mails_per_hour=2) as port, client(port) as session:
        forged = [mail(session, bob) for _ in range(3)]
        raw = make_mail(bob, "Re: Toy Board 101 alice", "show\n")
        session.mail(bob)
        taken = session.rcpt(bobs_reply_address(toy_boards))
        answer = session.data(raw)
    assert [answer[:3] for answer in forged] == ["250", "250", "451"]
    assert taken[0] == 250 and answer[0] == 250


def test_a_sender_past_its_bytes_an_hour_is_told_to_try_again_later(runtime: Runtime) -> None:
    def large() -> bytes:  # 250 KB, a mail of its own each time
        return make_mail("flood@example.org", "help", "a line of a large mail, one of many\n" * 7000)

    with listening(runtime, max_message_bytes=300_000, sender_mib_per_hour=1) as port, client(port) as session:
        answers = [mail(session, "flood@example.org", large()) for _ in range(5)]
        declared = mail(session, "flood@example.org", large(), (f"SIZE={len(large())}",))
        small = mail(session, "flood@example.org")
    assert [answer[:3] for answer in answers] == ["250"] * 4 + ["451"]  # 4 x 250 KB of 1 MiB
    assert declared.startswith("451 4.7.1")  # refused at RCPT, before its data is sent
    assert small.startswith("250")
    with runtime.engine.connect() as connection:  # on SQLite in the spool, on PostgreSQL in the database
        stored = connection.scalar(select(func.count(InboundMail.id)))
    assert runtime.intake.spool is not None or stored == 5


def test_a_client_past_its_mails_an_hour_is_told_to_try_again_later_unless_it_is_the_trusted_relay(runtime: Runtime) -> None:
    with listening(runtime, client_mails_per_hour=3, trusted_clients=()) as port:
        with client(port) as session:
            answers = [mail(session, f"stranger{number}@example.org") for number in range(4)]
        with client(port, "127.0.0.2") as session:
            elsewhere = mail(session, "stranger9@example.org")
    assert [answer[:3] for answer in answers] == ["250", "250", "250", "451"]
    assert answers[-1].startswith("451 4.7.1 too much mail from your address 127.0.0.1")
    assert elsewhere.startswith("250")
    relay = Settings().trusted_clients  # by default loopback: the relay in front
    with listening(runtime, client_mails_per_hour=3, trusted_clients=relay) as port, client(port) as session:
        assert [mail(session, f"relayed{number}@example.org")[:3] for number in range(5)] == ["250"] * 5


def test_unknown_recipients_a_client_names_are_limited(runtime: Runtime) -> None:
    """F11: reply addresses were guessed at 277-510 a second, each a look-up."""
    with listening(runtime, trusted_clients=()) as port:
        with client(port) as session:
            session.mail("guesser@example.org")
            answers = [session.rcpt(guess(number)) for number in range(REFUSED_RECIPIENTS + 2)]
            session.rset()
            to_the_server = mail(session, "guesser@example.org")
        with client(port, "127.0.0.2") as session:
            session.mail("other@example.org")
            elsewhere = session.rcpt(guess(0))
    codes = [code for code, _ in answers]
    assert codes == [550] * REFUSED_RECIPIENTS + [450, 450]
    assert answers[-1][1].startswith(b"4.7.1 too many unknown recipients")
    assert to_the_server.startswith("250")  # the server's own address costs no look-up
    assert elsewhere[0] == 550


def test_behind_the_trusted_relay_unknown_recipients_are_limited_by_sender(runtime: Runtime) -> None:
    with listening(runtime) as port, client(port) as session:
        session.mail("guesser@example.org")
        guesser = [session.rcpt(guess(number))[0] for number in range(REFUSED_RECIPIENTS + 1)]
        session.rset()
        session.mail("player@example.org")
        player = session.rcpt(guess(0))[0]
    assert guesser == [550] * REFUSED_RECIPIENTS + [450]
    assert player == 550


def test_intake_refuses_with_452_once_the_database_reaches_its_size_limit(runtime: Runtime) -> None:
    filler = "a line of a large mail, one of many\n" * 7000
    for number in range(6):  # 1.5 MB
        runtime.intake.store(make_mail(f"earlier{number}@example.org", "help", filler))
    with listening(runtime, max_database_mib=1) as port, client(port) as session:
        answer = mail(session, "player@example.org")
    assert answer.startswith("452 4.3.1 mail system full")


@pytest.fixture
def sqlite_runtime(tmp_path: Path, key_file: str) -> Iterator[Runtime]:
    """On SQLite whatever the test database: PostgreSQL's disk is its server's, so only SQLite checks it."""
    settings = replace(Settings(), database_url=f"sqlite:///{tmp_path / 'pbmserv.db'}", key_file=key_file,
                       mail_backend="memory")
    runtime = Runtime(settings, backend=MemoryBackend())
    yield runtime
    runtime.close()


def test_intake_refuses_with_452_before_the_disk_fills(sqlite_runtime: Runtime) -> None:
    assert sqlite_runtime.intake.spool is not None
    with listening(sqlite_runtime, min_free_mib=2**40) as port, client(port) as session:  # a floor no disk here meets
        answer = mail(session, "player@example.org")
    assert answer.startswith("452 4.3.1 mail system full")


def test_receive_exits_75_before_the_disk_fills(tmp_path: Path) -> None:
    raw = make_mail("alice@example.org", "help")
    subprocess.run([BIN / "pbmserv-admin", "db", "upgrade"], env=env_for(tmp_path), cwd=tmp_path, check=True, timeout=60)
    full = subprocess.run([BIN / "pbmserv", "receive"], input=raw, capture_output=True, timeout=60,
                          env=env_for(tmp_path, PBMSERV_MIN_FREE_MIB=str(2**40)), cwd=tmp_path)
    assert full.returncode == 75, full.stderr.decode()
    assert b"mail system full" in full.stderr and b"min_free_mib" in full.stderr
    taken = subprocess.run([BIN / "pbmserv", "receive", "--wait"], input=raw, capture_output=True, timeout=60,
                           env=env_for(tmp_path, PBMSERV_MIN_FREE_MIB="1"), cwd=tmp_path)
    assert taken.returncode == 0, taken.stderr.decode()


@pytest.mark.parametrize(("variable", "value", "said"), [
    ("PBMSERV_INBOUND_DAYS", "6", "kept a week for retry"),
    ("PBMSERV_OUTBOX_DAYS", "1", "count the last day's mail"),
    ("PBMSERV_SENDER_MIB_PER_HOUR", "-1", "no limit"),
    ("PBMSERV_TRUSTED_CLIENTS", "relay.example.org", "addresses or networks"),
])
def test_storage_and_intake_settings_are_checked(variable: str, value: str, said: str) -> None:
    with pytest.raises(ConfigError, match=said):
        load_settings(environ={variable: value})
