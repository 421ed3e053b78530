"""The delivery worker against a real relay on a loopback port."""

from __future__ import annotations

import mailbox
import multiprocessing
import shutil
import socket
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest
from sqlalchemy import select

from pbmserv.config import Settings
from pbmserv.deliverer import Deliverer
from pbmserv.mail.backends import MaildirBackend, MemoryBackend, SmtpBackend
from pbmserv.pipes import Handover, OutcomesPipe
from pbmserv.runtime import Runtime
from pbmserv.service.processing.batches import DeliveryOrder
from pbmserv.store.database import upgrade
from pbmserv.store.models import OutboxMail
from pbmserv.worker import Worker
from tests.conftest import TEST_PASSWORD_COST, FakeClock
from tests.mailtools import signup
from tests.smtp_helpers import ScriptedSink, free_port, smtp_server


def outbox(runtime: Runtime) -> list[OutboxMail]:
    with runtime.sessions() as session:
        return list(session.scalars(select(OutboxMail).order_by(OutboxMail.id)))


def queue_one_reply(runtime: Runtime) -> None:
    runtime.intake.store(b"From: alice@example.org\r\nSubject: help\r\nMessage-ID: <d1@x>\r\n\r\n\r\n")
    runtime.processor.process_pending()


def test_a_451_is_retried_later_and_then_delivered(runtime: Runtime) -> None:
    sink = ScriptedSink(["451 4.3.0 greylisted, try again later"])
    with smtp_server(lambda: sink) as port:
        runtime.delivery.backend = SmtpBackend("127.0.0.1", port)
        queue_one_reply(runtime)
        assert runtime.delivery.deliver_due() == 0
        [row] = outbox(runtime)
        assert row.status == "pending" and row.attempts == 1 and "451" in row.last_error
        assert runtime.delivery.deliver_due() == 0, "not due again before the backoff"
        assert isinstance(runtime.clock, FakeClock)
        runtime.clock.advance(minutes=2)
        assert runtime.delivery.deliver_due() == 1
    [row] = outbox(runtime)
    assert row.status == "sent" and row.attempts == 2
    assert len(sink.accepted) == 1 and b"Subject: pbmserv help" in sink.accepted[0]


def test_a_550_makes_a_dead_letter_at_once(runtime: Runtime) -> None:
    sink = ScriptedSink(["550 5.1.1 no such user"])
    with smtp_server(lambda: sink) as port:
        runtime.delivery.backend = SmtpBackend("127.0.0.1", port)
        queue_one_reply(runtime)
        assert runtime.delivery.deliver_due() == 0
    [row] = outbox(runtime)
    assert row.status == "dead" and row.attempts == 1 and "550" in row.last_error


def test_an_unreachable_relay_is_retried_with_growing_delays_then_given_up(runtime: Runtime) -> None:
    runtime.delivery.backend = SmtpBackend("127.0.0.1", free_port(), timeout=2)
    runtime.delivery.max_attempts = 3
    queue_one_reply(runtime)
    assert isinstance(runtime.clock, FakeClock)
    delays = []
    for _ in range(3):
        before = runtime.clock()
        runtime.delivery.deliver_due()
        [row] = outbox(runtime)
        if row.status == "dead":
            break
        delays.append((row.next_try_at.replace(tzinfo=None) - before.replace(tzinfo=None)).total_seconds())
        runtime.clock.advance(hours=1)
    assert row.status == "dead" and row.attempts == 3
    assert 48 <= delays[0] <= 72 and 96 <= delays[1] <= 144, delays


def test_board_mails_reach_every_player_through_the_relay(runtime: Runtime) -> None:
    sink = ScriptedSink([])
    with smtp_server(lambda: sink) as port:
        signup(runtime, "alice", "secret1")
        signup(runtime, "bob", "secret2")
        runtime.delivery.backend = SmtpBackend("127.0.0.1", port)
        runtime.intake.store(b"From: alice@example.org\r\nSubject: toy challenge alice bob\r\nMessage-ID: <c@x>\r\n\r\n\r\n")
        runtime.processor.process_pending()
        assert runtime.delivery.deliver_due() == 2
    assert sorted(b"To: alice" in m for m in sink.accepted) == [False, True]


class Crash(BaseException):
    """The delivery process dying in the middle of a send."""


class CrashingBackend:
    def send(self, sender: str, recipient: str, raw: bytes, mail_key: str = "") -> None:
        raise Crash

    def close(self) -> None:
        pass


def test_mail_whose_sending_was_cut_off_is_sent_again_once_its_claim_runs_out(runtime: Runtime) -> None:
    sink = ScriptedSink([])
    runtime.delivery.backend = CrashingBackend()
    queue_one_reply(runtime)
    with pytest.raises(Crash):
        runtime.delivery.deliver_due()
    with smtp_server(lambda: sink) as port:
        runtime.delivery.backend = SmtpBackend("127.0.0.1", port)
        assert runtime.delivery.deliver_due() == 0, "claimed by the process that died"
        assert isinstance(runtime.clock, FakeClock)
        runtime.clock.advance(minutes=11)
        assert runtime.delivery.deliver_due() == 1
    [row] = outbox(runtime)
    assert row.status == "sent" and len(sink.accepted) == 1


def test_replies_handed_over_are_sent_at_once_and_by_nobody_else(runtime: Runtime) -> None:
    """In `serve` the worker writes its replies claimed and hands their
    inbound ids to the deliverer: the deliverer sends them at once, and a
    deliverer looking for due mail meanwhile leaves them alone."""
    runtime.intake.store(b"From: alice@example.org\r\nSubject: help\r\nMessage-ID: <h1@x>\r\n\r\n\r\n")
    batch = runtime.processor.process_batch(order=DeliveryOrder())
    [row] = outbox(runtime)
    assert (batch.processed, batch.more, batch.answered) == (1, False, (row.inbound_id,))
    handed = list(batch.answered)
    assert runtime.delivery.deliver_due() == 0
    assert runtime.delivery.deliver_handed_over(handed) == 1
    assert runtime.delivery.deliver_handed_over(handed) == 0, "sent once"
    [row] = outbox(runtime)
    assert row.status == "sent" and row.attempts == 1
    assert isinstance(runtime.backend, MemoryBackend)
    assert [to for to, _ in runtime.backend.sent] == ["alice@example.org"]


def test_replies_whose_hand_over_was_lost_are_sent_when_their_claim_runs_out(runtime: Runtime) -> None:
    runtime.intake.store(b"From: alice@example.org\r\nSubject: help\r\nMessage-ID: <h2@x>\r\n\r\n\r\n")
    runtime.processor.process_batch(order=DeliveryOrder())  # and the deliverer died before it was handed the replies, say
    assert runtime.delivery.deliver_due() == 0
    assert isinstance(runtime.clock, FakeClock)
    runtime.clock.advance(minutes=11)
    assert runtime.delivery.deliver_due() == 1
    [row] = outbox(runtime)
    assert row.status == "sent"


def test_a_batch_goes_to_the_relay_in_one_session(runtime: Runtime) -> None:
    sink = ScriptedSink([])
    with smtp_server(lambda: sink) as port:
        runtime.delivery.backend = SmtpBackend("127.0.0.1", port)
        for number in range(5):
            runtime.intake.store(f"From: p{number}@example.org\r\nSubject: help\r\nMessage-ID: <b{number}@x>\r\n\r\n\r\n".encode())
        runtime.processor.process_pending()
        assert runtime.delivery.deliver_due() == 5
    assert len(sink.accepted) == 5 and len(sink.sessions) == 1


def test_more_sessions_share_a_batch_and_keep_each_recipients_mails_in_order(runtime: Runtime) -> None:
    """Each of three sessions with the relay sends the mails of its share of
    the recipients (by a hash of the address: these three fall in three
    shares), at the same time; a recipient's mails go in one, in order."""
    sink = ScriptedSink([])
    recipients = ["p1@example.org", "p10@example.org", "p0@example.org"]
    with smtp_server(lambda: sink) as port:
        runtime.delivery.backend = SmtpBackend("127.0.0.1", port)
        runtime.delivery.more_sessions = [SmtpBackend("127.0.0.1", port), SmtpBackend("127.0.0.1", port)]
        for turn in range(3):
            for recipient in recipients:
                runtime.intake.store(f"From: {recipient}\r\nSubject: help\r\nMessage-ID: <{turn}-{recipient}>\r\n\r\n\r\n".encode())
        runtime.processor.process_pending()
        assert runtime.delivery.deliver_due() == 9
    assert len(sink.accepted) == 9 and len(sink.sessions) == 3
    for recipient in recipients:
        order = [turn for raw in sink.accepted for turn in range(3) if f"In-Reply-To: <{turn}-{recipient}>".encode() in raw]
        assert order == [0, 1, 2]


def test_a_session_the_relay_closed_is_opened_again(runtime: Runtime) -> None:
    """The relay drops an idle session (here after 1 s): the next mail goes in a new one."""
    sink = ScriptedSink([])
    with smtp_server(lambda: sink, timeout=1) as port:
        backend = SmtpBackend("127.0.0.1", port)
        backend.send("pbmserv@localhost", "alice@example.org", b"Subject: one\r\n\r\nfirst\r\n")
        time.sleep(1.5)
        backend.send("pbmserv@localhost", "alice@example.org", b"Subject: two\r\n\r\nsecond\r\n")
        backend.close()
    assert len(sink.accepted) == 2 and len(sink.sessions) == 2


def test_with_the_relay_not_answering_a_batch_waits_for_it_once(runtime: Runtime) -> None:
    """A relay that takes the connection but never greets: the first mail
    waits out the timeout (1 s), the rest of the batch fails at once."""
    with socket.create_server(("127.0.0.1", 0)) as silent:
        runtime.delivery.backend = SmtpBackend("127.0.0.1", silent.getsockname()[1], timeout=1)
        for number in range(4):
            runtime.intake.store(f"From: p{number}@example.org\r\nSubject: help\r\nMessage-ID: <u{number}@x>\r\n\r\n\r\n".encode())
        runtime.processor.process_pending()
        started = time.monotonic()
        assert runtime.delivery.deliver_due() == 0
        assert time.monotonic() - started < 2, "one timeout, not one for each mail"
    assert {(row.status, row.attempts) for row in outbox(runtime)} == {("pending", 1)}


def queue_replies(runtime: Runtime, count: int) -> None:
    for number in range(count):
        runtime.intake.store(
            f"From: player{number}@example.org\r\nSubject: help\r\nMessage-ID: <m{number}@x>\r\n\r\n\r\n".encode()
        )
    runtime.processor.process_pending()


def test_a_batch_lands_in_the_maildir_whole_and_only_when_it_is_safe(runtime: Runtime, tmp_path: Path) -> None:
    """The maildir backend writes a batch into tmp/ and moves it into new/
    at the end, after one sync: a reader sees every mail whole or none,
    its lines ending in LF as a maildir's do."""
    maildir = tmp_path / "outbox"
    backend = runtime.delivery.backend = MaildirBackend(maildir)
    backend.send("pbmserv@localhost", "alice@example.org", b"Subject: one\r\n\r\nfirst\r\n")
    backend.send("pbmserv@localhost", "bob@example.org", b"Subject: two\r\n\r\nsecond\r\n")
    assert len(list((maildir / "tmp").iterdir())) == 2 and not list((maildir / "new").iterdir())
    backend.close()
    assert not list((maildir / "tmp").iterdir())
    box = mailbox.Maildir(maildir, create=False)
    assert sorted(box.get_bytes(key) for key in box.keys()) == [b"Subject: one\n\nfirst\n", b"Subject: two\n\nsecond\n"]

    queue_replies(runtime, 3)
    assert runtime.delivery.deliver_due() == 3
    assert [row.status for row in outbox(runtime)] == ["sent"] * 3
    delivered = [message["To"] for message in mailbox.Maildir(maildir, create=False) if message["To"]]
    assert sorted(delivered) == [f"player{n}@example.org" for n in range(3)]


def test_a_mail_already_in_the_maildir_is_not_written_again_when_its_row_is_tried_again(
    runtime: Runtime, tmp_path: Path,
) -> None:
    """A crash after the mail reached the maildir and before its row was
    marked sent used to leave the row pending, and its next try wrote the
    mail a second time (after SIGKILLs of serve, 40 signups got 41
    replies). The file is now named by the row, and the next try finds it,
    in new/ or, read by then, in cur/."""
    maildir = tmp_path / "outbox"
    runtime.delivery.backend = MaildirBackend(maildir)
    queue_replies(runtime, 3)
    assert runtime.delivery.deliver_due() == 3
    first = sorted(path.name for path in (maildir / "new").iterdir())
    read = first[0]
    (maildir / "new" / read).rename(maildir / "cur" / f"{read}:2,S")  # a mail client read one
    with runtime.engine.begin() as connection:  # as if the crash came before the outcomes were written
        connection.execute(OutboxMail.__table__.update().values(status="pending", attempts=0))
    assert isinstance(runtime.clock, FakeClock)
    runtime.clock.advance(minutes=11)  # past the claim of the deliverer that died
    assert runtime.delivery.deliver_due() == 3
    assert sorted(path.name for path in (maildir / "new").iterdir()) == first[1:]
    assert [path.name for path in (maildir / "cur").iterdir()] == [f"{read}:2,S"]
    assert not list((maildir / "tmp").iterdir())
    assert [row.status for row in outbox(runtime)] == ["sent"] * 3


def test_maildir_names_follow_the_queue_and_tell_servers_apart(tmp_path: Path) -> None:
    """Named by the outbox row, files sort in the order the mails were
    queued; a row of the same number from another database (a server
    started over into the same maildir) has another Message-ID, so another name."""
    backend = MaildirBackend(tmp_path / "outbox")
    for key in ("9.<a@x>", "10.<b@x>", "9.<c@y>"):
        backend.send("pbmserv@localhost", "alice@example.org", f"Subject: {key}\r\n\r\n".encode(), key)
    backend.close()
    names = sorted(path.name for path in (tmp_path / "outbox" / "new").iterdir())
    assert len(names) == 3 and [name[:12] for name in names] == ["000000000009", "000000000009", "000000000010"]


def test_a_batch_the_maildir_could_not_make_safe_is_tried_again_whole(runtime: Runtime, tmp_path: Path) -> None:
    maildir = tmp_path / "outbox"
    runtime.delivery.backend = VanishingMaildir(maildir)
    queue_replies(runtime, 3)
    assert runtime.delivery.deliver_due() == 0
    rows = outbox(runtime)
    assert [(row.status, row.attempts) for row in rows] == [("pending", 1)] * 3
    assert all("maildir" in row.last_error for row in rows)
    assert not (maildir / "new").exists() or not list((maildir / "new").iterdir())

    runtime.delivery.backend = MaildirBackend(maildir)
    assert isinstance(runtime.clock, FakeClock)
    runtime.clock.advance(minutes=2)
    assert runtime.delivery.deliver_due() == 3
    assert len(list(mailbox.Maildir(maildir, create=False))) == 3


class VanishingMaildir(MaildirBackend):
    """A maildir whose folder is taken away after the mails are written (a
    disk unmounted, say): nothing can be made safe."""

    def close(self) -> None:
        shutil.rmtree(self.path)
        super().close()


@pytest.fixture
def sqlite_runtime(tmp_path: Path) -> Iterator[Runtime]:
    """A runtime on a SQLite file of its own with a short busy timeout,
    delivering into a maildir."""
    url = f"sqlite:///{tmp_path / 'delivery.db'}"
    upgrade(url)
    settings = replace(
        Settings(), database_url=url, database_busy_seconds=0.3, poll_seconds=0, **TEST_PASSWORD_COST,
    )
    runtime = Runtime(settings, clock=FakeClock(), backend=MaildirBackend(tmp_path / "outbox"))
    yield runtime
    runtime.close()


@contextmanager
def another_writer(database: str) -> Iterator[None]:
    """Another program inside a write transaction on the SQLite file: it
    holds SQLite's write lock (a long mail in the worker, say)."""
    connection = sqlite3.connect(database, isolation_level=None)
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        connection.rollback()
        connection.close()


def serving_pair(runtime: Runtime) -> tuple[Worker, Deliverer]:
    """`serve`'s worker and deliverer, with the pipes between them, run round by round here."""
    context = multiprocessing.get_context("spawn")
    handover, outcomes = Handover(context), OutcomesPipe(context)
    return Worker(runtime, deliver=handover, outcomes=outcomes), Deliverer(runtime, handover, outcomes)


def store_help_mails(runtime: Runtime, first: int, count: int = 3) -> None:
    for number in range(first, first + count):
        runtime.intake.store(f"From: p{number}@example.org\r\nSubject: help\r\nMessage-ID: <w{number}@x>\r\n\r\n\r\n".encode())


def delivered(tmp_path: Path) -> list[str]:
    return sorted(message["To"] for message in mailbox.Maildir(tmp_path / "outbox", create=False))


def test_the_deliverer_writes_nothing_and_the_worker_writes_how_each_mail_went(
    sqlite_runtime: Runtime, tmp_path: Path,
) -> None:
    """In `serve` on SQLite the worker is the database's one writer: the
    deliverer sends what was handed over, even while another program holds
    the database, and hands back how it went; the worker writes that with
    its next batch."""
    worker, deliverer = serving_pair(sqlite_runtime)
    database = sqlite_runtime.settings.database_url.removeprefix("sqlite:///")
    store_help_mails(sqlite_runtime, 0)
    worker.work_round()
    with another_writer(database):
        deliverer.work_round()
    assert delivered(tmp_path) == [f"p{number}@example.org" for number in range(3)]
    assert [(row.status, row.attempts) for row in outbox(sqlite_runtime)] == [("pending", 0)] * 3
    worker.work_round()
    assert [(row.status, row.attempts) for row in outbox(sqlite_runtime)] == [("sent", 1)] * 3
    assert isinstance(sqlite_runtime.clock, FakeClock)
    sqlite_runtime.clock.advance(minutes=11)  # every claim has run out
    worker.work_round()
    deliverer.work_round()
    assert len(delivered(tmp_path)) == 3, "sent once"


def test_a_mail_whose_outcome_the_worker_never_wrote_is_sent_again_never_lost(
    sqlite_runtime: Runtime, tmp_path: Path,
) -> None:
    """The deliverer sends and hands back how it went, and the worker stops
    (is killed) before it writes that: once the claim runs out the mail is
    claimed and sent again; the maildir finds it has the mail already and
    does not write it twice (a relay by SMTP would get it twice: at least
    once). (In `serve` claims name their holder, and this takes seconds:
    tests/test_claims.py.)"""
    worker, deliverer = serving_pair(sqlite_runtime)
    store_help_mails(sqlite_runtime, 0, count=1)
    worker.work_round()
    deliverer.work_round()
    assert worker.outcomes is not None and len(worker.outcomes.take()) == 1  # taken by a worker that died then
    worker.work_round()
    assert [(row.status, row.attempts) for row in outbox(sqlite_runtime)] == [("pending", 0)]
    assert isinstance(sqlite_runtime.clock, FakeClock)
    sqlite_runtime.clock.advance(minutes=11)
    sqlite_runtime.delivery = replace(sqlite_runtime.delivery)  # a new deliverer: it knows nothing it sent
    worker, deliverer = serving_pair(sqlite_runtime)  # after a restart, with claims that name no holder
    worker.work_round()  # claims the mail, due again, for the deliverer
    deliverer.work_round()
    worker.work_round()
    assert delivered(tmp_path) == ["p0@example.org"]
    assert [(row.status, row.attempts) for row in outbox(sqlite_runtime)] == [("sent", 1)]


def test_a_worker_stopping_writes_what_the_deliverer_handed_back_last(sqlite_runtime: Runtime, tmp_path: Path) -> None:
    worker, deliverer = serving_pair(sqlite_runtime)
    store_help_mails(sqlite_runtime, 0, count=2)
    worker.work_round()
    deliverer.work_round()
    worker.stop()
    worker.run()
    assert [(row.status, row.attempts) for row in outbox(sqlite_runtime)] == [("sent", 1)] * 2
