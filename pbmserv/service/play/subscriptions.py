"""Who besides the players gets a board's mails: its subscribers (every
mail, or with `notify` only the final one), and the users who subscribed to
every new board of a game type."""

from __future__ import annotations

from pbmserv.service.processing.context import Context
from pbmserv.store import following
from pbmserv.store.following import Subscriber
from pbmserv.store.records import BoardRecord

FINAL_ONLY = "(final result only)"


def board_subscriptions(ctx: Context, board: BoardRecord) -> list[Subscriber]:
    """The board's subscribers, by userid."""
    return following.board_subscribers(ctx.connection, board.id)


def watchers(board: BoardRecord, subscriptions: list[Subscriber]) -> list[str]:
    """The subscribers who get this board mail: all of them once the game is over."""
    return [s.userid for s in subscriptions if not s.final_only or board.result is not None]


def listed_names(subscriptions: list[Subscriber]) -> tuple[str, ...]:
    """The subscribers as a board mail lists them."""
    return tuple(f"{s.userid} {FINAL_ONLY}" if s.final_only else s.userid for s in subscriptions)


def subscribe_followers(ctx: Context, board: BoardRecord) -> None:
    """Everybody who subscribed to all boards of the type gets the new board (its players aside)."""
    for userid, policy in following.policies_in_game(ctx.connection, board.game_type).items():
        if policy.subscribes_new_boards and userid not in board.seats:
            following.subscribe(ctx.connection, policy.user_id, board.id, final_only=False, now=ctx.now)
