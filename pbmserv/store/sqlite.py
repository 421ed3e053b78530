"""SQLite connections as pbmserv opens them, for SQLAlchemy's engine and
for the plain `sqlite3` of the arrival spool and `receive`'s hot path."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from pbmserv.config import ConfigError

#: `PRAGMA auto_vacuum`'s value for INCREMENTAL (see `store.vacuum`)
INCREMENTAL = 2
#: what a write-ahead log is cut back to once it starts over: a batch of large mails, or a pass of the
#: timer's deletions, may have grown it far beyond its usual few MB
WAL_KEPT_BYTES = 4 * 1024 * 1024


class SQLiteConnection(sqlite3.Connection):
    """A SQLite connection that begins its write transactions with `BEGIN
    IMMEDIATE` and sets `synchronous` only when it changes. In `serve` the
    worker is the database's one writer; `receive` and the admin tool wait
    for it in SQLite's own busy handler, up to `busy_seconds`."""

    def __init__(self, database: Any, *args: Any, **kwargs: Any):
        _make_private(database)
        super().__init__(database, *args, **kwargs)
        self._synchronous = ""

    def set_synchronous(self, level: str) -> None:
        """SQLite's `synchronous` level (NORMAL or FULL) for the transactions
        begun from now on. SQLite refuses to change it inside a transaction,
        and issuing the pragma costs a statement, so it is issued only when
        the level changes."""
        if level != self._synchronous:
            self.execute(f"PRAGMA synchronous={level}")
            self._synchronous = level

    def begin_writing(self) -> None:
        self.execute("BEGIN IMMEDIATE")


def require_directory(database: Path) -> None:
    """Refuse a SQLite file in a directory that does not exist, naming the
    directory (SQLite says only "unable to open database file")."""
    if not database.parent.is_dir():
        raise ConfigError(
            f"no directory {database.parent} for the SQLite database {database}: make it, or set PBMSERV_DATABASE_URL or --config"
        )


def _make_private(database: Any) -> None:
    """Make a new database file readable by its owner alone (0600): it
    holds accounts, addresses and mail. SQLite makes its write-ahead log
    and shared-memory files with the mode of the database file, so they
    follow; left to SQLite the file would be 0644 under the usual umask."""
    if not isinstance(database, (str, Path)) or str(database) in ("", ":memory:") or str(database).startswith("file:"):
        return
    try:
        os.close(os.open(database, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        pass
