"""The per-game commands about a player (challenges, limit, seek: the challenge
policy; standings, ratings, history), each declared once as a `Verb` beside its reader."""

from __future__ import annotations

from functools import partial

from pbmserv.protocol.arguments import exactly, read_count, read_password, read_userid, shown
from pbmserv.protocol.commands import Command, History, SetAccepting, SetLimit, SetSeek, Standings
from pbmserv.protocol.errors import BadArgument
from pbmserv.protocol.syntax import MAX_BOT_WAIT, MAX_LIMIT, MAX_SEEK, Said, Verb

#: how `seek` names its wait for the bot: `-bot=HOURS`
BOT_WAIT = "-bot="


def _challenges(said: Said) -> Command:
    game, args, syntax = said.game, said.args, said.syntax
    userid, password, switch = exactly(args, ("userid", "password", "'on' or 'off'"), syntax, game)
    if switch.lower() not in ("on", "off"):
        raise BadArgument(f"'challenges' ends with 'on' or 'off', not '{shown(switch)}'.", syntax, game)
    return SetAccepting(
        game, read_userid(userid, syntax, game), read_password(password, syntax, game), switch.lower() == "on",
    )


def _old_accepting(accepting: bool, said: Said) -> Command:
    """`GAME accept|reject userid password`, the old words of `challenges
    on|off`, still read (no board number: it cannot be an answer to a
    proposal); with a board number first it meant an answer to a draw
    offer or undo request, which is a `move`."""
    game, args = said.game, said.args
    verb = "accept" if accepting else "reject"
    new_form = f"{game} challenges userid password {'on' if accepting else 'off'}"
    if args and args[0].lstrip("#").isdigit():
        raise BadArgument(
            f"'{game} {verb}' takes no board number: it is the old word for the challenge policy.",
            f"'{game} move {shown(args[0])} userid password {verb}' answers a draw offer or undo request on a board;"
            f" '{new_form}' {'accepts' if accepting else 'refuses'} challenges",
            game,
        )
    userid, password = exactly(args, ("userid", "password"), new_form, game)
    return SetAccepting(
        game, read_userid(userid, new_form, game), read_password(password, new_form, game), accepting,
    )


def _limit(said: Said) -> Command:
    game, args, syntax = said.game, said.args, said.syntax
    userid, password, number = exactly(args, ("userid", "password", "number"), syntax, game)
    limit = read_count(number, MAX_LIMIT, "'limit' takes the most active games you want, 0 for no limit", syntax, game)
    return SetLimit(game, read_userid(userid, syntax, game), read_password(password, syntax, game), limit)


def _seek(said: Said) -> Command:
    game, args, syntax = said.game, said.args, said.syntax
    bot_after = 0
    if len(args) == 4 and args[3].startswith("-"):
        if not args[3].lower().startswith(BOT_WAIT):
            raise BadArgument(
                "'seek' takes one option after the number: -bot=HOURS, the hours to wait for a player before the bot.",
                syntax, game,
            )
        hours, args = args[3][len(BOT_WAIT):], args[:3]
        bot_after = read_count(hours, MAX_BOT_WAIT, "'-bot=' takes the hours to wait for a player before the bot", syntax, game)
    userid, password, number = exactly(args, ("userid", "password", "number"), syntax, game)
    count = read_count(number, MAX_SEEK, "'seek' takes how many more games you are looking for", syntax, game)
    return SetSeek(game, read_userid(userid, syntax, game), read_password(password, syntax, game), count, bot_after)


def _standings(said: Said) -> Command:
    game, args, syntax = said.game, said.args, said.syntax
    if args:
        raise BadArgument(f"'{shown(args[0])}' is one word too many: the table has every player.", syntax, game)
    return Standings(game)


def _history(said: Said) -> Command:
    game, args, syntax = said.game, said.args, said.syntax
    if len(args) > 1:
        raise BadArgument(f"'{shown(args[1])}' is one word too many: 'history' takes at most one userid.", syntax, game)
    return History(game, read_userid(args[0], syntax, game) if args else None)


PLAYER_VERBS = (
    Verb(
        "challenges", "GAME challenges userid password on|off",
        (
            "Whether challenges to this game may name you: 'on' (the default) accepts them, 'off' refuses every "
            "one with the reason; to start a game yourself, turn them on first. The old words 'GAME accept "
            "userid password' and 'GAME reject userid password' still do the same."
        ),
        _challenges,
    ),
    Verb(
        "accept", "GAME accept userid password",
        (
            "The old word for 'GAME challenges userid password on'. To accept a draw offer or an undo request, "
            "send 'GAME move board userid password accept' (or reply 'accept' to the board mail)."
        ),
        partial(_old_accepting, True),
        alias_of="challenges",
    ),
    Verb(
        "reject", "GAME reject userid password",
        (
            "The old word for 'GAME challenges userid password off'. To reject a draw offer or an undo request, "
            "send 'GAME move board userid password reject' (or reply 'reject' to the board mail)."
        ),
        partial(_old_accepting, False),
        alias_of="challenges",
    ),
    Verb(
        "limit", "GAME limit userid password number",
        (
            "Sets the most active games of this game you play at once; a challenge that would go over it is "
            "refused. 0 means no limit (the default)."
        ),
        _limit,
    ),
    Verb(
        "seek", "GAME seek userid password number [-bot=HOURS]",
        (
            "Says how many more games of this game you are looking for; each new game you start or are challenged"
            " to counts one off. While you seek, the server pairs you with another player who seeks and whose "
            "rating is within 200 points of yours, and mails you both the new board; with -bot=HOURS the bot "
            "takes the game if no such player comes within that many hours (at most 720). 0 stops seeking."
        ),
        _seek,
    ),
    Verb(
        "standings", "GAME standings",
        (
            "Mails you the rating table of this game: established players (20 or more rated games), provisional "
            "ones and inactive ones (no finished game for 180 days), with rating, games won, lost and drawn, "
            "active games and limit, and how many games each seeks. Everybody starts at 1600; a game's final mail"
            " shows the rating changes and why. A game counts once each player has made 2 moves (a resignation not "
            "counted)."
        ),
        _standings,
    ),
    Verb(
        "ratings", "GAME ratings",
        "Another name for 'standings'.",
        _standings,
    ),
    Verb(
        "history", "GAME history [userid]",
        (
            "Mails you the finished boards of this game, newest first, with players, result and date; name a "
            "player to see only theirs."
        ),
        _history,
    ),
)
