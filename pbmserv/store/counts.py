"""What the rate limits count (`service.rates`): events by kind and key,
and the mails an address was sent, by kind. Counted for most mails, so
prepared."""

from __future__ import annotations

from datetime import datetime
from functools import cache

from sqlalchemy import Connection, bindparam, delete, func, insert, or_, select

from pbmserv.store.models import RateEvent
from pbmserv.store.outbox import OUTBOX
from pbmserv.store.prepared import Prepared

EVENTS = RateEvent.__table__

_EVENTS_SINCE = Prepared(
    select(func.count(EVENTS.c.id)).where(
        EVENTS.c.kind == bindparam("kind"), EVENTS.c.key == bindparam("key"), EVENTS.c.at > bindparam("since"),
    )
)
_NEW_EVENTS = insert(EVENTS)
_OLD_EVENTS = delete(EVENTS).where(EVENTS.c.at <= bindparam("before"))


def events_since(connection: Connection, kind: str, key: str, since: datetime) -> int:
    """How many `kind` events for `key` are stored from after `since`."""
    [(count,)] = _EVENTS_SINCE.rows(connection, {"kind": kind, "key": key, "since": since})
    return int(count)


def add_events(connection: Connection, events: list[dict[str, object]]) -> None:
    """Store events, each a dict of kind, key and at."""
    connection.execute(_NEW_EVENTS, events)


def forget_events(connection: Connection, before: datetime) -> None:
    connection.execute(_OLD_EVENTS, {"before": before})


@cache
def _mails_since(kinds: tuple[str, ...]) -> Prepared:
    """Read from the index on (recipient, created_at, kind, size) alone."""
    return Prepared(
        select(func.count(), func.coalesce(func.sum(OUTBOX.c.size), 0)).where(
            OUTBOX.c.recipient == bindparam("recipient"),
            OUTBOX.c.created_at > bindparam("since"),
            or_(*(OUTBOX.c.kind == kind for kind in kinds)),
        )
    )


def mails_since(connection: Connection, recipient: str, kinds: tuple[str, ...], since: datetime) -> tuple[int, int]:
    """How many mails of `kinds` the outbox holds for `recipient` from after `since`, and their bytes."""
    [(count, size)] = _mails_since(kinds).rows(connection, {"recipient": recipient, "since": since})
    return int(count), int(size)


def mails_in_window(connection: Connection, recipient: str, kinds: tuple[str, ...], since: datetime) -> list[tuple[datetime, int]]:
    """When each mail of `kinds` the outbox holds for `recipient` from after `since` was made, and its bytes,
    the oldest first. Asked only when a cap fills (at most a cap's worth of rows), so not prepared."""
    rows = connection.execute(
        select(OUTBOX.c.created_at, OUTBOX.c.size)
        .where(OUTBOX.c.recipient == recipient, OUTBOX.c.created_at > since, OUTBOX.c.kind.in_(kinds))
        .order_by(OUTBOX.c.created_at)
    )
    return [(created_at, int(size)) for created_at, size in rows]
