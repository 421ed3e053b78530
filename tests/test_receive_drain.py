"""`pbmserv receive` stores, one drainer processes: a burst of mails piped
in at once (real processes, as an MTA runs them) is processed once each
with one reply each; a mail piped twice is stored once; an outage is 75;
and the hot path's own SQL (`store.piped`) answers as the Core statements."""

from __future__ import annotations

import sqlite3
import subprocess
import threading
from collections import Counter
from pathlib import Path
from typing import cast

from sqlalchemy import text

from pbmserv.config import Settings
from pbmserv.drainer import DrainLock, drain, lock_path
from pbmserv.mail.backends import MemoryBackend
from pbmserv.runtime import Runtime
from pbmserv.store import users
from pbmserv.store.database import reading, schema_revision
from pbmserv.store.piped import PipedStore
from tests.drain_helpers import drain_after_drainers
from tests.mailtools import make_mail, send
from tests.test_cli import BIN, env_for, maildir_mails

SENDERS = 24
TWICE = 6  # of them send their mail twice, at the same moment


def test_a_burst_of_receives_is_processed_once_each_with_one_reply_each(database_url: str, tmp_path: Path) -> None:
    mails = [make_mail(f"player{number}@example.org", "help") for number in range(SENDERS)]
    burst = mails + mails[:TWICE]
    env = env_for(tmp_path, PBMSERV_DATABASE_URL=database_url)
    for number, raw in enumerate(burst):
        (tmp_path / f"mail{number}").write_bytes(raw)
    receives = []
    for number in range(len(burst)):
        with open(tmp_path / f"mail{number}", "rb") as mail:
            receives.append(subprocess.Popen(
                [BIN / "pbmserv", "receive"], stdin=mail, stderr=subprocess.PIPE, env=env, cwd=tmp_path,
            ))
    results = [process.communicate(timeout=120) for process in receives]
    codes = [process.returncode for process in receives]
    assert codes == [0] * len(burst), [error for _, error in results]
    settings = Settings(database_url=database_url, key_file=env["PBMSERV_KEY_FILE"])
    drain_after_drainers(lock_path(settings), env, tmp_path)

    runtime = Runtime(settings)
    try:
        with reading(runtime.engine) as connection:
            rows = connection.execute(text("SELECT envelope_sender, status FROM inbound_mails")).all()
    finally:
        runtime.close()
    assert Counter(sender for sender, _ in rows) == Counter(f"player{number}@example.org" for number in range(SENDERS))
    assert {status for _, status in rows} == {"done"}
    replies = Counter(str(mail["To"]) for mail in maildir_mails(tmp_path))
    assert replies == Counter(f"player{number}@example.org" for number in range(SENDERS))


def test_receive_exits_75_while_the_database_does_not_answer(tmp_path: Path) -> None:
    """PostgreSQL down (nothing listens on the port): the MTA keeps the mail."""
    env = env_for(tmp_path, PBMSERV_DATABASE_URL="postgresql://postgres@127.0.0.1:9/pbmserv")
    result = subprocess.run(
        [BIN / "pbmserv", "receive"], input=make_mail("alice@example.org", "help"), env=env, cwd=tmp_path,
        capture_output=True, timeout=60,
    )
    assert result.returncode == 75, result.stderr
    assert b"try again later" in result.stderr and b"cannot use the database" in result.stderr


def test_the_hot_paths_statements_answer_as_the_core_ones(toy_boards: Runtime) -> None:
    runtime = toy_boards
    store = PipedStore(runtime.settings)
    try:
        assert store.schema_revision() == schema_revision(runtime.engine)
        with reading(runtime.engine) as connection:
            for board, seat in ((101, 0), (101, 1), (101, 2), (102, 1), (999, 0)):
                assert store.seat_holder("toy", board, seat) == users.seat_holder(connection, "toy", board, seat)
            assert store.seat_holder("toy", 101, 0) is not None
            stored = connection.execute(text("SELECT dedup_key, id FROM inbound_mails")).all()
        assert stored and all(store.stored_id(key) == row_id for key, row_id in stored)
        assert store.stored_id("0" * 64) is None
    finally:
        store.close()


def test_a_mail_stored_twice_through_the_hot_path_is_stored_once(runtime: Runtime) -> None:
    arrival = runtime.intake.arrival(make_mail("alice@example.org", "help"), None)
    store = PipedStore(runtime.settings)
    try:
        first = store.store(arrival)
        assert first[1] is False
        runtime.processor.process_pending()  # on SQLite the spooled mail is admitted now
        again = store.store(arrival)
    finally:
        store.close()
    assert again[1] is True
    send(runtime, "bob@example.org", "help")
    with reading(runtime.engine) as connection:
        assert connection.execute(text("SELECT count(*) FROM inbound_mails")).scalar_one() == 2


def test_a_drainer_waits_out_a_write_lock_held_past_the_busy_timeout(tmp_path: Path, key_file: str) -> None:
    """Under a flood `serve` may hold SQLite's write lock longer than a
    drainer's busy timeout: the drainer tries the batch again instead of
    exiting with "database is locked"."""
    database = tmp_path / "pbmserv.db"
    settings = Settings(database_url=f"sqlite:///{database}", key_file=key_file, mail_backend="memory", database_busy_seconds=0.2)
    impatient = Runtime(settings, backend=MemoryBackend())
    impatient.upgrade_schema()
    impatient.intake.store(make_mail("carol@example.org", "help"), "carol@example.org")
    holder = sqlite3.connect(database, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    threading.Timer(1.5, holder.rollback).start()
    lock = DrainLock.at(lock_path(impatient.settings))
    try:
        lock.take(wait=True)
        assert drain(impatient, lock) == 1
    finally:
        lock.close()
        impatient.close()
    holder.close()
    assert [to for to, _ in cast(MemoryBackend, impatient.backend).sent] == ["carol@example.org"]
