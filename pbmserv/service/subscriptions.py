"""Who besides the players gets a board's mails: its subscribers (every
mail, or with `notify` only the final one), and the users who subscribed to
every new board of a game type."""

from __future__ import annotations

from typing import NamedTuple

from sqlalchemy import bindparam, select

from pbmserv.service.context import Context
from pbmserv.store.models import GamePolicy, Subscription, User
from pbmserv.store.prepared import Prepared
from pbmserv.store.records import Account, BoardRecord

FINAL_ONLY = "(final result only)"


class Subscriber(NamedTuple):
    """A subscriber of a board; `final_only`: only its final mail (`notify`)."""

    user_id: int
    userid: str
    final_only: bool


# built once: this runs for every move
_SUBSCRIPTIONS, _USERS = Subscription.__table__, User.__table__
_OF_BOARD = Prepared(
    select(_SUBSCRIPTIONS.c.user_id, _USERS.c.userid, _SUBSCRIPTIONS.c.final_only)
    .join(_USERS, _USERS.c.id == _SUBSCRIPTIONS.c.user_id)
    .where(_SUBSCRIPTIONS.c.board_id == bindparam("board_id"))
    .order_by(_USERS.c.userid)
)


def board_subscriptions(ctx: Context, board: BoardRecord) -> list[Subscriber]:
    """The board's subscribers, by userid."""
    return [Subscriber(*row) for row in ctx.read(_OF_BOARD, {"board_id": board.id})]


def find_subscription(ctx: Context, board: BoardRecord, user: Account) -> Subscription | None:
    return ctx.session.scalar(
        select(Subscription).where(Subscription.board_id == board.id, Subscription.user_id == user.id)
    )


def watchers(board: BoardRecord, subscriptions: list[Subscriber]) -> list[str]:
    """The subscribers who get this board mail: all of them once the game is over."""
    return [s.userid for s in subscriptions if not s.final_only or board.result is not None]


def listed_names(subscriptions: list[Subscriber]) -> tuple[str, ...]:
    """The subscribers as a board mail lists them."""
    return tuple(f"{s.userid} {FINAL_ONLY}" if s.final_only else s.userid for s in subscriptions)


def subscribe_followers(ctx: Context, board: BoardRecord) -> None:
    """Everybody who subscribed to all boards of the type gets the new board (its players aside)."""
    followers = ctx.session.scalars(
        select(GamePolicy).where(GamePolicy.game_type == board.game_type, GamePolicy.subscribes_new_boards)
    )
    for policy in followers:
        if policy.user.userid not in board.seats:
            ctx.session.add(Subscription(user_id=policy.user_id, board_id=board.id, final_only=False, created_at=ctx.now))
    ctx.session.flush()
