"""The arrival spool: where SMTP intake commits a mail before its 250 when
the database is SQLite.

SQLite has one write lock for the whole database, and under load the
worker holds it most of the time; intake storing into `inbound_mails`
would wait for each of the worker's batches before it could answer. So
intake writes into a SQLite file of its own beside the database
(`<database>-spool`) and never waits for the worker. The worker moves
what has arrived into `inbound_mails` within its batch transaction
(`Processor.admit`), where a mail's dedup key makes a second copy
harmless, and then forgets it here. Nothing is lost in between: a mail
leaves the spool only after its row in the database is committed, and
that commit is on the disk. The spool syncs each of its commits, since a
250 waits for it; the database syncs only the worker's durable batches,
one a `REMOVE_SECONDS` at most (`store.database.writing`), and only what
was admitted in or before such a batch is removed here. Mails admitted
in between stay in the file until then; this process does not read them
again, and after a crash they are admitted again, where their dedup keys
leave them out.

The file is a queue private to pbmserv, so it is kept with the standard
library's `sqlite3` and created as needed; Alembic does not manage it.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from pbmserv.config import Settings
from pbmserv.store.sqlite import INCREMENTAL, WAL_KEPT_BYTES, SQLiteConnection
from pbmserv.store.urls import sqlite_file

_SCHEMA = """
CREATE TABLE IF NOT EXISTS arrivals (
    id INTEGER PRIMARY KEY AUTOINCREMENT,  -- never used again, even once the table is empty
    received_at TEXT NOT NULL,
    envelope_sender TEXT NOT NULL,
    message_id TEXT NOT NULL,
    dedup_key TEXT NOT NULL,
    raw BLOB NOT NULL,
    sealed BLOB,  -- see InboundMail.sealed
    reply_token TEXT NOT NULL DEFAULT '',  -- see InboundMail.reply_token
    verified_sender TEXT NOT NULL DEFAULT ''  -- see Arrival.verified_sender
)
"""


def spool_of(settings: Settings) -> Spool | None:
    """The arrival spool beside a SQLite database file (`<file>-spool`); None on PostgreSQL."""
    path = sqlite_file(settings.database_url)
    return None if path is None else Spool(spool_file(str(path)), settings.database_busy_seconds)


def spool_file(database: str) -> Path:
    """Where the spool of the SQLite database file `database` is kept."""
    return Path(f"{database}-spool")


@dataclass(frozen=True)
class Arrival:
    """A mail as intake took it in; `id` orders the spool (0 before it is in)."""

    received_at: datetime
    envelope_sender: str
    message_id: str
    dedup_key: str
    raw: bytes
    sealed: bytes | None = None
    reply_token: str = ""
    #: the From address, if the mail server the operator trusts vouches for it (`mail.authentication`)
    verified_sender: str = ""
    id: int = 0


class Spool:
    #: how often at most the worker makes a batch durable and then removes admitted mails (each a sync and a write)
    REMOVE_SECONDS = 1.0

    def __init__(self, path: str | Path, busy_seconds: float = 10.0):
        self.path = Path(path)
        self.busy_seconds = busy_seconds
        self._connection: SQLiteConnection | None = None
        self._lock = threading.Lock()  # one connection, used by one thread at a time
        self._admitted_through = 0  # in this process; 0 after a start: all is read again
        self._synced_through = 0  # admitted, and the database has synced that admission
        self._removed_through = 0
        self._next_removal = time.monotonic()

    def append(self, arrivals: list[Arrival]) -> None:
        """Commit the mails to the spool, in one transaction."""
        with self._writing() as connection:
            connection.executemany(
                "INSERT INTO arrivals (received_at, envelope_sender, message_id, dedup_key, raw, sealed, reply_token,"
                " verified_sender) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        a.received_at.isoformat(), a.envelope_sender, a.message_id, a.dedup_key, a.raw, a.sealed,
                        a.reply_token, a.verified_sender,
                    )
                    for a in arrivals
                ],
            )

    def waiting(self, most: int) -> list[Arrival]:
        """The oldest `most` mails in the spool not admitted yet, in arrival order."""
        if self._connection is None and not self.path.exists():
            return []  # no intake has written here yet: leave the file unmade
        with self._lock:
            rows = self._open().execute(
                "SELECT received_at, envelope_sender, message_id, dedup_key, raw, sealed, reply_token, verified_sender, id"
                " FROM arrivals WHERE id > ? ORDER BY id LIMIT ?",
                (self._admitted_through, most),
            ).fetchall()
        return [Arrival(datetime.fromisoformat(row[0]), *row[1:]) for row in rows]

    def removal_due(self) -> bool:
        """Whether the worker's next batch should be durable, so that the
        mails admitted so far can be removed after it."""
        return time.monotonic() >= self._next_removal

    def admitted(self, through: int, synced: bool) -> None:
        """The mails up to id `through` are in the database now (committed):
        they are not read again. With `synced`, that commit synced the
        database, and every mail admitted so far is removed from the file.
        A crash before then only means that they are admitted again, where
        their dedup keys leave them out."""
        self._admitted_through = max(self._admitted_through, through)
        if synced:
            self._synced_through = self._admitted_through
            self._next_removal = time.monotonic() + self.REMOVE_SECONDS
            self._remove_synced(wait=False)

    def holds_admitted(self) -> bool:
        """Whether mails admitted by this process are still in the file (no synced commit has come after them)."""
        return self._admitted_through > self._removed_through

    def close(self) -> None:
        self._remove_synced()
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def _remove_synced(self, *, wait: bool = True) -> None:
        """Remove what is synced. Without `wait`, only if intake is not
        storing just now: the worker must not wait for intake's commits
        (SQLite's busy handler sleeps in steps of up to 100 ms), and tries
        again after its next durable batch."""
        if self._synced_through <= self._removed_through:
            return
        try:
            with self._writing(busy_seconds=None if wait else 0.0) as connection:
                connection.execute("DELETE FROM arrivals WHERE id <= ?", (self._synced_through,))
                emptied = connection.execute("SELECT 1 FROM arrivals LIMIT 1").fetchone() is None
        except sqlite3.OperationalError:
            if wait:
                raise
            return
        self._removed_through = self._synced_through
        if emptied:
            self._give_back()

    def _give_back(self) -> None:
        """Give the room of removed mail back to the disk: the spool is
        empty, so there is no mail to move, only the file to cut short. (A
        flood leaves it as large as the most it held at once: while mail
        waits, its room is used again by the next.) `executescript` steps
        the PRAGMA to its end, outside a transaction; intake storing just
        now makes it busy, and the next emptying does it."""
        with self._lock, contextlib.suppress(sqlite3.OperationalError):
            self._open().executescript("PRAGMA incremental_vacuum;")

    def _open(self) -> SQLiteConnection:
        if self._connection is None:
            connection = sqlite3.connect(
                self.path, timeout=self.busy_seconds, factory=SQLiteConnection,
                isolation_level=None, check_same_thread=False,
            )
            connection.execute("PRAGMA auto_vacuum=INCREMENTAL")  # before the file is made: see `_give_back`
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute(f"PRAGMA journal_size_limit={WAL_KEPT_BYTES}")
            connection.set_synchronous("FULL")  # a 250 holds through a power cut too
            connection.execute("PRAGMA secure_delete=ON")  # removed mail (passwords) is zeroed in the file
            connection.execute(_SCHEMA)
            if connection.execute("PRAGMA auto_vacuum").fetchone()[0] != INCREMENTAL:
                with contextlib.suppress(sqlite3.OperationalError):  # busy: the next opening tries again
                    connection.execute("VACUUM")  # a spool made before: once, it takes the mode set above
            columns = {column[1] for column in connection.execute("PRAGMA table_info(arrivals)")}
            if "sealed" not in columns:
                connection.execute("ALTER TABLE arrivals ADD COLUMN sealed BLOB")  # a spool made before sealing
            if "reply_token" not in columns:  # a spool made before reply addresses
                connection.execute("ALTER TABLE arrivals ADD COLUMN reply_token TEXT NOT NULL DEFAULT ''")
            if "verified_sender" not in columns:  # a spool made before the trusted mail server's word counted
                connection.execute("ALTER TABLE arrivals ADD COLUMN verified_sender TEXT NOT NULL DEFAULT ''")
            self._connection = connection
        return self._connection

    @contextmanager
    def _writing(self, busy_seconds: float | None = None) -> Iterator[SQLiteConnection]:
        """A write transaction, waiting for another writer up to
        `busy_seconds` (None: the spool's own)."""
        with self._lock:
            connection = self._open()
            waits = self.busy_seconds if busy_seconds is None else busy_seconds
            connection.execute(f"PRAGMA busy_timeout={round(waits * 1000)}")
            connection.begin_writing()
            try:
                yield connection
            except BaseException:
                connection.rollback()
                raise
            connection.commit()
