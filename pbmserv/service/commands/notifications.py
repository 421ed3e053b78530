"""`notifications` and `GAME notifications board`: which board mails a
player gets, for all their boards and for one, and the hour of their daily
digest (docs/decisions/0153-notifications.md)."""

from __future__ import annotations

from dataclasses import replace

from pbmserv.gamekit import Game
from pbmserv.protocol.commands import BOARD_DEFAULT, BoardNotifications, Notifications
from pbmserv.service.commands.accounts import to_account_and_sender
from pbmserv.service.commands.handling import handles
from pbmserv.service.play import views
from pbmserv.service.play.board import check_running, load, playing_seat
from pbmserv.service.play.notifications import DIGEST
from pbmserv.service.processing.context import Context, Reply
from pbmserv.store import notifications as stored
from pbmserv.store.records import Account

#: what each mode sends, as the answers say it: of all the player's boards, and of one
MODE_MEANS = {
    "every": ("a board mail each time one of them changes", "a board mail each time it changes"),
    "turn": (
        "a board mail only when one of them waits for your move or your answer to an offer",
        "a board mail only when it waits for your move or your answer to an offer",
    ),
    "digest": (
        "no board mail as others play, but one mail a day with every one of them that waits for your move",
        "no board mail as others play, but a place in your daily digest while it waits for your move",
    ),
    "results": ("only the mail that ends each game", "only the mail that ends the game"),
}
#: the most boards with a choice of their own an answer lists
MOST_LISTED_BOARDS = 50


@handles(Notifications)
def notifications(ctx: Context, command: Notifications) -> list[Reply]:
    user = ctx.authenticate(command.userid, command.password)
    if command.mode is not None:
        hour = user.digest_hour if command.hour is None else command.hour
        stored.set_account_mode(ctx.connection, user.id, command.mode, hour)
        user = replace(user, notifications=command.mode, digest_hour=hour)
    return [Reply(to_account_and_sender(ctx, user), f"pbmserv notifications {user.userid}", in_force(ctx, user))]


@handles(BoardNotifications)
def board_notifications(ctx: Context, game: Game, command: BoardNotifications) -> list[Reply]:
    user = ctx.authenticate(command.userid, command.password)
    board = load(ctx.connection, game, command.board)
    playing_seat(board, user.userid)
    check_running(board)
    mode = None if command.mode == BOARD_DEFAULT else command.mode
    stored.set_board_mode(ctx.connection, board.record.id, user.id, mode)
    number = board.record.board
    if mode is None:
        said = f"From now on {game.title} board {number} sends you what all your boards do ({user.notifications}), {user.userid}."
    else:
        said = f"From now on {game.title} board {number} sends you {MODE_MEANS[mode][1]} ({mode}), {user.userid}."
    body = views.wrap(said, hang="") + "\n\n" + in_force(ctx, user)
    return [Reply(to_account_and_sender(ctx, user), f"{game.title} Board {number} notifications {user.userid}", body)]


def in_force(ctx: Context, user: Account) -> str:
    """What the player's boards send them, all of them and those with a choice of their own, and how to change it."""
    boards = stored.running_board_modes(ctx.connection, user.id)
    paragraphs = [
        f"{user.userid}, your boards send you {MODE_MEANS[user.notifications][0]} ({user.notifications}).",
    ]
    if boards:
        listed = "; ".join(f"{game_type} {board}: {mode}" for game_type, board, mode in boards[:MOST_LISTED_BOARDS])
        more = f"; and {len(boards) - MOST_LISTED_BOARDS} more" if len(boards) > MOST_LISTED_BOARDS else ""
        paragraphs.append(f"Boards with a choice of their own: {listed}{more}.")
    if user.notifications == DIGEST or any(mode == DIGEST for _, _, mode in boards):
        zone = user.timezone or "UTC"
        paragraphs.append(
            f"The digest comes once a day at {user.digest_hour:02d}:00 {zone} or at the first hourly round after it, "
            "as one mail with every board in digest mode that waits for your move, each with its reply address; "
            "none on a day when no board waits."
            + ("" if user.timezone else " 'timezone userid password ZONE' makes its hour yours.")
        )
    paragraphs += [
        "Whatever the mode, the answer to your own move or command, the first mail of a new board, the mail that "
        "ends a game and the reminders before a forfeit still come.",
        f"'notifications {user.userid} password every|turn|digest|results [HOUR]' chooses for all your boards; "
        f"'GAME notifications BOARD {user.userid} password MODE' for one of them, 'default' going back to the "
        "choice for all.",
    ]
    return "\n\n".join(views.wrap(paragraph, hang="") for paragraph in paragraphs) + "\n"
