"""Accounts, their addresses and their vacations, as records.

These serve the rarer commands (signup, change, confirm, signoff,
vacation, the operator's), so they run through `Connection.execute`; what
every move needs of an account is in `records` (`find_account`,
`confirmed_addresses`). An account's other rows (addresses, policies,
ratings, subscriptions, vacations) go with it: the foreign keys cascade.
"""

from __future__ import annotations

import secrets
from collections.abc import Collection
from dataclasses import dataclass, fields
from datetime import datetime

from sqlalchemy import Connection, String, and_, bindparam, cast, delete, insert, or_, select, text, update

from pbmserv.store import statements
from pbmserv.store.models import Vacation
from pbmserv.store.prepared import Prepared
from pbmserv.store.records import ADDRESSES, BOARDS, USERS, Account

VACATIONS = Vacation.__table__


@dataclass(frozen=True)
class AddressRecord:
    """One address of an account; `confirmed_at` None: it gets no mail but the request to confirm it."""

    address: str
    confirmed_at: datetime | None = None


@dataclass(frozen=True)
class VacationRecord:
    id: int
    user_id: int
    started_at: datetime
    ended_at: datetime | None  # None while it lasts


_ACCOUNT_COLUMNS = [USERS.c[f.name] for f in fields(Account)]
VACATION_COLUMNS = [VACATIONS.c[f.name] for f in fields(VacationRecord)]
_VACATIONS_OF = Prepared(
    select(*VACATION_COLUMNS).where(VACATIONS.c.user_id == bindparam("user_id")).order_by(VACATIONS.c.started_at)
)


# -- accounts --------------------------------------------------------------------
def account_by_id(connection: Connection, user_id: int) -> Account | None:
    row = connection.execute(select(*_ACCOUNT_COLUMNS).where(USERS.c.id == user_id)).first()
    return None if row is None else Account(*row)


def all_userids(connection: Connection) -> list[str]:
    return list(connection.scalars(select(USERS.c.userid).order_by(USERS.c.userid)))


def new_reply_secret() -> str:
    return secrets.token_hex(16)


def insert_account(connection: Connection, userid: str, password_hash: str, created_at: datetime) -> Account:
    reply_secret = new_reply_secret()
    values = {
        "userid": userid, "password_hash": password_hash, "created_at": created_at, "disabled_at": None,
        "disabled_reason": "", "reply_secret": reply_secret, "pictures": False,
        "timezone": "", "notifications": "every", "digest_hour": 8,
    }
    user_id = connection.scalar(insert(USERS).values(values).returning(USERS.c.id))
    assert user_id is not None, "an INSERT ... RETURNING returns the row's id"
    return Account(user_id, userid, password_hash, None, "", reply_secret)


def set_password_hash(connection: Connection, user_id: int, password_hash: str) -> None:
    """A new password, and with it a new reply secret: the reply addresses of earlier board mails stop working."""
    connection.execute(
        update(USERS).where(USERS.c.id == user_id).values(password_hash=password_hash, reply_secret=new_reply_secret())
    )


def set_pictures(connection: Connection, user_id: int, on: bool) -> None:
    connection.execute(update(USERS).where(USERS.c.id == user_id).values(pictures=on))


def set_timezone(connection: Connection, user_id: int, zone: str) -> None:
    """The zone the account's deadlines are shown in besides UTC ("": UTC alone)."""
    connection.execute(update(USERS).where(USERS.c.id == user_id).values(timezone=zone))


def seat_holder(connection: Connection, game_type: str, board: int, seat: int) -> tuple[str, str] | None:
    """As `statements.seat_holder`."""
    return statements.seat_holder(lambda sql, parameters: connection.execute(text(sql), parameters).first(), game_type, board, seat)


def seats_held(
    connection: Connection, on_boards: Collection[tuple[str, int, str]], anywhere: Collection[str] = (),
) -> list[tuple[str, int, int, str, str]]:
    """Every seat an account holds, with the account's reply secret (game,
    board, seat, userid, secret): of each (game, board, userid) of
    `on_boards`, on that board; of each userid of `anywhere`, on every
    running board (the seats have no index: the running boards are read
    whole, as JSON text). Two reads, however many are asked for."""
    if not on_boards and not anywhere:
        return []
    seats_text = cast(BOARDS.c.seats, String)
    boards = connection.execute(select(BOARDS.c.game_type, BOARDS.c.board, BOARDS.c.seats).where(or_(
        *(and_(BOARDS.c.game_type == game, BOARDS.c.board == board) for game, board, _ in on_boards),
        *(and_(BOARDS.c.status == "active", seats_text.like(f'%"{userid.replace("_", "^_")}"%', escape="^"))
          for userid in anywhere),
    ))).all()
    userids = {userid for _, _, userid in on_boards} | set(anywhere)
    reply_secrets: dict[str, str] = {row.userid: row.reply_secret for row in connection.execute(
        select(USERS.c.userid, USERS.c.reply_secret).where(USERS.c.userid.in_(userids))
    )}
    wanted = {(game, board, userid) for game, board, userid in on_boards}
    return [
        (row.game_type, row.board, seat, holder, reply_secrets[holder])
        for row in boards for seat, holder in enumerate(row.seats)
        if holder in reply_secrets and ((row.game_type, row.board, holder) in wanted or holder in anywhere)
    ]


def set_disabled(connection: Connection, user_id: int, disabled_at: datetime | None, reason: str) -> None:
    """Disable the account (`disabled_at` a time) or enable it again (None)."""
    connection.execute(update(USERS).where(USERS.c.id == user_id).values(disabled_at=disabled_at, disabled_reason=reason))


def delete_account(connection: Connection, user_id: int) -> None:
    connection.execute(delete(USERS).where(USERS.c.id == user_id))


# -- addresses -------------------------------------------------------------------
def addresses_of(connection: Connection, user_id: int) -> list[AddressRecord]:
    """Every address of the account, confirmed or not, in its order."""
    query = select(ADDRESSES.c.address, ADDRESSES.c.confirmed_at).where(ADDRESSES.c.user_id == user_id).order_by(ADDRESSES.c.position)
    return [AddressRecord(*row) for row in connection.execute(query)]


def write_addresses(connection: Connection, user_id: int, addresses: list[AddressRecord]) -> None:
    """The account's addresses become `addresses`, in that order. An address
    it had keeps its row (a new row would meet the old one in the unique
    constraint before the old one is deleted)."""
    had = {address for (address,) in connection.execute(select(ADDRESSES.c.address).where(ADDRESSES.c.user_id == user_id))}
    wanted = {a.address for a in addresses}
    if had - wanted:
        connection.execute(delete(ADDRESSES).where(ADDRESSES.c.user_id == user_id, ADDRESSES.c.address.in_(had - wanted)))
    for position, address in enumerate(addresses):
        values = {"position": position, "confirmed_at": address.confirmed_at}
        if address.address in had:
            mine = (ADDRESSES.c.user_id == user_id) & (ADDRESSES.c.address == address.address)
            connection.execute(update(ADDRESSES).where(mine).values(values))
        else:
            connection.execute(insert(ADDRESSES).values(user_id=user_id, address=address.address, **values))


# -- vacations -------------------------------------------------------------------
def vacations_of(connection: Connection, user_id: int) -> list[VacationRecord]:
    """The account's vacations, oldest first (prepared: every board mail to a player to move shows their clock)."""
    return [VacationRecord(*row) for row in _VACATIONS_OF.rows(connection, {"user_id": user_id})]


def running_vacations(connection: Connection) -> list[VacationRecord]:
    """Every vacation that has not ended, locked until the transaction ends."""
    query = select(*VACATION_COLUMNS).where(VACATIONS.c.ended_at.is_(None)).order_by(VACATIONS.c.id).with_for_update()
    return [VacationRecord(*row) for row in connection.execute(query)]


def start_vacation(connection: Connection, user_id: int, started_at: datetime) -> None:
    connection.execute(insert(VACATIONS).values(user_id=user_id, started_at=started_at, ended_at=None))


def end_vacation(connection: Connection, vacation_id: int, ended_at: datetime) -> None:
    connection.execute(update(VACATIONS).where(VACATIONS.c.id == vacation_id).values(ended_at=ended_at))
