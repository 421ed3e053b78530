"""The SQL of the outbox: queueing replies, claiming what is due, reading
what was handed over, and writing how each sending went."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import Connection, Engine, Row, bindparam, insert, select, update

from pbmserv.store.database import reading
from pbmserv.store.models import OutboxMail

OUTBOX = OutboxMail.__table__
_QUEUE = insert(OUTBOX)
#: what sending a mail needs of its row
_SENDABLE = select(OUTBOX.c.id, OUTBOX.c.recipient, OUTBOX.c.raw, OUTBOX.c.attempts)
_DUE = (
    _SENDABLE
    .where(OUTBOX.c.status == "pending", OUTBOX.c.next_try_at <= bindparam("now"))
    .order_by(OUTBOX.c.id)
    .limit(bindparam("most"))
    .with_for_update(skip_locked=True)
)
_CLAIM = update(OUTBOX).where(OUTBOX.c.id.in_(bindparam("ids", expanding=True))).values(next_try_at=bindparam("until"))
_ANSWERING = (
    _SENDABLE
    .where(
        OUTBOX.c.inbound_id.in_(bindparam("inbound_ids", expanding=True)),
        OUTBOX.c.status == "pending", OUTBOX.c.attempts == 0,
    )
    .order_by(OUTBOX.c.id)
)
_BY_IDS = (
    _SENDABLE
    .where(OUTBOX.c.id.in_(bindparam("ids", expanding=True)), OUTBOX.c.status == "pending")
    .order_by(OUTBOX.c.id)
)
_OUTCOME = (
    update(OUTBOX)
    .where(OUTBOX.c.id == bindparam("row_id"))
    .values(
        status=bindparam("status"), attempts=bindparam("attempts"), last_error=bindparam("last_error"),
        next_try_at=bindparam("next_try_at"),
    )
)


def queue(connection: Connection, rows: list[dict[str, object]]) -> None:
    if rows:
        connection.execute(_QUEUE, rows)


def claim_due(connection: Connection, now: datetime, until: datetime, most: int) -> Sequence[Row]:
    """The mails due now (id, recipient, raw, attempts), claimed until `until`
    in this transaction; due mail another process has locked is left to it."""
    rows = connection.execute(_DUE, {"now": now, "most": most}).all()
    if rows:
        connection.execute(_CLAIM, {"ids": [row.id for row in rows], "until": until})
    return rows


def read_handed_over(engine: Engine, inbound_ids: list[int], outbox_ids: list[int]) -> list[Row]:
    """Without a write lock: the unsent replies to these inbound mails, and
    these outbox mails if they are still to be sent, in the order they were queued."""
    rows: list[Row] = []
    with reading(engine) as connection:
        if inbound_ids:
            rows += connection.execute(_ANSWERING, {"inbound_ids": inbound_ids}).all()
        if outbox_ids:
            rows += connection.execute(_BY_IDS, {"ids": outbox_ids}).all()
    return rows


def write_outcomes(connection: Connection, outcomes: list[dict[str, object]]) -> None:
    """Each as {row_id, status, attempts, last_error, next_try_at}."""
    if outcomes:
        connection.execute(_OUTCOME, outcomes)
