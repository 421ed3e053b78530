"""What players choose about others' boards and their own: subscriptions,
challenge policies and ratings, as records.

Only a board's subscribers are read for every move (`board_subscribers`,
prepared); the rest serves the rarer commands, through `Connection.execute`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from datetime import datetime
from typing import NamedTuple

from sqlalchemy import Connection, bindparam, delete, insert, select, update

from pbmserv.store.models import TABLES
from pbmserv.store.prepared import Prepared
from pbmserv.store.records import BOARDS, USERS

SUBSCRIPTIONS = TABLES["subscriptions"]
POLICIES = TABLES["game_policies"]
RATINGS = TABLES["ratings"]


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
_POLICY_COLUMNS = [POLICIES.c[f.name] for f in fields(PolicyRecord)]
_RATING_COLUMNS = [RATINGS.c[f.name] for f in fields(RatingRecord)]


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


# -- challenge policies ----------------------------------------------------------
def find_policy(connection: Connection, user_id: int, game_type: str) -> PolicyRecord | None:
    query = select(*_POLICY_COLUMNS).where(POLICIES.c.user_id == user_id, POLICIES.c.game_type == game_type)
    row = connection.execute(query).first()
    return None if row is None else PolicyRecord(*row)


def policies_in_game(connection: Connection, game_type: str) -> dict[str, PolicyRecord]:
    """Every policy for the game type, by userid."""
    query = (
        select(USERS.c.userid, *_POLICY_COLUMNS).join(USERS, USERS.c.id == POLICIES.c.user_id)
        .where(POLICIES.c.game_type == game_type).order_by(POLICIES.c.id)
    )
    return {userid: PolicyRecord(*rest) for userid, *rest in connection.execute(query)}


def save_policy(connection: Connection, policy: PolicyRecord) -> None:
    values = {name: value for name, value in asdict(policy).items() if name != "id"}
    if policy.id is None:
        connection.execute(insert(POLICIES).values(values))
    else:
        connection.execute(update(POLICIES).where(POLICIES.c.id == policy.id).values(values))


# -- ratings ---------------------------------------------------------------------
def find_rating(connection: Connection, user_id: int, game_type: str) -> RatingRecord | None:
    query = select(*_RATING_COLUMNS).where(RATINGS.c.user_id == user_id, RATINGS.c.game_type == game_type)
    row = connection.execute(query).first()
    return None if row is None else RatingRecord(*row)


def ratings_in_game(connection: Connection, game_type: str) -> dict[str, RatingRecord]:
    """Every rating in the game type, by userid."""
    query = (
        select(USERS.c.userid, *_RATING_COLUMNS).join(USERS, USERS.c.id == RATINGS.c.user_id)
        .where(RATINGS.c.game_type == game_type).order_by(RATINGS.c.id)
    )
    return {userid: RatingRecord(*rest) for userid, *rest in connection.execute(query)}


def save_rating(connection: Connection, rating: RatingRecord) -> None:
    values = {name: value for name, value in asdict(rating).items() if name != "id"}
    if rating.id is None:
        connection.execute(insert(RATINGS).values(values))
    else:
        connection.execute(update(RATINGS).where(RATINGS.c.id == rating.id).values(values))
