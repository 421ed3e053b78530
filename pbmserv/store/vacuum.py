"""Giving the room of deleted rows back to the disk.

SQLite keeps the pages of deleted rows in the file, on its free list, for
rows to come: a database that once held a flood stays that large. With
`auto_vacuum=INCREMENTAL`, `PRAGMA incremental_vacuum(N)` moves up to N
pages from the end of the file into free ones and cuts the file short
(in WAL mode at the next checkpoint). The mode is set on every connection
before anything else (`database._configure_sqlite`), which makes every new
file incremental; a file made before takes it with one VACUUM
(`make_incremental`, at `upgrade`). FULL, which vacuums at every commit,
would move pages in each of the worker's batches, since processing a
mail frees the room of its sealed original.

PostgreSQL needs none of this: a deleted row's room is used again by
later rows once (auto)vacuum has seen it, and VACUUM gives empty pages at
a table's end back to the disk."""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Engine

from pbmserv.store.sqlite import INCREMENTAL

log = logging.getLogger(__name__)


def make_incremental(engine: Engine) -> None:
    """Switch a SQLite database made before incremental vacuuming to it:
    one VACUUM, which rewrites the file (and needs that much free disk
    for a moment), once in the database's life."""
    if engine.dialect.name != "sqlite":
        return
    with _driver_connection(engine) as sqlite:
        if sqlite.execute("PRAGMA auto_vacuum").fetchone()[0] == INCREMENTAL:
            return
        began = time.monotonic()
        sqlite.execute("PRAGMA auto_vacuum=INCREMENTAL")
        sqlite.execute("VACUUM")
    log.info("database switched to incremental vacuuming (one VACUUM, %.1f s)", time.monotonic() - began)


def free_pages(engine: Engine) -> int:
    """The pages on a SQLite database's free list (0 on PostgreSQL)."""
    if engine.dialect.name != "sqlite":
        return 0
    with _driver_connection(engine) as sqlite:
        return int(sqlite.execute("PRAGMA freelist_count").fetchone()[0])


def give_back(engine: Engine, most_pages: int) -> None:
    """Give up to `most_pages` free pages of a SQLite database back to the
    disk, in a transaction of its own. Python's `execute` steps a PRAGMA
    once, which frees one page; `executescript` steps it to its end (and
    runs it outside any transaction, which is what is wanted here)."""
    if engine.dialect.name != "sqlite":
        return
    with _driver_connection(engine) as sqlite:
        sqlite.executescript(f"PRAGMA incremental_vacuum({int(most_pages)});")


@contextmanager
def _driver_connection(engine: Engine) -> Iterator[sqlite3.Connection]:
    """A connection of the engine's pool as `sqlite3` made it, outside any transaction."""
    connection = engine.raw_connection()
    try:
        sqlite = connection.driver_connection
        assert isinstance(sqlite, sqlite3.Connection), "a SQLite engine's connections are sqlite3's"
        yield sqlite
    finally:
        connection.close()
