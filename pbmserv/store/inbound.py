"""The SQL of `inbound_mails`: storing and admitting arrivals, taking
pending mail in arrival order, and writing how each went."""

from __future__ import annotations

import importlib
import sqlite3
from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import Connection, Engine, Row, bindparam, select, update
from sqlalchemy import exc as errors

from pbmserv.store.database import lost_a_race, writing
from pbmserv.store.models import Address, InboundMail
from pbmserv.store.spool import Arrival

INBOUND = InboundMail.__table__

#: errors of the database connection, not of a mail: a batch meeting one is tried again later
CONNECTION_ERRORS = (errors.OperationalError, errors.InterfaceError)
#: errors that say the database takes no mail now (an outage, a lock held past
#: the busy timeout, a full disk): every mail waits for its sender's retry
OUTAGE_ERRORS = (errors.OperationalError, errors.InterfaceError, sqlite3.OperationalError, OSError)
#: errors that say this mail can never be stored as it is: PostgreSQL refuses
#: a NUL or an over-long value in a text column, either database a string that
#: is not valid Unicode
UNSTORABLE_ERRORS = (errors.DataError, UnicodeError)

_PENDING = (
    select(INBOUND.c.id, INBOUND.c.dedup_key, INBOUND.c.raw, INBOUND.c.sealed, INBOUND.c.envelope_sender, INBOUND.c.reply_token)
    .where(INBOUND.c.status == "pending")
    .order_by(INBOUND.c.id)
    .limit(bindparam("most"))
    .with_for_update()
)
#: pending mail whose envelope sender is a confirmed address of an account: a player's
_PENDING_FROM_PLAYERS = (
    select(INBOUND.c.id, INBOUND.c.dedup_key, INBOUND.c.raw, INBOUND.c.sealed, INBOUND.c.envelope_sender, INBOUND.c.reply_token)
    .where(
        INBOUND.c.status == "pending", INBOUND.c.error == "",
        INBOUND.c.envelope_sender.in_(select(Address.address).where(Address.confirmed_at.is_not(None)).scalar_subquery()),
    )
    .order_by(INBOUND.c.id)
    .limit(bindparam("most"))
    .with_for_update()
)
_ANY_PENDING = select(INBOUND.c.id).where(INBOUND.c.status == "pending").limit(1)
_PENDING_ONE = (
    select(INBOUND.c.id, INBOUND.c.raw, INBOUND.c.sealed, INBOUND.c.envelope_sender, INBOUND.c.reply_token)
    .where(INBOUND.c.dedup_key == bindparam("dedup_key"), INBOUND.c.status == "pending")
    .with_for_update()
)
_BY_ID = select(
    INBOUND.c.id, INBOUND.c.raw, INBOUND.c.sealed, INBOUND.c.envelope_sender, INBOUND.c.reply_token, INBOUND.c.status,
).where(
    INBOUND.c.id == bindparam("row_id")
).with_for_update()
_AGAIN = (
    update(INBOUND)
    .where(INBOUND.c.id == bindparam("row_id"), INBOUND.c.status.in_(("failed", "dropped")))
    .values(status="pending", error="", processed_at=None)
)
_MARK = (
    update(INBOUND)
    .where(INBOUND.c.id == bindparam("row_id"))
    .values(status=bindparam("status"), error=bindparam("error"), processed_at=bindparam("processed_at"))
)
#: a processed mail: the sealed original goes, and what is kept of it is written where it changed
_DONE = _MARK.values(sealed=None)
_DONE_KEPT = _DONE.values(raw=bindparam("raw"))
#: a failed mail keeps its sealed original (for `pbmserv-admin inbound retry`) until the timer pass drops it
_FAILED = _MARK.values(raw=bindparam("raw"))
#: what a player's mail that named an account not known yet, taken ahead of older mail, is left pending with
WAITS_ITS_TURN = "waits its turn: it names an account that older mail may sign up"
_WAITS = update(INBOUND).where(INBOUND.c.id == bindparam("row_id")).values(error=bindparam("error"))
_FORGET_ORIGINALS = (
    update(INBOUND)
    .where(INBOUND.c.status == "failed", INBOUND.c.processed_at < bindparam("before"), INBOUND.c.sealed.is_not(None))
    .values(sealed=None)
)


@cache
def _new_mails(dialect: str) -> Any:
    """Insert mails whose dedup key is new; a key already stored (by
    another process meanwhile, or an earlier admission) is left out, not
    an error (which, on PostgreSQL, would also abort psycopg's pipeline).
    Made for the database in use only: SQLAlchemy's PostgreSQL dialect
    takes longer to import than a `receive` on SQLite takes to store."""
    dialect_insert = importlib.import_module(f"sqlalchemy.dialects.{dialect}").insert
    return dialect_insert(INBOUND).on_conflict_do_nothing(index_elements=[INBOUND.c.dedup_key])


@cache
def _store_statement(dialect: str) -> Any:
    """`_new_mails`, giving back (dedup key, id) of each mail stored."""
    return _new_mails(dialect).returning(INBOUND.c.dedup_key, INBOUND.c.id)


_STORED = select(INBOUND.c.dedup_key, INBOUND.c.id).where(INBOUND.c.dedup_key.in_(bindparam("keys", expanding=True)))


def store(engine: Engine, arrivals: list[Arrival]) -> list[tuple[int, bool]]:
    """Commit the mails durably in one transaction; (row id, True if it was
    a duplicate) for each. A mail that another process stores at the same
    moment is left to it and counted a duplicate here. On PostgreSQL the
    two transactions may deadlock, and one is rolled back; it is then done
    again, and finds that process's mails stored. Each time, one more of
    the mails is stored, so this ends."""
    for _ in range(len(arrivals)):
        try:
            return _store(engine, arrivals)
        except errors.DBAPIError as error:
            if not lost_a_race(error):
                raise
    return _store(engine, arrivals)


def _store(engine: Engine, arrivals: list[Arrival]) -> list[tuple[int, bool]]:
    with writing(engine, durable=True) as connection:  # the sender is told next that the mail is safe
        keys = list(dict.fromkeys(mail.dedup_key for mail in arrivals))
        known = {key: row_id for key, row_id in connection.execute(_STORED, {"keys": keys})}
        fresh: dict[str, dict[str, object]] = {}
        for mail in arrivals:
            if mail.dedup_key not in known:
                fresh.setdefault(mail.dedup_key, _pending_row(mail))
        stored: dict[str, int] = {}
        if fresh:
            rows = connection.execute(_store_statement(connection.dialect.name), list(fresh.values()))
            stored = {key: row_id for key, row_id in rows}
            if len(stored) < len(fresh):  # stored by another process since the first look
                taken = connection.execute(_STORED, {"keys": [key for key in fresh if key not in stored]})
                known.update({key: row_id for key, row_id in taken})
    outcomes, seen = [], set()
    for key in (mail.dedup_key for mail in arrivals):
        if key in known:
            outcomes.append((known[key], True))
        else:  # stored now, in arrival order; a second copy in the same group is a duplicate
            outcomes.append((stored[key], key in seen))
            seen.add(key)
    return outcomes


def admit(connection: Connection, arrivals: list[Arrival]) -> None:
    """Move spooled mails into the database in this transaction; a dedup key already stored is left out."""
    if arrivals:
        connection.execute(_new_mails("sqlite"), [_pending_row(mail) for mail in arrivals])


def _pending_row(mail: Arrival) -> dict[str, object]:
    return {
        "received_at": mail.received_at, "envelope_sender": mail.envelope_sender, "message_id": mail.message_id,
        "dedup_key": mail.dedup_key, "raw": mail.raw, "sealed": mail.sealed, "status": "pending", "error": "",
        "reply_token": mail.reply_token,
    }


def next_pending(connection: Connection, most: int) -> tuple[list[Row], set[int]]:
    """The pending mails to process next, locked (id, dedup_key, raw,
    sealed, envelope_sender, reply_token) in the order to process them, and
    the ids of those that go ahead of older mail. Without a backlog: the
    oldest, in arrival order. When more than `most` are pending (a backlog,
    such as a flood of strangers' mail), players' mails (from a confirmed
    address of an account) come first, in arrival order, and the oldest of
    the others fill the rest; a player's mail that had to wait for older
    mail once (`WAITS_ITS_TURN`) is left to its turn. A sender's mails stay
    in their order either way: all of them are a player's or none."""
    oldest = connection.execute(_PENDING, {"most": most + 1}).all()
    if len(oldest) <= most:
        return list(oldest), set()
    players = connection.execute(_PENDING_FROM_PLAYERS, {"most": most}).all()
    taken = {row.id for row in players}
    oldest_other = next(row.id for row in oldest if row.id not in taken)
    batch = [*players, *(row for row in oldest if row.id not in taken)][:most]
    return batch, {row.id for row in players if row.id > oldest_other}


def any_pending(connection: Connection) -> bool:
    return connection.execute(_ANY_PENDING).first() is not None


def pending_by_key(connection: Connection, dedup_key: str) -> Row | None:
    return connection.execute(_PENDING_ONE, {"dedup_key": dedup_key}).first()


def by_id(connection: Connection, row_id: int) -> Row | None:
    return connection.execute(_BY_ID, {"row_id": row_id}).first()


def make_pending_again(connection: Connection, row_id: int) -> None:
    connection.execute(_AGAIN, {"row_id": row_id})


def write_outcomes(connection: Connection, outcomes: list[dict[str, object]], processed_at: datetime) -> None:
    """Each mail's status, error, time and (where given as "raw") what is kept of it: one statement by kind."""
    by_statement: dict[Any, list[dict[str, object]]] = {}
    for outcome in outcomes:
        outcome["processed_at"] = processed_at
        if outcome["status"] == "pending":
            statement = _WAITS
        else:
            statement = _FAILED if outcome["status"] == "failed" else _DONE_KEPT if "raw" in outcome else _DONE
        by_statement.setdefault(statement, []).append(outcome)
    for statement, rows in by_statement.items():
        connection.execute(statement, rows)


def forget_failed_originals(connection: Connection, before: datetime) -> None:
    connection.execute(_FORGET_ORIGINALS, {"before": before})
