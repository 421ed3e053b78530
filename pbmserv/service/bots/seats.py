"""The server's bots as players: who they are, and how a challenge seats one.

A challenge that names `bot` seats the bot of the strength `-bot=easy|normal|strong`
asks for (normal by default): `bot`, `bot-easy` or `bot-strong`, each an
account of its own, so each has its own rating per game. The account is
made when a challenge first names it, with a password nobody knows and no
address: no mail is ever sent to a bot, and timers never nag or forfeit
one. Its moves come as mails to its reply address, like any player's
(`service.bot_turns`).

The bots play players only, and a player may have only so many running
boards against the bot of each strength at once (`[bots]` in the
settings): the bots take turns between the players who wait for them
(`service.bot_queue`), and this bounds what one account keeps queued.
"""

from __future__ import annotations

import secrets

from pbmserv.config import Settings
from pbmserv.gamekit import Game
from pbmserv.service.processing.context import Context
from pbmserv.service.processing.errors import ServiceError
from pbmserv.store import records, users

#: the bot's userid for each strength
STRENGTHS = {"easy": "bot-easy", "normal": "bot", "strong": "bot-strong"}
BOT_USERIDS = frozenset(STRENGTHS.values())
#: the challenge option that picks the strength
STRENGTH_OPTION = "bot"


def is_bot(userid: str) -> bool:
    return userid.lower() in BOT_USERIDS


def strength_of(userid: str) -> str:
    return next(strength for strength, bot in STRENGTHS.items() if bot == userid.lower())


def seat_bots(
    ctx: Context, game: Game, players: list[str], options: tuple[tuple[str, str | None], ...], usage: str,
) -> tuple[list[str], tuple[tuple[str, str | None], ...]]:
    """The challenge's players with `bot` read as the bot of the strength
    asked for, and its options without `-bot`; makes the bots' accounts
    on first use."""
    asked = [value for name, value in options if name == STRENGTH_OPTION]
    rest = tuple((name, value) for name, value in options if name != STRENGTH_OPTION)
    strength = asked[-1] if asked else "normal"
    if strength is None or strength.lower() not in STRENGTHS:
        raise ServiceError(
            f"-bot={strength or ''} is not a strength of the bot.", f"write -bot=easy, -bot=normal or -bot=strong; {usage}",
            game=game.name,
        )
    if asked and not any(player.lower() == "bot" for player in players):
        raise ServiceError(
            "-bot chooses how well the bot plays, but the challenge does not name the bot.",
            f"name bot among the players, e.g. '{game.name} challenge -bot={strength} alice bot'", game=game.name,
        )
    seated = [STRENGTHS[strength.lower()] if player.lower() == "bot" else player for player in players]
    if seated and all(is_bot(userid) for userid in seated):
        raise ServiceError(
            "The bots play against players only: the challenge names no player but bots.",
            f"name yourself or another player besides the bot, e.g. '{game.name} challenge alice bot'", game=game.name,
        )
    for bot in dict.fromkeys(userid.lower() for userid in seated if is_bot(userid)):
        _check_running_boards(ctx, game, bot, [userid for userid in seated if not is_bot(userid)])
    for userid in seated:
        if is_bot(userid) and ctx.find_user(userid) is None:
            users.insert_account(ctx.connection, userid, ctx.passwords.hash(secrets.token_urlsafe(24)), ctx.now)
    return seated, rest


def most_boards(settings: Settings, bot: str) -> int:
    """How many running boards one player may have against `bot` at once."""
    return {
        "easy": settings.bot_easy_boards, "normal": settings.bot_normal_boards, "strong": settings.bot_strong_boards,
    }[strength_of(bot)]


def _check_running_boards(ctx: Context, game: Game, bot: str, players: list[str]) -> None:
    """Refuse a board against `bot` for a player who has as many running
    boards against it as the server allows at once, saying which and how to
    go on; and every board against it where the server offers none."""
    most = most_boards(ctx.settings, bot)
    others = ", ".join(f"-bot={strength}" for strength, userid in STRENGTHS.items() if userid != bot)
    if most == 0:
        raise ServiceError(f"This server offers no games against {bot}.", f"challenge another strength: {others}", game=game.name)
    for player in players:
        running = records.running_boards_of_all(ctx.connection, [player.lower(), bot])
        if len(running) >= most:
            listed = ", ".join(f"{board.game_type} {board.board}" for board in running)
            example = running[0]
            raise ServiceError(
                f"{player} already plays {len(running)} running boards against {bot} ({listed}): {most} at once is the"
                " most the server allows, so that the bots have time for every player.",
                f"finish or resign one of them first (e.g. '{example.game_type} resign {example.board} {player} PASSWORD'),"
                f" then challenge again; or challenge another strength: {others}",
                game=game.name,
            )
