"""The readers of a command's words that the global and the per-game commands share:
how many there must be, userids, board numbers, counts and mail addresses."""

from __future__ import annotations

import re

from pbmserv.mailbox import mailbox
from pbmserv.protocol.commands import BoardRef
from pbmserv.protocol.errors import BadArgument, MissingArgument

_USERID = re.compile(r"[a-z0-9_.-]{2,20}")
#: a whole number as the server takes it: ASCII digits, few enough for any database's integer column
WHOLE_NUMBER = re.compile(r"[0-9]{1,9}")
BOARD_REF = re.compile(r"([0-9]{1,9})(?:#([0-9]{1,9}))?")


def need(args: list[str], names: tuple[str, ...], syntax: str, game: str | None = None) -> list[str]:
    if len(args) < len(names):
        missing = names[len(args)]
        raise MissingArgument(f"The {missing} is missing.", syntax, game)
    return args[: len(names)]


def exactly(args: list[str], names: tuple[str, ...], syntax: str, game: str | None = None) -> list[str]:
    found = need(args, names, syntax, game)
    if len(args) > len(names):
        raise BadArgument(f"'{args[len(names)]}' is one word too many: nothing follows the {names[-1]}.", syntax, game)
    return found


def read_count(word: str, most: int, what: str, syntax: str, game: str) -> int:
    if not WHOLE_NUMBER.fullmatch(word) or int(word) > most:
        raise BadArgument(f"{what}: a whole number from 0 to {most}, not '{word}'.", syntax, game)
    return int(word)


def read_userid(word: str, syntax: str, game: str | None = None) -> str:
    userid = word.lower()
    if not _USERID.fullmatch(userid):
        raise BadArgument(
            f"'{word}' is not a userid: a userid has 2 to 20 letters, digits, '-', '_' or '.'.",
            syntax,
            game,
        )
    return userid


def read_board(word: str, syntax: str, game: str) -> int:
    if not WHOLE_NUMBER.fullmatch(word):
        raise BadArgument(f"'{word}' is not a board number: board numbers are whole numbers like 101.", syntax, game)
    return int(word)


def read_board_ref(match: re.Match[str]) -> BoardRef:
    return BoardRef(int(match.group(1)), int(match.group(2)) if match.group(2) else None)


def read_address(word: str, syntax: str) -> str:
    address = mailbox(word.rstrip(",;").removeprefix("<").removesuffix(">"))
    if address is None:
        raise BadArgument(f"'{word}' is not a mail address like alice@example.org.", syntax)
    return address
