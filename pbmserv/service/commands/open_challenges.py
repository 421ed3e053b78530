"""Open challenges (`GAME open`): a player posts a board of the options
and timers they choose, that any other player may take (`GAME take`);
the poser may withdraw it (`GAME withdraw`), and the timer pass lets it
expire after OPEN_DAYS. Taken, it starts the way a challenge does. See
docs/decisions/0152-open-challenges.md."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from pbmserv.gamekit import Game, InvalidOption
from pbmserv.protocol.commands import ListOpen, PostOpen, TakeOpen, WithdrawOpen
from pbmserv.service.commands import policies
from pbmserv.service.commands.boards import start_board, syntax
from pbmserv.service.commands.handling import handles
from pbmserv.service.play import views
from pbmserv.service.play.board_mails import mails_to_players
from pbmserv.service.play.ratings import rating_of
from pbmserv.service.processing.context import Context, Reply, as_utc
from pbmserv.service.processing.errors import ServiceError
from pbmserv.store import openings
from pbmserv.store.openings import OpenRecord
from pbmserv.store.states import Kind

#: how long an open challenge waits for a taker
OPEN_DAYS = 7
#: the most open challenges of one game type a player may have posted at once
MOST_OPEN = 3


def _switches(options: dict[str, Any], timers: dict[str, Any]) -> list[str]:
    """The options and timers of an open challenge as they were written."""
    chosen = [f"-{name}" if value is None else f"-{name}={value}" for name, value in options.items()]
    return chosen + [f"--{name}={days}" for name, days in timers.items()]


def _terms(ctx: Context, options: dict[str, Any], timers: dict[str, Any]) -> str:
    """The options and timers of an open challenge, as its list and answers show them."""
    chosen = " ".join(_switches(options, {}))
    nag = timers.get("nagtime", ctx.settings.nagtime)
    forfeit = timers.get("forfeittime", ctx.settings.forfeittime)
    return f"{chosen or 'the default options'}; reminder after {nag} and forfeit after {forfeit} days"


def _expires(opened: OpenRecord) -> str:
    return f"{as_utc(opened.created_at) + timedelta(days=OPEN_DAYS):%Y-%m-%d %H:%M} UTC"


def _found(ctx: Context, game: Game, number: int, usage: str) -> OpenRecord:
    opened = openings.find(ctx.connection, game.name, number)
    if opened is None:
        raise ServiceError(
            f"There is no open {game.title} challenge {number}: it was taken, withdrawn or has expired, or never was.",
            f"'{game.name} open' lists the open challenges with their numbers; then: {usage}", game=game.name,
        )
    return opened


@handles(PostOpen)
def post_open(ctx: Context, game: Game, command: PostOpen) -> list[Reply]:
    usage = syntax(game.name, "open")
    user = ctx.authenticate(command.userid, command.password)
    why = policies.why_not_free(ctx, game, user, policies.policy_for(ctx, user, game.name))
    if why:
        raise ServiceError(f"No open challenge can be posted for you now: {why}.", f"post it once that has changed: {usage}", game=game.name)
    if openings.count_of(ctx.connection, game.name, user.id) >= MOST_OPEN:
        raise ServiceError(
            f"{user.userid} has {MOST_OPEN} open {game.title} challenges already, the most one player may have at once.",
            f"'{game.name} open' lists them; take one back with '{game.name} withdraw number {user.userid} password'",
            game=game.name,
        )
    options, timers = dict(command.options), dict(command.timers)
    try:
        game.resolve_options(options)
    except InvalidOption as error:
        raise ServiceError(error.message, f"{usage}; '{game.name} help' lists the options", game=game.name) from None
    number = openings.post(ctx.connection, game.name, user.id, options, timers, ctx.now)
    opened = _found(ctx, game, number, usage)
    text = views.wrap(
        f"Open {game.title} challenge {number} of {user.userid} is posted: {_terms(ctx, options, timers)}. Any other "
        f"player may take it until {_expires(opened)} with '{game.name} take {number} userid password'; you will "
        f"have the first seat. '{game.name} withdraw {number} {user.userid} password' takes it back.", hang="",
    )
    return [Reply((ctx.sender,), f"{game.title} open challenge {number}", text + "\n")]


@handles(ListOpen)
def list_open(ctx: Context, game: Game, command: ListOpen) -> list[Reply]:
    posted = openings.in_game(ctx.connection, game.name)
    lines = [f"Open {game.title} challenges: {len(posted) or 'none'}.", ""]
    for opened in posted:
        poser = ctx.known_user(opened.userid)
        lines.append(views.wrap(
            f"{opened.number:>5}  {opened.userid} ({rating_of(ctx, poser.userid, game.name)}): {_terms(ctx, opened.options, opened.timers)};"
            f" until {_expires(opened)}", hang=" " * 7,
        ))
    lines += [""] if posted else []
    lines.append(views.wrap(
        f"Take one with '{game.name} take number userid password'; post one with "
        f"'{game.name} open userid password [-option=value...] [--nagtime=days] [--forfeittime=days]'.", hang="",
    ))
    return [Reply((ctx.sender,), f"{game.title} open challenges", "\n".join(lines) + "\n")]


@handles(TakeOpen)
def take_open(ctx: Context, game: Game, command: TakeOpen) -> list[Reply]:
    usage = syntax(game.name, "take")
    taker = ctx.authenticate(command.userid, command.password)
    opened = _found(ctx, game, command.number, usage)
    if opened.userid == taker.userid:
        raise ServiceError(
            f"Open {game.title} challenge {opened.number} is your own: another player has to take it.",
            f"wait for a taker, or take it back with '{game.name} withdraw {opened.number} {taker.userid} password'",
            game=game.name,
        )
    poser = ctx.known_user(opened.userid)
    why = policies.why_not_free(ctx, game, taker, policies.policy_for(ctx, taker, game.name))
    if why:
        raise ServiceError(
            f"You cannot take open {game.title} challenge {opened.number} now: {why}.",
            f"take it once that has changed: '{game.name} take {opened.number} {taker.userid} password'", game=game.name,
        )
    why = policies.why_not_free(ctx, game, poser, policies.policy_for(ctx, poser, game.name))
    if why:
        raise ServiceError(
            f"Open {game.title} challenge {opened.number} cannot begin now: {why}.",
            f"take another ('{game.name} open' lists them), or this one later", game=game.name,
        )
    openings.remove(ctx.connection, opened.number)
    board = start_board(ctx, game, [poser, taker], opened.options, opened.timers, usage)
    lead = views.wrap(
        f"Open challenge {opened.number} of {poser.userid} ({rating_of(ctx, poser.userid, game.name)}), taken by {taker.userid} "
        f"({rating_of(ctx, taker.userid, game.name)}); {poser.userid} posted it and has the first seat.", hang="",
    )
    return mails_to_players(ctx, board, first=True, lead=lead, commenter=taker.userid)


@handles(WithdrawOpen)
def withdraw_open(ctx: Context, game: Game, command: WithdrawOpen) -> list[Reply]:
    usage = syntax(game.name, "withdraw")
    user = ctx.authenticate(command.userid, command.password)
    opened = _found(ctx, game, command.number, usage)
    if opened.userid != user.userid:
        raise ServiceError(
            f"Open {game.title} challenge {opened.number} is {opened.userid}'s: only its poser may withdraw it.",
            f"to play it, take it: '{game.name} take {opened.number} {user.userid} password'", game=game.name,
        )
    openings.remove(ctx.connection, opened.number)
    text = f"Open {game.title} challenge {opened.number} of {user.userid} is withdrawn; nobody can take it now."
    return [Reply((ctx.sender,), f"{game.title} open challenge {opened.number}", views.wrap(text, hang="") + "\n")]


# -- the timer pass ----------------------------------------------------------------
def expire(ctx: Context) -> tuple[list[Reply], list[str]]:
    """Delete the open challenges that waited OPEN_DAYS for a taker, telling their posers."""
    replies: list[Reply] = []
    report: list[str] = []
    for opened in openings.posted_before(ctx.connection, ctx.now - timedelta(days=OPEN_DAYS)):
        openings.remove(ctx.connection, opened.number)
        title = ctx.catalog.get(opened.game_type).title if opened.game_type in ctx.catalog else opened.game_type
        text = views.wrap(
            f"Your open {title} challenge {opened.number} has expired: nobody took it in {OPEN_DAYS} days. Post it "
            f"again with '{' '.join([opened.game_type, 'open', opened.userid, 'password', *_switches(opened.options, opened.timers)])}',"
            f" or seek a game with "
            f"'{opened.game_type} seek {opened.userid} password 1'.", hang="",
        )
        replies.append(Reply(
            ctx.addresses([opened.userid])[opened.userid], f"{title} open challenge {opened.number}", text + "\n", Kind.BOARD,
        ))
        report.append(f"{opened.game_type}: open challenge {opened.number} of {opened.userid} expired")
    return replies, report
