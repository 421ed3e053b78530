"""Database URLs."""

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError


def normalise_url(url: str) -> str:
    """PostgreSQL URLs without a driver get psycopg 3."""
    parsed = make_url(url)
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed.render_as_string(hide_password=False)


def backend_name(url: str) -> str | None:
    """The kind of database a URL names ("sqlite", "postgresql", ...); None: it is no database URL."""
    try:
        return make_url(url).get_backend_name()
    except ArgumentError:
        return None


def without_password(url: str) -> str:
    """The database URL as it may be shown (logged)."""
    return make_url(url).render_as_string(hide_password=True)
