"""The global commands' parsers: the words after the command -> its command."""

from __future__ import annotations

from pbmserv.protocol.arguments import (
    at_most,
    exactly,
    need,
    read_address,
    read_code,
    read_name,
    read_password,
    read_userid,
    shown,
)
from pbmserv.protocol.commands import (
    ALL_SHOW_FILTERS,
    AllShow,
    Broadcast,
    ChangeAddress,
    ChangePassword,
    Command,
    Confirm,
    Help,
    ListGames,
    Message,
    Signoff,
    Signup,
    Vacation,
)
from pbmserv.protocol.errors import BadArgument
from pbmserv.protocol.syntax import GLOBAL_SYNTAX, MOST_ADDRESSES, MOST_GAMES, MOST_HELP_WORDS, MOST_USERIDS


def _help(args: list[str]) -> Command:
    syntax = GLOBAL_SYNTAX["help"]
    at_most(len(args), MOST_HELP_WORDS, "words after 'help'", syntax)
    return Help(tuple(read_name(arg, "help topic", syntax) for arg in args))


def _addresses(words: list[str], syntax: str) -> tuple[str, ...]:
    if len(words) > MOST_ADDRESSES:
        raise BadArgument(f"An account has at most {MOST_ADDRESSES} addresses, and this names {len(words)}.", syntax)
    return tuple(read_address(word, syntax) for word in words)


def _signup(args: list[str]) -> Command:
    syntax = GLOBAL_SYNTAX["signup"]
    userid, password = need(args, ("userid", "password"), syntax)
    return Signup(read_userid(userid, syntax), read_password(password, syntax), _addresses(args[2:], syntax))


def _change(args: list[str]) -> Command:
    syntax = GLOBAL_SYNTAX["change"]
    what = args[0].lower() if args else ""
    if what == "password":
        userid, old, new = need(args[1:], ("userid", "old password", "new password"), syntax)
        if len(args) > 4:
            raise BadArgument("A password is one word: 'change password' takes exactly three words after it.", syntax)
        return ChangePassword(
            read_userid(userid, syntax), read_password(old, syntax, what="old password"),
            read_password(new, syntax, what="new password"),
        )
    if what == "address":
        userid, password = need(args[1:], ("userid", "password"), syntax)
        return ChangeAddress(read_userid(userid, syntax), read_password(password, syntax), _addresses(args[3:], syntax))
    raise BadArgument("'change' must be followed by 'password' or 'address'.", syntax)


def _signoff(args: list[str]) -> Command:
    syntax = GLOBAL_SYNTAX["signoff"]
    userid, password = need(args, ("userid", "password"), syntax)
    if len(args) > 2:
        raise BadArgument("'signoff' takes only your userid and password.", syntax)
    return Signoff(read_userid(userid, syntax), read_password(password, syntax))


def _confirm(args: list[str]) -> Command:
    syntax = GLOBAL_SYNTAX["confirm"]
    userid, code = exactly(args, ("userid", "code"), syntax)
    return Confirm(read_userid(userid, syntax), read_code(code, syntax))


def _list(args: list[str]) -> Command:
    syntax = GLOBAL_SYNTAX["list"]
    at_most(len(args), MOST_GAMES, "games", syntax)
    return ListGames(tuple(read_name(arg, "game name", syntax) for arg in args))


def _message(args: list[str]) -> Command:
    syntax = GLOBAL_SYNTAX["message"]
    userid, password, _ = need(args, ("userid", "password", "userid to send to"), syntax)
    at_most(len(args) - 2, MOST_USERIDS, "players to send to", syntax)
    to = tuple(dict.fromkeys(read_userid(arg, syntax) for arg in args[2:]))
    return Message(read_userid(userid, syntax), read_password(password, syntax), to)


def _broadcast(args: list[str]) -> Command:
    syntax = GLOBAL_SYNTAX["broadcast"]
    userid, password = exactly(args, ("userid", "password"), syntax)
    return Broadcast(read_userid(userid, syntax), read_password(password, syntax))


def _all(args: list[str]) -> Command:
    syntax = GLOBAL_SYNTAX["all"]
    if not args or args[0].lower() != "show":
        raise BadArgument("'all' must be followed by 'show'.", syntax)
    (userid,) = need(args[1:], ("userid",), syntax)
    rest = [arg.lower() for arg in args[2:]]
    if len(rest) > 1 or (rest and rest[0] not in ALL_SHOW_FILTERS):
        raise BadArgument("'all show' takes one userid and then 'active' or 'next'.", syntax)
    return AllShow(read_userid(userid, syntax), rest[0] if rest else "active")


def _vacation(args: list[str]) -> Command:
    syntax = GLOBAL_SYNTAX["vacation"]
    userid, password, switch = exactly(args, ("userid", "password", "'on' or 'off'"), syntax)
    if switch.lower() not in ("on", "off"):
        raise BadArgument(f"'vacation' ends with 'on' or 'off', not '{shown(switch)}'.", syntax)
    return Vacation(read_userid(userid, syntax), read_password(password, syntax), switch.lower() == "on")


GLOBAL_PARSERS = {
    "help": _help,
    "signup": _signup,
    "change": _change,
    "confirm": _confirm,
    "signoff": _signoff,
    "list": _list,
    "message": _message,
    "broadcast": _broadcast,
    "all": _all,
    "vacation": _vacation,
}
