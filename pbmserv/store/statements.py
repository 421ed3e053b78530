"""The statements intake asks of the database, written once in SQL for
both ways to it: the store runs them through SQLAlchemy (`text`),
`receive`'s hot path (`store.piped`) on the driver alone, since importing
SQLAlchemy costs more than storing a mail. Parameters are written
`:name`, as SQLAlchemy and `sqlite3` read them; `for_psycopg` writes them
as psycopg does."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

#: whether the table of Alembic's revision is there (in the schema Alembic uses), by dialect
REVISION_TABLE_THERE = {
    "sqlite": "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'alembic_version'",
    "postgresql": "SELECT count(*) FROM pg_class WHERE oid = to_regclass('alembic_version')",
}
REVISIONS = "SELECT version_num FROM alembic_version"
BOARD_SEATS = "SELECT seats FROM boards WHERE game_type = :game AND board = :board"
USER_SECRET = "SELECT userid, reply_secret FROM users WHERE userid = :userid"
STORED_ID = "SELECT id FROM inbound_mails WHERE dedup_key = :dedup_key"
#: whether the database has taken mail or made accounts: then its server key is in use (`key.require_key`)
HOLDS_MAIL = "SELECT EXISTS (SELECT 1 FROM inbound_mails) OR EXISTS (SELECT 1 FROM users)"

_PARAMETER = re.compile(r"(?<!:):(\w+)")

#: runs a statement with its parameters and gives its first row (None: no row)
FirstRow = Callable[[str, Mapping[str, object]], Any]


def for_psycopg(statement: str) -> str:
    return _PARAMETER.sub(r"%(\1)s", statement)


def seat_holder(first_row: FirstRow, game: str, board: int, seat: int) -> tuple[str, str] | None:
    """The userid and reply secret of whoever holds `seat` on the board; None if there is no such board or seat."""
    found = first_row(BOARD_SEATS, {"game": game, "board": board})
    if found is None:
        return None
    seats = json.loads(found[0]) if isinstance(found[0], str) else found[0]  # JSON is text on SQLite
    if not 0 <= seat < len(seats):
        return None
    row = first_row(USER_SECRET, {"userid": seats[seat]})
    return None if row is None else (row[0], row[1])
