"""The SQL of `inbound_mails`: storing and admitting arrivals, taking
pending mail in arrival order, and writing how each went."""

from __future__ import annotations

import importlib
import sqlite3
from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import Connection, Engine, Row, bindparam, delete, select, update
from sqlalchemy import exc as errors

from pbmserv.store.database import lost_a_race, writing
from pbmserv.store.models import Address, InboundMail
from pbmserv.store.spool import Arrival
from pbmserv.store.states import PROCESSED, Inbound

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

#: the oldest pending mails of a lane, by index alone (their contents are read one by one, as each is
#: processed: a batch may end after the first)
_OLDEST = select(INBOUND.c.id).where(INBOUND.c.status == Inbound.PENDING).order_by(INBOUND.c.id).limit(bindparam("most")).with_for_update()
_PLAYERS_LANE = _OLDEST.where(INBOUND.c.from_player)
_OTHERS = _OLDEST.where(~INBOUND.c.from_player)
_PENDING_MAIL = select(
    INBOUND.c.id, INBOUND.c.dedup_key, INBOUND.c.raw, INBOUND.c.sealed, INBOUND.c.envelope_sender, INBOUND.c.reply_token,
).where(INBOUND.c.id == bindparam("row_id"))
_CONFIRMED = select(Address.address).where(
    Address.confirmed_at.is_not(None), Address.address.in_(bindparam("senders", expanding=True)),
)
_ANY_PENDING = select(INBOUND.c.id).where(INBOUND.c.status == Inbound.PENDING).limit(1)
_PENDING_ONE = (
    select(INBOUND.c.id, INBOUND.c.raw, INBOUND.c.sealed, INBOUND.c.envelope_sender, INBOUND.c.reply_token)
    .where(INBOUND.c.dedup_key == bindparam("dedup_key"), INBOUND.c.status == Inbound.PENDING)
    .with_for_update()
)
_BY_ID = select(
    INBOUND.c.id, INBOUND.c.raw, INBOUND.c.sealed, INBOUND.c.envelope_sender, INBOUND.c.reply_token, INBOUND.c.status,
).where(
    INBOUND.c.id == bindparam("row_id")
).with_for_update()
_AGAIN = (
    update(INBOUND)
    .where(INBOUND.c.id == bindparam("row_id"), INBOUND.c.status.in_((Inbound.FAILED, Inbound.DROPPED)))
    .values(status=Inbound.PENDING, error="", processed_at=None)
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
WAITS_ITS_TURN = "waits its turn: it names an account that older mail may sign up or confirm"
_WAITS = update(INBOUND).where(INBOUND.c.id == bindparam("row_id")).values(error=bindparam("error"), from_player=False)
_FORGET_ORIGINALS = (
    update(INBOUND)
    .where(INBOUND.c.status == Inbound.FAILED, INBOUND.c.processed_at < bindparam("before"), INBOUND.c.sealed.is_not(None))
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
        new = [mail for mail in arrivals if mail.dedup_key not in known]
        players = _proven_players(connection, new) if new else set()
        fresh: dict[str, dict[str, object]] = {}
        for mail in new:
            fresh.setdefault(mail.dedup_key, _pending_row(mail, players))
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
        players = _proven_players(connection, arrivals)
        connection.execute(_new_mails("sqlite"), [_pending_row(mail, players) for mail in arrivals])


def _proven_players(connection: Connection, arrivals: list[Arrival]) -> set[str]:
    """The senders the trusted mail server vouches for that are a confirmed address of an account."""
    verified = list({mail.verified_sender for mail in arrivals if mail.verified_sender})
    return set(connection.scalars(_CONFIRMED, {"senders": verified})) if verified else set()


def _pending_row(mail: Arrival, players: set[str]) -> dict[str, object]:
    """A mail's row; it goes in the players' lane if it proves whose it is:
    it came to a reply address, or the trusted mail server vouches that a
    confirmed address of an account sent it. A From line alone proves nothing."""
    return {
        "received_at": mail.received_at, "envelope_sender": mail.envelope_sender, "message_id": mail.message_id,
        "dedup_key": mail.dedup_key, "raw": mail.raw, "sealed": mail.sealed, "status": Inbound.PENDING, "error": "",
        "reply_token": mail.reply_token, "from_player": bool(mail.reply_token) or mail.verified_sender in players,
    }


def next_pending(connection: Connection, most: int) -> tuple[list[int], set[int]]:
    """The ids of the pending mails to process next, locked, in the order
    to process them (`pending_mail` reads each), and of those among them
    that go ahead of older mail. The players' lane comes first: mail that
    proves whose it is (`InboundMail.from_player`: to a reply address, or
    vouched for by the trusted mail server), in arrival order; the oldest
    of the rest fill the batch, at least one of them if there is any, so
    that the rest are never stopped however much proven mail comes. A
    stranger's mail, whatever its From, waits behind proven mail only."""
    players = list(connection.scalars(_PLAYERS_LANE, {"most": most}))
    others = list(connection.scalars(_OTHERS, {"most": most}))
    lane = players[:max(1, most - 1)] if others else players
    batch = [*lane, *others[:most - len(lane)]]
    return batch, {row_id for row_id in lane if others and row_id > others[0]}


def pending_mail(connection: Connection, row_id: int) -> Row:
    """What the worker reads of a mail `next_pending` gave it (id, dedup_key, raw, sealed, envelope_sender, reply_token)."""
    return connection.execute(_PENDING_MAIL, {"row_id": row_id}).one()


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
        if outcome["status"] == Inbound.PENDING:
            statement = _WAITS
        else:
            statement = _FAILED if outcome["status"] == Inbound.FAILED else _DONE_KEPT if "raw" in outcome else _DONE
        by_statement.setdefault(statement, []).append(outcome)
    for statement, rows in by_statement.items():
        connection.execute(statement, rows)


def forget_failed_originals(connection: Connection, before: datetime) -> None:
    connection.execute(_FORGET_ORIGINALS, {"before": before})


#: processed mails past their retention, by index (status, processed_at); a chunk at a time
_PROCESSED_BEFORE = (
    select(INBOUND.c.id)
    .where(INBOUND.c.status.in_(PROCESSED), INBOUND.c.processed_at < bindparam("before"))
    .limit(bindparam("most"))
)
_DELETE = delete(INBOUND).where(INBOUND.c.id.in_(bindparam("ids", expanding=True)))


def delete_processed(connection: Connection, before: datetime, most: int) -> int:
    """Delete at most `most` mails processed before `before` (their outbox
    rows keep no link to them); returns how many."""
    ids = list(connection.scalars(_PROCESSED_BEFORE, {"before": before, "most": most}))
    if ids:
        connection.execute(_DELETE, {"ids": ids})
    return len(ids)
