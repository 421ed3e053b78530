"""The database's exceptions that the rest of pbmserv tells apart, so that
only `store` imports SQLAlchemy."""

import sqlite3
import sys

from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

#: the database is down, unreachable or locked: try again later
UNAVAILABLE = (OperationalError, InterfaceError)


def driver_error(error: BaseException) -> BaseException | None:
    """The driver's own exception under one of SQLAlchemy's, if any."""
    return error.orig if isinstance(error, DBAPIError) else None


def drivers_unavailable() -> tuple[type[BaseException], ...]:
    """The drivers' own errors for the same, as `receive`'s hot path meets
    them (it speaks to the drivers directly: `store.piped`)."""
    errors: list[type[BaseException]] = [sqlite3.OperationalError]
    if "psycopg" in sys.modules:
        import psycopg

        errors += [psycopg.OperationalError, psycopg.InterfaceError]
    return tuple(errors)
