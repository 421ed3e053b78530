"""What `pbmserv-admin` reads and changes beyond the players' commands:
accounts with all their addresses, received and outgoing mail, counts.
Records, read and written through `Connection.execute`."""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime

from sqlalchemy import ColumnElement, Connection, Table, func, select, update

from pbmserv.store.inbound import INBOUND
from pbmserv.store.outbox import OUTBOX
from pbmserv.store.records import ADDRESSES, BOARDS, USERS
from pbmserv.store.states import Inbound, Outbox
from pbmserv.store.users import AddressRecord


@dataclass(frozen=True)
class AccountSummary:
    """An account as the operator sees it: every address, confirmed or not, in its order."""

    id: int
    userid: str
    created_at: datetime
    disabled_at: datetime | None
    disabled_reason: str
    addresses: tuple[AddressRecord, ...]


@dataclass(frozen=True)
class InboundRecord:
    """A received mail; `raw` as it is kept (see `models.InboundMail`)."""

    id: int
    received_at: datetime
    envelope_sender: str
    message_id: str
    status: str
    error: str
    processed_at: datetime | None
    raw: bytes


@dataclass(frozen=True)
class OutboxRecord:
    id: int
    created_at: datetime
    recipient: str
    kind: str
    message_id: str
    inbound_id: int | None
    status: str
    attempts: int
    next_try_at: datetime
    last_error: str
    raw: bytes


_INBOUND_COLUMNS = [INBOUND.c[f.name] for f in fields(InboundRecord)]
_OUTBOX_COLUMNS = [OUTBOX.c[f.name] for f in fields(OutboxRecord)]


# -- accounts --------------------------------------------------------------------
def accounts(connection: Connection, userid: str | None = None) -> list[AccountSummary]:
    """Every account by userid, or the one with `userid`."""
    query = select(USERS.c.id, USERS.c.userid, USERS.c.created_at, USERS.c.disabled_at, USERS.c.disabled_reason).order_by(USERS.c.userid)
    if userid is not None:
        query = query.where(USERS.c.userid == userid.lower())
    found = list(connection.execute(query))
    addresses: dict[int, list[AddressRecord]] = {row.id: [] for row in found}
    query = select(ADDRESSES.c.user_id, ADDRESSES.c.address, ADDRESSES.c.confirmed_at).order_by(ADDRESSES.c.position)
    if userid is not None:
        query = query.where(ADDRESSES.c.user_id.in_(list(addresses)))
    for user_id, address, confirmed_at in connection.execute(query):
        addresses[user_id].append(AddressRecord(address, confirmed_at))
    return [
        AccountSummary(row.id, row.userid, row.created_at, row.disabled_at, row.disabled_reason, tuple(addresses[row.id]))
        for row in found
    ]


def board_seats_and_statuses(connection: Connection) -> list[tuple[list[str], str]]:
    """The players and the status (active or finished) of every board."""
    return [(seats, status) for seats, status in connection.execute(select(BOARDS.c.seats, BOARDS.c.status))]


def last_mail_from(connection: Connection, addresses: list[str]) -> datetime | None:
    """When the last mail from one of the addresses was received."""
    return connection.scalar(select(func.max(INBOUND.c.received_at)).where(INBOUND.c.envelope_sender.in_(addresses)))


# -- mail ------------------------------------------------------------------------
def inbound_mails(connection: Connection, status: str | None, limit: int) -> list[InboundRecord]:
    """Received mail (in one status, if given), newest first."""
    query = select(*_INBOUND_COLUMNS).order_by(INBOUND.c.id.desc()).limit(limit)
    if status:
        query = query.where(INBOUND.c.status == status)
    return [InboundRecord(*row) for row in connection.execute(query)]


def find_inbound(connection: Connection, row_id: int) -> InboundRecord | None:
    row = connection.execute(select(*_INBOUND_COLUMNS).where(INBOUND.c.id == row_id)).first()
    return None if row is None else InboundRecord(*row)


def outbox_mails(connection: Connection, status: str | None, limit: int) -> list[OutboxRecord]:
    """Outgoing mail (in one status, if given), newest first."""
    query = select(*_OUTBOX_COLUMNS).order_by(OUTBOX.c.id.desc()).limit(limit)
    if status:
        query = query.where(OUTBOX.c.status == status)
    return [OutboxRecord(*row) for row in connection.execute(query)]


def find_outbox(connection: Connection, mail_id: int) -> OutboxRecord | None:
    row = connection.execute(select(*_OUTBOX_COLUMNS).where(OUTBOX.c.id == mail_id)).first()
    return None if row is None else OutboxRecord(*row)


def dead_outbox_ids(connection: Connection) -> list[int]:
    return list(connection.scalars(select(OUTBOX.c.id).where(OUTBOX.c.status == Outbox.DEAD).order_by(OUTBOX.c.id)))


def outbox_due_again(connection: Connection, mail_ids: list[int], now: datetime) -> None:
    """The mails are due now, their attempts counted anew."""
    if mail_ids:
        connection.execute(
            update(OUTBOX).where(OUTBOX.c.id.in_(mail_ids)).values(status=Outbox.PENDING, attempts=0, next_try_at=now)
        )


# -- counts ----------------------------------------------------------------------
def counts(connection: Connection) -> dict[str, int]:
    """How many users, boards by status, received mails by status and outgoing mails by status there are."""
    def count(table: Table, *where: ColumnElement[bool]) -> int:
        return connection.scalar(select(func.count()).select_from(table).where(*where)) or 0

    return {
        "users": count(USERS),
        "boards_active": count(BOARDS, BOARDS.c.status == "active"),
        "boards_finished": count(BOARDS, BOARDS.c.status == "finished"),
        **{f"inbound_{s}": count(INBOUND, INBOUND.c.status == s) for s in Inbound},
        **{f"outbox_{s}": count(OUTBOX, OUTBOX.c.status == s) for s in Outbox},
    }
