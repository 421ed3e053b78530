"""SQLite writers taking turns through the flocks beside the database file
(`pbmserv.store.database.WriterLockedConnection`)."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest

from pbmserv.store.database import WriterLockedConnection


def connect(path: Path, timeout: float = 5.0) -> WriterLockedConnection:
    connection = sqlite3.connect(
        path, timeout=timeout, factory=WriterLockedConnection, isolation_level=None, check_same_thread=False,
    )
    connection.execute("PRAGMA journal_mode=WAL")
    return connection


@pytest.fixture
def database(tmp_path: Path) -> Path:
    path = tmp_path / "writers.db"
    with connect(path) as connection:
        connection.execute("CREATE TABLE log (writer TEXT)")
    return path


def test_a_waiting_writer_goes_before_a_writer_that_keeps_beginning(database: Path) -> None:
    """One writer commits and begins again at once, over and over, as the
    worker does under load; another, waiting, still gets its turn soon."""
    busy, waiting = connect(database), connect(database)
    stop = threading.Event()

    def keep_writing() -> None:
        while not stop.is_set():
            busy.begin_writing()
            busy.execute("INSERT INTO log VALUES ('busy')")
            time.sleep(0.005)
            busy.commit()

    writer = threading.Thread(target=keep_writing)
    writer.start()
    try:
        time.sleep(0.05)
        waits = []
        for _ in range(20):
            started = time.monotonic()
            waiting.begin_writing()
            waits.append(time.monotonic() - started)
            waiting.execute("INSERT INTO log VALUES ('waiting')")
            waiting.commit()
            time.sleep(0.01)
    finally:
        stop.set()
        writer.join()
    assert max(waits) < 0.1, sorted(waits)[-3:]


def test_a_writer_gives_up_after_the_busy_timeout(database: Path) -> None:
    holder, other = connect(database), connect(database, timeout=0.3)
    holder.begin_writing()
    started = time.monotonic()
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        other.begin_writing()
    assert 0.3 <= time.monotonic() - started < 2
    holder.commit()
    other.begin_writing()  # free again: the refused writer holds nothing
    other.commit()
