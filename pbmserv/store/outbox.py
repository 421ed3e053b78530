"""The SQL of the outbox: queueing replies, claiming what is due, reading
what was handed over, releasing the claims of a holder that is gone, and
writing how each sending went."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import Connection, Engine, Row, bindparam, delete, insert, select, update

from pbmserv.store import owners
from pbmserv.store.database import reading
from pbmserv.store.models import Address, OutboxMail
from pbmserv.store.states import FINISHED, Outbox

OUTBOX = OutboxMail.__table__
_QUEUE = insert(OUTBOX)
#: what sending a mail needs of its row
_SENDABLE = select(OUTBOX.c.id, OUTBOX.c.recipient, OUTBOX.c.raw, OUTBOX.c.attempts, OUTBOX.c.message_id)
_DUE = (
    _SENDABLE
    .where(OUTBOX.c.status == Outbox.PENDING, OUTBOX.c.next_try_at <= bindparam("now"))
    .order_by(OUTBOX.c.id)
    .limit(bindparam("most"))
    .with_for_update(skip_locked=True)
)
_CLAIM = (
    update(OUTBOX)
    .where(OUTBOX.c.id.in_(bindparam("ids", expanding=True)))
    .values(next_try_at=bindparam("until"), claimed_by=bindparam("by"), claim_token=bindparam("token"))
)
_CLAIMED_FOR = OUTBOX.c.claim_token == bindparam("token")
#: what handed-over mail is read with: whether it goes to a confirmed address of an account (a player)
_HANDED_OVER = _SENDABLE.add_columns(
    OUTBOX.c.recipient.in_(select(Address.address).where(Address.confirmed_at.is_not(None)).scalar_subquery())
    .label("to_player"),
)
_ANSWERING = (
    _HANDED_OVER
    .where(
        OUTBOX.c.inbound_id.in_(bindparam("inbound_ids", expanding=True)),
        OUTBOX.c.status == Outbox.PENDING, OUTBOX.c.attempts == 0, _CLAIMED_FOR,
    )
    .order_by(OUTBOX.c.id)
)
_BY_IDS = (
    _HANDED_OVER
    .where(OUTBOX.c.id.in_(bindparam("ids", expanding=True)), OUTBOX.c.status == Outbox.PENDING, _CLAIMED_FOR)
    .order_by(OUTBOX.c.id)
)
_HELD = select(OUTBOX.c.id).where(OUTBOX.c.status == Outbox.PENDING, OUTBOX.c.claimed_by == bindparam("by"), _CLAIMED_FOR)
_RELEASE = (
    update(OUTBOX)
    .where(
        OUTBOX.c.status == Outbox.PENDING, OUTBOX.c.claimed_by == bindparam("by"),
        OUTBOX.c.claim_token != bindparam("token"),
    )
    .values(next_try_at=bindparam("now"), claimed_by="", claim_token="")
)
_OUTCOME = (
    update(OUTBOX)
    .where(OUTBOX.c.id == bindparam("row_id"))
    .values(
        status=bindparam("status"), attempts=bindparam("attempts"), last_error=bindparam("last_error"),
        next_try_at=bindparam("next_try_at"), claimed_by="", claim_token="",
    )
)

#: finished mails past their retention, by index (status, created_at); a chunk at a time
_FINISHED_BEFORE = (
    select(OUTBOX.c.id)
    .where(OUTBOX.c.status.in_(FINISHED), OUTBOX.c.created_at < bindparam("before"))
    .limit(bindparam("most"))
)
_DELETE = delete(OUTBOX).where(OUTBOX.c.id.in_(bindparam("ids", expanding=True)))


def queue(connection: Connection, rows: list[dict[str, object]]) -> None:
    if rows:
        connection.execute(_QUEUE, rows)


def claim_due(
    connection: Connection, now: datetime, until: datetime, most: int, by: str = "", token: str = "",
) -> Sequence[Row]:
    """The mails due now (id, recipient, raw, attempts), claimed until `until`
    by `by` for its `token` in this transaction; due mail another process
    has locked is left to it. The claims of another `serve` that is gone
    are due (`owners`)."""
    owners.take_over_from_the_gone(connection, now, by)
    rows = connection.execute(_DUE, {"now": now, "most": most}).all()
    if rows:
        connection.execute(_CLAIM, {"ids": [row.id for row in rows], "until": until, "by": by, "token": token})
    return rows


def release_claims(connection: Connection, by: str, token: str, now: datetime) -> int:
    """Make the mails `by` claimed for any token but `token` due now and
    unclaimed (their holders are gone); returns how many."""
    return connection.execute(_RELEASE, {"by": by, "token": token, "now": now}).rowcount


def held(connection: Connection, by: str, token: str) -> list[int]:
    """The ids of the mails still to be sent that `by` claimed for `token`."""
    return list(connection.execute(_HELD, {"by": by, "token": token}).scalars())


def read_handed_over(engine: Engine, inbound_ids: list[int], outbox_ids: list[int], token: str) -> list[Row]:
    """Without a write lock: the unsent replies to these inbound mails, and
    these outbox mails if they are still to be sent, claimed for `token`,
    each once, in the order they were queued; each row also says whether
    it goes to a player (`to_player`)."""
    rows: dict[int, Row] = {}
    with reading(engine) as connection:
        if inbound_ids:
            rows |= {row.id: row for row in connection.execute(_ANSWERING, {"inbound_ids": inbound_ids, "token": token})}
        if outbox_ids:
            rows |= {row.id: row for row in connection.execute(_BY_IDS, {"ids": outbox_ids, "token": token})}
    return [rows[row_id] for row_id in sorted(rows)]


def write_outcomes(connection: Connection, outcomes: list[dict[str, object]]) -> None:
    """Each as {row_id, status, attempts, last_error, next_try_at}."""
    if outcomes:
        connection.execute(_OUTCOME, outcomes)


def delete_finished(connection: Connection, before: datetime, most: int) -> int:
    """Delete at most `most` mails made before `before` that were sent or given up; returns how many."""
    ids = list(connection.scalars(_FINISHED_BEFORE, {"before": before, "most": most}))
    if ids:
        connection.execute(_DELETE, {"ids": ids})
    return len(ids)
