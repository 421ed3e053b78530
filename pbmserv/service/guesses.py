"""How many new wrong passwords the server checks, so that guessing can
neither hold up everybody's mail (each check costs 25 ms of the worker,
which applies all mail one after another) nor lock a player out.

Mail from one of the account's own (confirmed) addresses is always
checked. Mail from any other address is checked only while that address
has had fewer than PER_SENDER failed checks in the last WINDOW (whatever
the accounts), and all such addresses together fewer than IN_ALL: a
guesser who writes from ever new addresses is held by the second. What
is counted is in the database (`service.rates`), so every process sees it,
`pbmserv receive` too, and a restart forgets nothing. A password this
process has checked before needs no check and meets no limit."""

from __future__ import annotations

from datetime import datetime, timedelta

from pbmserv.service.errors import ServiceError
from pbmserv.service.rates import RateLog

WINDOW = timedelta(minutes=15)
PER_SENDER = 10
IN_ALL = 100
#: the rate event of a failed check: once under the sender's address, and
#: once under ALL when the sender was not one of the account's addresses
FAILED = "password"
ALL = ""


def check_allowed(rates: RateLog, sender: str, now: datetime) -> None:
    """Refuse (unchecked) a password from `sender`, an address that is not
    the account's own, while guessing from it or from everywhere is over the limit."""
    since = now - WINDOW
    if rates.count(FAILED, sender, since) >= PER_SENDER:
        raise ServiceError(
            f"Too many wrong passwords came from {sender} in the last {_minutes()}, so passwords in mail "
            f"from it are not checked now.",
            f"send your mail from one of your account's own addresses (it is always checked), or again in {_minutes()}",
        )
    if rates.count(FAILED, ALL, since) >= IN_ALL:
        raise ServiceError(
            f"Too many wrong passwords came to this server in the last {_minutes()}, so passwords in mail from "
            "addresses that are not the account's own are not checked now.",
            f"send your mail from one of your account's own addresses (it is always checked), or again in {_minutes()}",
        )


def failed(rates: RateLog, sender: str, own: bool, now: datetime) -> None:
    """Count a failed check of a password from `sender` (`own`: one of the account's addresses)."""
    rates.add(FAILED, sender, now)
    if not own:
        rates.add(FAILED, ALL, now)


def _minutes() -> str:
    return f"{WINDOW.seconds // 60} minutes"
