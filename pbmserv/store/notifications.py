"""Which board mails a player gets (`notifications`), for all their boards
and for one board, and when their last digest was sent, as records.

A board's choices are read for every board mail (`board_modes`, prepared);
the rest serves the `notifications` commands and the timer pass's digests.
"""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from sqlalchemy import Connection, bindparam, delete, insert, or_, select, update

from pbmserv.store.models import BoardNotification
from pbmserv.store.prepared import Prepared
from pbmserv.store.records import BOARDS, USERS

BOARD_NOTIFICATIONS = BoardNotification.__table__

_BOARD_MODES = Prepared(
    select(BOARD_NOTIFICATIONS.c.user_id, BOARD_NOTIFICATIONS.c.mode).where(BOARD_NOTIFICATIONS.c.board_id == bindparam("board_id"))
)


class BoardMode(NamedTuple):
    """A player's choice for one running board."""

    game_type: str
    board: int
    mode: str


class DigestReader(NamedTuple):
    """An account that has boards in digest mode, all of them or some, and when its last digest was sent."""

    userid: str
    digest_sent_at: datetime | None


def board_modes(connection: Connection, board_id: int) -> dict[int, str]:
    """The choices of the board's players made for it alone, by account id."""
    return {user_id: mode for user_id, mode in _BOARD_MODES.rows(connection, {"board_id": board_id})}


def set_account_mode(connection: Connection, user_id: int, mode: str, hour: int) -> None:
    connection.execute(update(USERS).where(USERS.c.id == user_id).values(notifications=mode, digest_hour=hour))


def set_board_mode(connection: Connection, board_id: int, user_id: int, mode: str | None) -> None:
    """The player's choice for the board; None: the account's own again."""
    where = (BOARD_NOTIFICATIONS.c.board_id == board_id, BOARD_NOTIFICATIONS.c.user_id == user_id)
    connection.execute(delete(BOARD_NOTIFICATIONS).where(*where))
    if mode is not None:
        connection.execute(insert(BOARD_NOTIFICATIONS).values(board_id=board_id, user_id=user_id, mode=mode))


def running_board_modes(connection: Connection, user_id: int) -> list[BoardMode]:
    """The player's choices for single boards that still run, by game type and board."""
    query = (
        select(BOARDS.c.game_type, BOARDS.c.board, BOARD_NOTIFICATIONS.c.mode)
        .join(BOARDS, BOARDS.c.id == BOARD_NOTIFICATIONS.c.board_id)
        .where(BOARD_NOTIFICATIONS.c.user_id == user_id, BOARDS.c.status == "active")
        .order_by(BOARDS.c.game_type, BOARDS.c.board)
    )
    return [BoardMode(*row) for row in connection.execute(query)]


def digest_readers(connection: Connection) -> list[DigestReader]:
    """The accounts in digest mode, or with a running board in it, by userid."""
    on_a_board = (
        select(BOARD_NOTIFICATIONS.c.user_id)
        .join(BOARDS, BOARDS.c.id == BOARD_NOTIFICATIONS.c.board_id)
        .where(BOARD_NOTIFICATIONS.c.mode == "digest", BOARDS.c.status == "active")
    )
    query = (
        select(USERS.c.userid, USERS.c.digest_sent_at)
        .where(or_(USERS.c.notifications == "digest", USERS.c.id.in_(on_a_board)), USERS.c.disabled_at.is_(None))
        .order_by(USERS.c.userid)
    )
    return [DigestReader(*row) for row in connection.execute(query)]


def take_digest_day(connection: Connection, user_id: int, last_sent: datetime | None, now: datetime) -> bool:
    """Mark the account's digest sent at `now` if it still was last sent at
    `last_sent`; False if another timer pass marked it first (on PostgreSQL
    the second waits for the first to commit, then finds the row changed)."""
    sent = USERS.c.digest_sent_at
    unchanged = sent.is_(None) if last_sent is None else sent == last_sent
    return connection.execute(update(USERS).where(USERS.c.id == user_id, unchanged).values(digest_sent_at=now)).rowcount == 1
