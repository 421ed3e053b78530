"""What every command handler gets, and what it gives back."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import Executable, Result, bindparam, select
from sqlalchemy.orm import Session

from pbmserv.config import Settings
from pbmserv.service.catalog import Catalog
from pbmserv.service.errors import ServiceError
from pbmserv.service.passwords import Passwords
from pbmserv.store.models import Address, User


def as_utc(moment: datetime) -> datetime:
    """A stored time, made timezone-aware: SQLite gives back naive datetimes (stored in UTC)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


# built once: these run for every move
_USER = select(User).where(User.userid == bindparam("userid"))
_USERS, _ADDRESS_ROWS = User.__table__, Address.__table__
_ADDRESSES = (
    select(_USERS.c.userid, _ADDRESS_ROWS.c.address)
    .join(_ADDRESS_ROWS, _ADDRESS_ROWS.c.user_id == _USERS.c.id)
    .where(_USERS.c.userid.in_(bindparam("userids", expanding=True)))
    .order_by(_ADDRESS_ROWS.c.position)
)


@dataclass(frozen=True)
class Reply:
    """One mail to send: the same text to every address in `recipients`.

    `kind` is "board" for a board mail to players (never held back), "answer"
    for a reply to the sender and "error" for an error reply; answers and
    errors count against the per-sender hourly caps."""

    recipients: tuple[str, ...]
    subject: str
    body: str
    kind: str = "answer"


@dataclass
class Context:
    session: Session
    settings: Settings
    catalog: Catalog
    passwords: Passwords
    now: datetime
    sender: str  # the address replies to queries and errors go to
    comment: str = ""

    def find_user(self, userid: str) -> User | None:
        return self.session.scalar(_USER, {"userid": userid.lower()})

    def known_user(self, userid: str, hint: str = "") -> User:
        user = self.find_user(userid)
        if user is None:
            raise ServiceError(
                f"There is no player with the userid '{userid}'.",
                hint or "check the spelling, or sign up first with 'signup userid password'",
            )
        return user

    def authenticate(self, userid: str, password: str) -> User:
        """The user, if `password` is theirs; otherwise a ServiceError that
        does not say which of the two was wrong beyond what is public."""
        user = self.known_user(userid)
        if not self.passwords.verify(user.password_hash, password):
            raise ServiceError(
                f"The password for '{user.userid}' is wrong.",
                "passwords are case-sensitive; 'change password userid old new' sets a new one",
            )
        return user

    def read(self, statement: Executable, params: dict[str, Any]) -> Result[Any]:
        """Run a Core query of the move path. Unlike an ORM query it does not
        flush what this mail changed through the ORM, so that is flushed
        first (a no-op when nothing changed)."""
        self.session.flush()
        return self.session.execute(statement, params)

    def addresses(self, userids: list[str] | tuple[str, ...]) -> dict[str, tuple[str, ...]]:
        found: dict[str, list[str]] = {userid: [] for userid in userids}
        for userid, address in self.read(_ADDRESSES, {"userids": list(found)}) if found else ():
            found[userid].append(address)
        return {userid: tuple(addresses) for userid, addresses in found.items()}
