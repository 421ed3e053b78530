"""What players choose about others' boards and their own: subscriptions,
challenge policies and ratings, as records.

Only a board's subscribers are read for every move (`board_subscribers`,
prepared); the rest serves the rarer commands, through `Connection.execute`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from datetime import datetime
from typing import Any, NamedTuple, TypeVar

from sqlalchemy import Column, Connection, Table, bindparam, delete, insert, select, update

from pbmserv.store.models import GamePolicy, Rating, Subscription
from pbmserv.store.prepared import Prepared
from pbmserv.store.records import BOARDS, USERS

SUBSCRIPTIONS = Subscription.__table__
POLICIES = GamePolicy.__table__
RATINGS = Rating.__table__


class Subscriber(NamedTuple):
    """A subscriber of a board; `final_only`: only its final mail (`notify`)."""

    user_id: int
    userid: str
    final_only: bool


@dataclass(frozen=True)
class SubscriptionRecord:
    id: int
    user_id: int
    board_id: int
    final_only: bool


@dataclass(frozen=True)
class PolicyRecord:
    """A user's settings for one game type (see `models.GamePolicy`); `id` None: not stored yet."""

    id: int | None
    user_id: int
    game_type: str
    accepts_challenges: bool = True
    game_limit: int = 0  # most active games, 0 = no limit
    seeking: int = 0  # how many more games wanted
    subscribes_new_boards: bool = False
    seeking_since: datetime | None = None  # since when the player waits for the next game sought
    bot_after_hours: int = 0  # the bot takes the next game sought after this wait; 0: never


@dataclass(frozen=True)
class RatingRecord:
    """A user's rating and record in one game type; `id` None: not stored yet."""

    id: int | None
    user_id: int
    game_type: str
    rating: int
    won: int
    lost: int
    drawn: int
    last_game_at: datetime

    @property
    def games(self) -> int:
        return self.won + self.lost + self.drawn


_SUBSCRIBERS = Prepared(
    select(SUBSCRIPTIONS.c.user_id, USERS.c.userid, SUBSCRIPTIONS.c.final_only)
    .join(USERS, USERS.c.id == SUBSCRIPTIONS.c.user_id)
    .where(SUBSCRIPTIONS.c.board_id == bindparam("board_id"))
    .order_by(USERS.c.userid)
)
_SUBSCRIPTION_COLUMNS = [SUBSCRIPTIONS.c[f.name] for f in fields(SubscriptionRecord)]
PerGame = TypeVar("PerGame", PolicyRecord, RatingRecord)


# -- subscriptions ---------------------------------------------------------------
def board_subscribers(connection: Connection, board_id: int) -> list[Subscriber]:
    """The board's subscribers, by userid."""
    return [Subscriber(*row) for row in _SUBSCRIBERS.rows(connection, {"board_id": board_id})]


def find_subscription(connection: Connection, board_id: int, user_id: int) -> SubscriptionRecord | None:
    query = select(*_SUBSCRIPTION_COLUMNS).where(SUBSCRIPTIONS.c.board_id == board_id, SUBSCRIPTIONS.c.user_id == user_id)
    row = connection.execute(query).first()
    return None if row is None else SubscriptionRecord(*row)


def subscriptions_in_game(connection: Connection, user_id: int, game_type: str) -> list[SubscriptionRecord]:
    """The user's subscriptions to boards of the game type."""
    query = (
        select(*_SUBSCRIPTION_COLUMNS).join(BOARDS, BOARDS.c.id == SUBSCRIPTIONS.c.board_id)
        .where(SUBSCRIPTIONS.c.user_id == user_id, BOARDS.c.game_type == game_type)
        .order_by(SUBSCRIPTIONS.c.id)
    )
    return [SubscriptionRecord(*row) for row in connection.execute(query)]


def subscribe(connection: Connection, user_id: int, board_id: int, *, final_only: bool, now: datetime) -> None:
    """The user gets the board's mails (all, or the final one), whether or not they had a subscription to it."""
    found = find_subscription(connection, board_id, user_id)
    if found is None:
        connection.execute(insert(SUBSCRIPTIONS).values(user_id=user_id, board_id=board_id, final_only=final_only, created_at=now))
    else:
        connection.execute(update(SUBSCRIPTIONS).where(SUBSCRIPTIONS.c.id == found.id).values(final_only=final_only))


def unsubscribe(connection: Connection, subscription_ids: list[int]) -> None:
    if subscription_ids:
        connection.execute(delete(SUBSCRIPTIONS).where(SUBSCRIPTIONS.c.id.in_(subscription_ids)))


# -- challenge policies and ratings: one row per user and game type -------------------
def find_policy(connection: Connection, user_id: int, game_type: str) -> PolicyRecord | None:
    return _find(connection, PolicyRecord, POLICIES, user_id, game_type)


def policies_in_game(connection: Connection, game_type: str) -> dict[str, PolicyRecord]:
    """Every policy for the game type, by userid."""
    return _all_in_game(connection, PolicyRecord, POLICIES, game_type)


def save_policy(connection: Connection, policy: PolicyRecord) -> None:
    _save(connection, POLICIES, policy)


def find_rating(connection: Connection, user_id: int, game_type: str) -> RatingRecord | None:
    return _find(connection, RatingRecord, RATINGS, user_id, game_type)


def ratings_in_game(connection: Connection, game_type: str) -> dict[str, RatingRecord]:
    """Every rating in the game type, by userid."""
    return _all_in_game(connection, RatingRecord, RATINGS, game_type)


def save_rating(connection: Connection, rating: RatingRecord) -> None:
    _save(connection, RATINGS, rating)


def _find(connection: Connection, record: type[PerGame], table: Table, user_id: int, game_type: str) -> PerGame | None:
    query = select(*_columns(record, table)).where(table.c.user_id == user_id, table.c.game_type == game_type)
    row = connection.execute(query).first()
    return None if row is None else record(*row)


def _all_in_game(connection: Connection, record: type[PerGame], table: Table, game_type: str) -> dict[str, PerGame]:
    query = (
        select(USERS.c.userid, *_columns(record, table)).join(USERS, USERS.c.id == table.c.user_id)
        .where(table.c.game_type == game_type).order_by(table.c.id)
    )
    return {userid: record(*rest) for userid, *rest in connection.execute(query)}


def _save(connection: Connection, table: Table, row: PolicyRecord | RatingRecord) -> None:
    values = {name: value for name, value in asdict(row).items() if name != "id"}
    if row.id is None:
        connection.execute(insert(table).values(values))
    else:
        connection.execute(update(table).where(table.c.id == row.id).values(values))


def _columns(record: type[PolicyRecord | RatingRecord], table: Table) -> list[Column[Any]]:
    """The table's columns in the order of the record's fields."""
    return [table.c[field.name] for field in fields(record)]
