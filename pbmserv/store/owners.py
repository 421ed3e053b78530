"""Whether the `serve` that holds outbox claims is still there.

On PostgreSQL several `serve` processes share one database. Each claims
outbox mail under its own name (`outbox.claimed_by`: host and listening
address, the same across its restarts), and its worker and deliverer,
the processes that may send what it claims, each hold a shared advisory
lock on that name while they live. When every one of them is gone
(killed, its machine dead), PostgreSQL drops their locks with their
connections, and the next process that claims due mail finds the lock
free and takes the claims over at once, instead of waiting ten minutes
for them to run out. A server that restarts releases its own old claims
itself (`delivery.take_over`). SQLite has one `serve` and no such locks.
"""

from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import Connection, Engine, bindparam, select, text, update
from sqlalchemy import exc as errors

from pbmserv.store.models import OutboxMail
from pbmserv.store.states import Outbox

log = logging.getLogger(__name__)

OUTBOX = OutboxMail.__table__
#: how often a process makes sure that it still holds its lock (a lost connection loses it)
CHECK_SECONDS = 1.0

_HOLD = text("SELECT pg_advisory_lock_shared(:key)")
_STILL_THERE = text("SELECT 1")
_GONE = text("SELECT pg_try_advisory_xact_lock(:key)")
_OWNERS = (
    select(OUTBOX.c.claimed_by)
    .where(
        OUTBOX.c.status == Outbox.PENDING, OUTBOX.c.claimed_by != "", OUTBOX.c.claimed_by != bindparam("own"),
        OUTBOX.c.next_try_at > bindparam("now"),
    )
    .distinct()
)
_RELEASE = (
    update(OUTBOX)
    .where(OUTBOX.c.status == Outbox.PENDING, OUTBOX.c.claimed_by == bindparam("owner"))
    .values(next_try_at=bindparam("now"), claimed_by="", claim_token="")
)


def lock_key(owner: str) -> int:
    """The advisory lock's key for an owner's name (a signed 64-bit number)."""
    return int.from_bytes(hashlib.sha256(f"pbmserv claims {owner}".encode()).digest()[:8], "big", signed=True)


@dataclass
class ClaimOwner:
    """The name a process claims under, and its share of the lock that
    tells other servers the name's claims are still being worked."""

    name: str
    engine: Engine
    _connection: Connection | None = field(default=None, init=False, repr=False)
    _checked: float = field(default=0.0, init=False, repr=False)

    def keep(self) -> None:
        """Hold the lock; at most every CHECK_SECONDS, make sure it is
        still held and take it again on a new connection if that was lost
        (a PostgreSQL restart). Meanwhile another server may have taken
        these claims over: those mails may be sent twice."""
        if self.engine.dialect.name != "postgresql" or time.monotonic() - self._checked < CHECK_SECONDS:
            return
        self._checked = time.monotonic()
        if self._connection is not None:
            try:
                self._connection.execute(_STILL_THERE)
                self._connection.commit()
                return
            except errors.DBAPIError:
                log.warning("the connection holding the claims of %s was lost; taking the lock again", self.name)
                self.close()
        connection = self.engine.connect()
        connection.execute(_HOLD, {"key": lock_key(self.name)})
        connection.commit()  # the lock is the session's: it outlives the transaction
        self._connection = connection

    def close(self) -> None:
        """Let the lock go with its connection, which is closed, not kept in the pool still holding it."""
        if self._connection is not None:
            self._connection.invalidate()
            self._connection.close()
            self._connection = None


def take_over_from_the_gone(connection: Connection, now: datetime, own: str) -> int:
    """In this transaction: make the claims of every other server none of
    whose processes is left due now; returns how many. The exclusive lock
    tried on a gone server's key is held until the transaction ends, so
    that a server starting again under that name waits until then."""
    if connection.dialect.name != "postgresql":
        return 0
    released = 0
    for owner in connection.execute(_OWNERS, {"now": now, "own": own}).scalars().all():
        if connection.execute(_GONE, {"key": lock_key(owner)}).scalar_one():
            count = connection.execute(_RELEASE, {"owner": owner, "now": now}).rowcount
            log.warning("took over %s outbox claims of serve %s, which is gone", count, owner)
            released += count
    return released
