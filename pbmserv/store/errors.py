"""The database's exceptions that the rest of pbmserv tells apart, so that
only `store` imports SQLAlchemy."""

from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

#: the database is down, unreachable or locked: try again later
UNAVAILABLE = (OperationalError, InterfaceError)


def driver_error(error: BaseException) -> BaseException | None:
    """The driver's own exception under one of SQLAlchemy's, if any."""
    return error.orig if isinstance(error, DBAPIError) else None
