"""What declares a command word (`Verb`: its syntax line, its help and
its reader, declared once beside the reader), and the bounds on every
argument."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pbmserv.protocol.commands import Command


@dataclass(frozen=True)
class Said:
    """A command line as a verb's reader gets it: the words after the
    verb, the whole line as written (a move may hold spaces), the game it
    names ("" for a global command) and the verb's syntax line, the game's
    name in it, for the errors."""

    args: list[str]
    text: str
    syntax: str
    game: str = ""


@dataclass(frozen=True)
class Verb:
    """One command word: its syntax line as help and error mails show it
    (`GAME` standing for a game's name), what `help WORD` says of it, and
    how its words are read into a command (None: a word that is not read
    as a command line, such as `multiple`)."""

    word: str
    syntax: str
    help: str
    read: Callable[[Said], Command] | None = None
    #: for another name kept so that old mails still work: the word help
    #: and errors list instead (this one they leave out)
    alias_of: str = ""

    def syntax_for(self, game: str) -> str:
        return self.syntax.replace("GAME", game)


def by_word(*verbs: Verb) -> dict[str, Verb]:
    """The verbs by their words, in the order declared (the order help lists them in)."""
    return {verb.word: verb for verb in verbs}


def listed(verbs: dict[str, Verb]) -> dict[str, Verb]:
    """The verbs help lists and an unknown command's error names: the same
    list, every word but the other names."""
    return {word: verb for word, verb in verbs.items() if not verb.alias_of}


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """ "did you mean 'majorities'? " when `word` is likely a slip for known
    words (at most three, the closest first), else "" """
    close = difflib.get_close_matches(word.lower(), list(known), n=3, cutoff=0.75)
    return f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""


#: the largest numbers `limit` and `seek` take
MAX_LIMIT = 999
MAX_SEEK = 99
#: the longest wait for a player `seek ... -bot=HOURS` takes before the bot: 30 days
MAX_BOT_WAIT = 720
#: the most boards one `show` or `showas` names
MOST_BOARDS = 10

# The bounds of every other field, checked as a command is read, before
# anything is done (a password is never hashed or checked past its bound).
# Each is many times what real use needs; see docs/decisions/0127-field-bounds.md.
#: the longest password (a ten-word passphrase has some 80 characters)
LONGEST_PASSWORD = 128
#: the longest word the server shows back in an error (the rest is cut)
LONGEST_SHOWN = 40
#: the longest name of a command, a game or a help topic
LONGEST_NAME = 40
#: a time zone's name (the tz database's longest is 32 characters)
LONGEST_ZONE = 64
#: the longest `-name=value` option of a challenge, and the most options
LONGEST_OPTION = 40
MOST_OPTIONS = 10
#: the most players a challenge names, and the most userids `show`, `games` and `message` take
MOST_USERIDS = 10
#: the most addresses an account has (the service counts them too)
MOST_ADDRESSES = 5
#: the longest move (also each move of `preview`, and `queue`'s), and the most moves a preview tries
LONGEST_MOVE = 200
MOST_PREVIEW_MOVES = 50
#: the longest code of `confirm` (the server's codes have 10 or 16 letters)
LONGEST_CODE = 16
#: the most words after `help`, and the most games `list` names
MOST_HELP_WORDS = 3
MOST_GAMES = 20
#: the most digits of a board or move number (a database integer holds them)
MOST_DIGITS = 9
