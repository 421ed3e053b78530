"""Who besides the players gets a board's mails: its subscribers (every
mail, or with `notify` only the final one), and the users who subscribed to
every new board of a game type."""

from __future__ import annotations

from sqlalchemy import select

from pbmserv.service.context import Context
from pbmserv.store.models import Board, GamePolicy, Subscription, User

FINAL_ONLY = "(final result only)"


def board_subscriptions(ctx: Context, board: Board) -> list[Subscription]:
    return list(ctx.session.scalars(
        select(Subscription).join(User).where(Subscription.board_id == board.id).order_by(User.userid)
    ))


def find_subscription(ctx: Context, board: Board, user: User) -> Subscription | None:
    return ctx.session.scalar(
        select(Subscription).where(Subscription.board_id == board.id, Subscription.user_id == user.id)
    )


def watchers(board: Board, subscriptions: list[Subscription]) -> list[str]:
    """The subscribers who get this board mail: all of them once the game is over."""
    return [s.user.userid for s in subscriptions if not s.final_only or board.result is not None]


def listed_names(subscriptions: list[Subscription]) -> tuple[str, ...]:
    """The subscribers as a board mail lists them."""
    return tuple(f"{s.user.userid} {FINAL_ONLY}" if s.final_only else s.user.userid for s in subscriptions)


def subscribe_followers(ctx: Context, board: Board) -> None:
    """Everybody who subscribed to all boards of the type gets the new board (its players aside)."""
    followers = ctx.session.scalars(
        select(GamePolicy).where(GamePolicy.game_type == board.game_type, GamePolicy.subscribes_new_boards)
    )
    for policy in followers:
        if policy.user.userid not in board.seats:
            ctx.session.add(Subscription(user_id=policy.user_id, board_id=board.id, final_only=False, created_at=ctx.now))
    ctx.session.flush()
