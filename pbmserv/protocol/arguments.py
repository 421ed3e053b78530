"""The readers of a command's words that the global and the per-game commands share:
how many there must be, userids, passwords, board numbers, counts, mail addresses,
names, moves and codes; each within its bound (`syntax`), refused with the bound named."""

from __future__ import annotations

import re

from pbmserv.mailbox import LONGEST_MAILBOX, mailbox
from pbmserv.protocol.commands import BoardRef
from pbmserv.protocol.errors import BadArgument, MissingArgument
from pbmserv.protocol.syntax import LONGEST_CODE, LONGEST_MOVE, LONGEST_NAME, LONGEST_PASSWORD, LONGEST_SHOWN, MOST_DIGITS

_USERID = re.compile(r"[a-z0-9_.-]{2,20}")
#: a whole number as the server takes it: ASCII digits, few enough for any database's integer column
WHOLE_NUMBER = re.compile(rf"[0-9]{{1,{MOST_DIGITS}}}")
BOARD_REF = re.compile(rf"([0-9]{{1,{MOST_DIGITS}}})(?:#([0-9]{{1,{MOST_DIGITS}}}))?")
_DIGITS = re.compile(r"[0-9]+(?:#[0-9]+)?")


def shown(word: str) -> str:
    """A word as an error shows it back: its first LONGEST_SHOWN characters."""
    return word if len(word) <= LONGEST_SHOWN else f"{word[:LONGEST_SHOWN]}... ({len(word):,} characters)"


def need(args: list[str], names: tuple[str, ...], syntax: str, game: str | None = None) -> list[str]:
    if len(args) < len(names):
        missing = names[len(args)]
        raise MissingArgument(f"The {missing} is missing.", syntax, game)
    return args[: len(names)]


def exactly(args: list[str], names: tuple[str, ...], syntax: str, game: str | None = None) -> list[str]:
    found = need(args, names, syntax, game)
    if len(args) > len(names):
        raise BadArgument(
            f"'{shown(args[len(names)])}' is one word too many: nothing follows the {names[-1]}.", syntax, game,
        )
    return found


def at_most(count: int, most: int, what: str, syntax: str, game: str | None = None) -> None:
    """Refuses `count` of `what` (`players`, `addresses`, ...) past `most`."""
    if count > most:
        raise BadArgument(f"It names {count:,} {what}: at most {most} may be named.", syntax, game)


def read_count(word: str, most: int, what: str, syntax: str, game: str) -> int:
    if not WHOLE_NUMBER.fullmatch(word) or int(word) > most:
        raise BadArgument(f"{what}: a whole number from 0 to {most}, not '{shown(word)}'.", syntax, game)
    return int(word)


def read_userid(word: str, syntax: str, game: str | None = None) -> str:
    userid = word.lower()
    if not _USERID.fullmatch(userid):
        raise BadArgument(
            f"'{shown(word)}' is not a userid: a userid has 2 to 20 letters, digits, '-', '_' or '.'.",
            syntax,
            game,
        )
    return userid


def read_password(word: str, syntax: str, game: str | None = None, what: str = "password") -> str:
    """The password, never shown back: too long, it is refused before it is checked or hashed."""
    if len(word) > LONGEST_PASSWORD:
        raise BadArgument(
            f"The {what} has {len(word):,} characters: a password has at most {LONGEST_PASSWORD}.", syntax, game,
        )
    return word


def read_board(word: str, syntax: str, game: str) -> int:
    if not WHOLE_NUMBER.fullmatch(word):
        if _DIGITS.fullmatch(word):
            raise BadArgument(f"'{shown(word)}' is not a board number: it has at most {MOST_DIGITS} digits.", syntax, game)
        raise BadArgument(f"'{shown(word)}' is not a board number: board numbers are whole numbers like 101.", syntax, game)
    return int(word)


def read_board_ref(match: re.Match[str]) -> BoardRef:
    return BoardRef(int(match.group(1)), int(match.group(2)) if match.group(2) else None)


def board_ref_problem(word: str) -> str:
    """Why `word` is no board reference (101, 101#12)."""
    if _DIGITS.fullmatch(word):
        return f"'{shown(word)}' is not a board number like 101 or 101#12: each number has at most {MOST_DIGITS} digits."
    return f"'{shown(word)}' is not a board number like 101 or 101#12."


def read_mode(word: str, modes: tuple[str, ...], syntax: str, game: str | None = None) -> str:
    """A notifications mode among `modes`, in lower case."""
    mode = word.lower()
    if mode not in modes:
        raise BadArgument(f"'{shown(word)}' is not a notifications mode: it is one of {', '.join(modes)}.", syntax, game)
    return mode


def read_address(word: str, syntax: str) -> str:
    text = word.rstrip(",;").removeprefix("<").removesuffix(">")
    if len(text) > LONGEST_MAILBOX:
        raise BadArgument(f"'{shown(word)}' is not a mail address: an address has at most {LONGEST_MAILBOX} characters.", syntax)
    address = mailbox(text)
    if address is None:
        raise BadArgument(f"'{shown(word)}' is not a mail address like alice@example.org.", syntax)
    return address


def read_name(word: str, what: str, syntax: str, game: str | None = None) -> str:
    """A command's, a game's or a help topic's name, in lower case."""
    if len(word) > LONGEST_NAME:
        raise BadArgument(f"'{shown(word)}' is not a {what}: a {what} has at most {LONGEST_NAME} characters.", syntax, game)
    return word.lower()


def read_move(text: str, what: str, syntax: str, game: str, board: int | None = None) -> str:
    """A move as written (the game reads it): at most LONGEST_MOVE characters."""
    if len(text) > LONGEST_MOVE:
        raise BadArgument(
            f"The {what} has {len(text):,} characters: a move has at most {LONGEST_MOVE}.", syntax, game, board,
        )
    return text


def read_code(word: str, syntax: str) -> str:
    if len(word) > LONGEST_CODE:
        raise BadArgument(f"'{shown(word)}' is not a code: a code has at most {LONGEST_CODE} letters and digits.", syntax)
    return word.lower()
