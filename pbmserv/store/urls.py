"""Database URLs. What `receive`'s hot path needs of one (the kind of
database, a SQLite file's path) is read without SQLAlchemy, whose import
costs more than that whole path; the pattern is SQLAlchemy's own
(`sqlalchemy.engine.url._parse_url`), so both read a URL alike."""

from __future__ import annotations

import re
from pathlib import Path

_URL = re.compile(
    r"(?P<name>[\w+]+)://(?:[^:/]*(?::[^@]*)?@)?(?:(?:\[[^/?]+\]|[^/:?]+)?(?::[^/?]*)?)?(?:/(?P<database>[^?]*))?"
)


def normalise_url(url: str) -> str:
    """PostgreSQL URLs without a driver get psycopg 3."""
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed.render_as_string(hide_password=False)


def backend_name(url: str) -> str | None:
    """The kind of database a URL names ("sqlite", "postgresql", ...); None: it is no database URL."""
    parsed = _URL.match(url)
    return None if parsed is None else parsed.group("name").split("+")[0]


def sqlite_file(url: str) -> Path | None:
    """The absolute path of a SQLite database's file; None for PostgreSQL or a database in memory."""
    parsed = _URL.match(url)
    if parsed is None or backend_name(url) != "sqlite" or parsed.group("database") in (None, "", ":memory:"):
        return None
    return Path(parsed.group("database")).resolve()


def without_password(url: str) -> str:
    """The database URL as it may be shown (logged)."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def shown(url: str) -> str:
    """The database's file, or its URL without the password."""
    path = sqlite_file(url)
    return str(path) if path is not None else without_password(url)


def no_database(url: str) -> str:
    """What a command that needs a database says where there is none."""
    return (
        f"no pbmserv database at {shown(url)} (set PBMSERV_DATABASE_URL or --config to the server's; "
        "`pbmserv serve` or `pbmserv-admin db upgrade` makes a new one)"
    )
