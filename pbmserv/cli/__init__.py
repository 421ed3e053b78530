"""The command line tools; what both of them share, above all how they fail.

A mistake an operator can put right (a setting, a database that is not
there or does not answer, a port in use) ends a command with one line on
stderr that says what is wrong and how to fix it, and a sysexits code;
only a bug shows a traceback. `Tool` does this for every command."""

from __future__ import annotations

import getpass
import logging
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NoReturn

import click

from pbmserv.config import ConfigError, TryAgainLater

if TYPE_CHECKING:
    from pbmserv.config import Settings

# sysexits codes
EX_DATAERR = 65  # the mail is refused for good; the MTA bounces it
EX_NOUSER = 67  # no such recipient: the MTA bounces the mail
EX_IOERR = 74  # a file could not be read or written
EX_TEMPFAIL = 75  # try again later; an MTA keeps the mail and does
EX_CONFIG = 78  # a setting is wrong

config_option = click.option(
    "--config", "config_path", type=click.Path(dir_okay=False), help="TOML settings file (or $PBMSERV_CONFIG)."
)


class Tool(click.Group):
    """A command line tool whose commands fail clearly (see `failing_clearly`).
    `mail_taking` names its commands that take a mail from an MTA: whatever
    keeps them from storing it exits 75, so that the MTA keeps the mail and
    tries again, where most MTAs would bounce it on any other code."""

    def __init__(self, *args: Any, mail_taking: tuple[str, ...] = (), **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.mail_taking = mail_taking

    def invoke(self, ctx: click.Context) -> Any:
        command = ctx.protected_args[0] if ctx.protected_args else None
        with failing_clearly(ctx.info_name or "pbmserv", taking_mail=command in self.mail_taking):
            return super().invoke(ctx)


@contextmanager
def failing_clearly(program: str, *, taking_mail: bool = False) -> Iterator[None]:
    """Turn the errors an operator can put right into one line and an exit
    code; with `taking_mail`, every error, as the mail was not stored."""
    try:
        yield
    except (click.ClickException, click.exceptions.Exit, click.Abort):
        raise
    except Exception as error:
        problem, code = _diagnosis(error)
        if taking_mail:
            if code is None:
                logging.getLogger("pbmserv").exception("the mail was not stored")
            _stop(program, f"the mail was not stored, try again later: {problem}", EX_TEMPFAIL)
        if code is None:
            raise
        _stop(program, problem, code)


def _diagnosis(error: Exception) -> tuple[str, int | None]:
    """What went wrong in one line, and the exit code; None for a bug."""
    if isinstance(error, ConfigError):
        return str(error), EX_CONFIG
    if isinstance(error, TryAgainLater):
        return str(error), EX_TEMPFAIL
    from pbmserv.store.errors import UNAVAILABLE, driver_error, drivers_unavailable  # SQLAlchemy: only once it failed

    if isinstance(error, (*UNAVAILABLE, *drivers_unavailable())):
        # the driver's words only: SQLAlchemy's own text adds the statement and its parameters
        reason = driver_error(error) or error
        return f"cannot use the database: {_one_line(reason)} ({_database_hint(reason)})", EX_TEMPFAIL
    if isinstance(error, OSError):
        where = f": {error.filename}" if error.filename else ""
        return f"{_one_line(error.strerror or error)}{where}", EX_IOERR
    return f"{type(error).__name__}: {_one_line(error)}", None


def _database_hint(reason: BaseException | None) -> str:
    right = "is [database] url or PBMSERV_DATABASE_URL right?"
    if not isinstance(reason, sqlite3.Error):
        return f"is it up? {right}"
    if "unable to open" in str(reason) or "readonly" in str(reason):  # SQLite's words when it may not write
        return f"may the user {getpass.getuser()} write the SQLite file and its directory? {right}"
    return right


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def _stop(program: str, problem: str, code: int) -> NoReturn:
    click.echo(f"{program}: {problem}", err=True)
    sys.exit(code)


def check_database(settings: Settings) -> None:
    """Stop unless the settings name a pbmserv database (`store.database.require_database`)."""
    from pbmserv.store.database import require_database

    require_database(settings.database_url, settings.database_busy_seconds)


def check_key(settings: Settings) -> None:
    """Read the server's key now (making it for a database that has taken
    no mail yet), so that a server that cannot have one says so at once,
    not at its first mail (it is read once per process)."""
    from pbmserv.store.database import holds_mail
    from pbmserv.store.key import require_key, server_key

    require_key(settings, lambda: holds_mail(settings.database_url, settings.database_busy_seconds))
    server_key(settings)
