"""How much room the database takes and has left, for intake to refuse
mail before the disk fills (`service.storage`). On SQLite the files are
only looked at (`stat`, `statvfs`), never opened: closing a descriptor of
a live database file would drop SQLite's locks (see architecture, "250
means safe"). On PostgreSQL the server says how large the database is;
its disk is the server's own."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pbmserv.store.spool import spool_file
from pbmserv.store.urls import sqlite_file

if TYPE_CHECKING:  # `receive`'s hot path measures without SQLAlchemy
    from sqlalchemy import Engine

#: the database's size on its PostgreSQL server
DATABASE_SIZE = "SELECT pg_database_size(current_database())"


@dataclass(frozen=True)
class Room:
    #: bytes the database takes: on SQLite its files and the spool's, with their write-ahead logs
    used_bytes: int
    #: bytes free for this user on the disk that holds them; None where it is not known here (PostgreSQL)
    free_bytes: int | None


def sqlite_room(database: Path) -> Room:
    """The room of the SQLite database file `database` and its arrival spool."""
    spool = spool_file(str(database))
    files = [database, Path(f"{database}-wal"), spool, Path(f"{spool}-wal")]
    used = 0
    for file in files:
        try:
            used += file.stat().st_size
        except FileNotFoundError:
            pass
    disk = os.statvfs(database.parent)
    return Room(used, disk.f_bavail * disk.f_frsize)


def room_of(url: str, engine: Engine) -> Room:
    """The room of the database at `url` (on PostgreSQL asked of the server through `engine`)."""
    path = sqlite_file(url)
    if path is not None:
        return sqlite_room(path)
    from sqlalchemy import text

    from pbmserv.store.database import reading

    with reading(engine) as connection:
        return Room(int(connection.execute(text(DATABASE_SIZE)).scalar_one()), None)
