"""The arrival spool on SQLite: SMTP intake commits there without waiting
for the database's write lock, and the worker moves each mail into the
database exactly once."""

from __future__ import annotations

import asyncio
import smtplib
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from sqlalchemy import ColumnElement, func, select

from pbmserv.config import Settings
from pbmserv.mail.backends import MaildirBackend, MemoryBackend
from pbmserv.runtime import Runtime
from pbmserv.service.processing.catalog import Catalog
from pbmserv.smtpd import start_listener
from pbmserv.store.database import upgrade
from pbmserv.store.models import InboundMail, OutboxMail
from pbmserv.worker import Worker
from tests.conftest import TEST_PASSWORD_COST
from tests.mailtools import make_mail, read_maildir
from tests.smtp_helpers import close_server, loop_thread
from tests.test_smtpd import wait_for_mail, writer_lock_held
from tests.toygame import Toy


@pytest.fixture
def sqlite_runtime(tmp_path: Path) -> Iterator[Runtime]:
    """A runtime on a SQLite file of its own (the spool exists only on SQLite)."""
    url = f"sqlite:///{tmp_path / 'spooled.db'}"
    upgrade(url)
    runtime = Runtime(
        replace(Settings(), database_url=url, mail_backend="memory", poll_seconds=0.2, **TEST_PASSWORD_COST),
        catalog=Catalog([*Catalog.installed(), Toy()]), backend=MemoryBackend(),
    )
    yield runtime
    runtime.close()


def count(runtime: Runtime, *where: ColumnElement[bool]) -> int:
    with runtime.engine.connect() as connection:
        return connection.scalar(select(func.count(InboundMail.id)).where(*where)) or 0


def test_accepted_mail_waits_in_the_spool_until_a_batch_admits_it(sqlite_runtime: Runtime) -> None:
    assert sqlite_runtime.spool is not None
    sqlite_runtime.intake.accept([(make_mail("alice@example.org", "signup alice secret1"), "alice@example.org", "")])
    assert count(sqlite_runtime) == 0 and len(sqlite_runtime.spool.waiting(10)) == 1
    assert sqlite_runtime.processor.process_pending() == 1
    assert count(sqlite_runtime, InboundMail.status == "done") == 1
    assert sqlite_runtime.spool.waiting(10) == []


def test_a_mail_admitted_twice_is_processed_once(sqlite_runtime: Runtime) -> None:
    """A worker that dies after committing its batch but before forgetting
    the admitted mails leaves them in the spool: the next batch admits
    them again, and their dedup keys keep them out."""
    assert sqlite_runtime.spool is not None
    mail = make_mail("alice@example.org", "signup alice secret1")
    sqlite_runtime.intake.accept([(mail, "alice@example.org", ""), (mail, "alice@example.org", "")])
    with sqlite_runtime.engine.begin() as connection:
        assert len(sqlite_runtime.processor._admit(connection)) == 2  # committed, never forgotten
    assert count(sqlite_runtime) == 1, "the second copy in the same group is left out too"
    assert sqlite_runtime.processor.process_pending() == 1
    with sqlite_runtime.engine.connect() as connection:
        assert connection.scalar(select(func.count(OutboxMail.id))) == 1
    assert count(sqlite_runtime) == 1 and sqlite_runtime.spool.waiting(10) == []


def test_spooled_mail_is_processed_in_arrival_order(sqlite_runtime: Runtime) -> None:
    """Each mail needs the one before it: the account, then each password."""
    subjects = ["signup alice secret1", *(f"change password alice secret{n} secret{n + 1}" for n in range(1, 4))]
    sqlite_runtime.intake.accept([(make_mail("alice@example.org", subject), "alice@example.org", "") for subject in subjects])
    sqlite_runtime.processor.process_pending()
    sqlite_runtime.delivery.deliver_due()
    backend = sqlite_runtime.backend
    assert isinstance(backend, MemoryBackend)
    subjects_sent = [raw.split(b"\nSubject: ")[1].split(b"\n")[0] for _, raw in backend.sent]
    assert [subject.split()[0] for subject in subjects_sent] == [b"confirm"] + [b"pbmserv"] * 3
    assert all(subject.startswith(b"pbmserv change password") for subject in subjects_sent[1:]), subjects_sent


def test_intake_answers_at_once_while_the_worker_holds_the_database(sqlite_runtime: Runtime, tmp_path: Path) -> None:
    """The worker's transaction holds SQLite's write lock; intake, writing
    the spool, still answers 250 at once, and the mail is processed when
    the lock is free."""
    sqlite_runtime.delivery.backend = MaildirBackend(tmp_path / "outbox")
    worker = Worker(sqlite_runtime)
    worker.start()
    database = sqlite_runtime.settings.database_url.removeprefix("sqlite:///")
    with loop_thread() as loop:
        server = asyncio.run_coroutine_threadsafe(start_listener(sqlite_runtime.intake, worker.wake, "127.0.0.1", 0), loop).result(10)
        with writer_lock_held(database):
            started = time.monotonic()
            with smtplib.SMTP("127.0.0.1", server.sockets[0].getsockname()[1], timeout=30) as client:
                client.sendmail("alice@example.org", ["pbmserv@localhost"], make_mail("alice@example.org", "signup alice secret1"))
            answered = time.monotonic() - started
            time.sleep(0.5)
            assert read_maildir(tmp_path / "outbox") == [], "the worker could not have processed it"
        [reply] = wait_for_mail(tmp_path / "outbox", 1)
        close_server(server, loop)
    worker.stop()
    assert answered < 1.0, answered
    assert b"Subject: confirm alice " in reply


def test_mail_arriving_after_the_spool_was_emptied_is_admitted(sqlite_runtime: Runtime) -> None:
    """Admitted mail is removed from the spool; the ids of later mail must
    still come after those, or it would be taken for admitted already."""
    assert sqlite_runtime.spool is not None
    sqlite_runtime.spool.REMOVE_SECONDS = 0  # remove after every batch
    for number in range(3):
        sqlite_runtime.intake.accept([(make_mail(f"p{number}@example.org", f"signup p{number} secret1"), None, "")])
        assert sqlite_runtime.processor.process_pending() == 1
    assert count(sqlite_runtime, InboundMail.status == "done") == 3


def in_spool_file(runtime: Runtime) -> int:
    assert runtime.spool is not None
    with sqlite3.connect(runtime.spool.path) as connection:
        found = connection.execute("SELECT count(*) FROM arrivals").fetchone()[0]
    connection.close()
    return found


def test_admitted_mail_leaves_the_spool_after_a_durable_batch_that_wrote_or_once_all_is_done(sqlite_runtime: Runtime) -> None:
    """The database syncs one batch a second (synchronous=FULL for that
    batch), and only a commit that writes syncs anything: a mail admitted
    in between stays in the spool file, unread, until a later durable
    batch has processed a mail, or until there is nothing left to process
    and a checkpoint has put the database on the disk (else it would stay
    there, room and all, until mail came again)."""
    spool, processor = sqlite_runtime.spool, sqlite_runtime.processor
    assert spool is not None
    spool.REMOVE_SECONDS = 3600
    sqlite_runtime.intake.accept([(make_mail("alice@example.org", "signup alice secret1"), None, "")])
    processor.process_batch()  # the first batch is durable
    assert in_spool_file(sqlite_runtime) == 0

    sqlite_runtime.intake.accept([(make_mail("bob@example.org", "signup bob secret2"), None, "")])
    processor.process_batch()
    assert in_spool_file(sqlite_runtime) == 1 and spool.waiting(10) == []
    spool._next_removal = time.monotonic()  # a second has passed
    assert processor.process_batch().processed == 0
    assert in_spool_file(sqlite_runtime) == 1, "a durable batch that wrote nothing synced nothing"

    sqlite_runtime.intake.accept([(make_mail("carol@example.org", "signup carol secret3"), None, "")])
    processor.process_batch()
    assert in_spool_file(sqlite_runtime) == 0

    sqlite_runtime.intake.accept([(make_mail("dave@example.org", "signup dave secret4"), None, "")])
    assert processor.process_pending() == 1  # which ends with nothing left to do
    assert in_spool_file(sqlite_runtime) == 0
    assert count(sqlite_runtime, InboundMail.status == "done") == 4


def test_the_spool_syncs_every_commit_to_the_disk(sqlite_runtime: Runtime) -> None:
    """A 250 waits for the spool's commit; synchronous=FULL makes that
    commit hold through a power cut, not only through a crash of pbmserv
    (the database itself syncs less often: see `store.database.writing`)."""
    spool = sqlite_runtime.spool
    assert spool is not None
    spool.append([])
    with spool._lock:
        assert spool._open().execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_a_processed_mail_leaves_no_password_in_the_files(sqlite_runtime: Runtime, tmp_path: Path) -> None:
    """The spool removes a mail once it is admitted, and the database
    replaces a mail's raw bytes by a masked copy once it is processed; the
    bytes that held the password are zeroed (secure_delete), not left in
    free space, in either file. (Debian builds SQLite with secure_delete
    on by default; other builds have it off.)"""
    spooled, stored = "Quokka7Zebra", "Wombat9Heron"
    sqlite_runtime.intake.accept([(make_mail("alice@example.org", f"signup alice {spooled}"), "alice@example.org", "")])
    sqlite_runtime.intake.store(make_mail("bob@example.org", f"signup bob {stored}"), "bob@example.org")
    assert sqlite_runtime.processor.process_pending() == 2
    sqlite_runtime.close()  # the last connections to close checkpoint the WAL into the files, and delete it
    for path in (tmp_path / "spooled.db", tmp_path / "spooled.db-spool"):
        assert not path.with_name(path.name + "-wal").exists()
        content = path.read_bytes()
        assert spooled.encode() not in content and stored.encode() not in content, path.name
