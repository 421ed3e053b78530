"""A mail's Subject and body text -> its request: the command lines, the comment, the passwords. No I/O.

The grammar follows the old pbmserv servers: the Subject holds one command
(the body is then a comment for the other players), unless the Subject says
`multiple`, in which case every body line is a command of its own.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from functools import cached_property

from pbmserv.protocol.commands import Command
from pbmserv.protocol.errors import EmptyCommand, ParseError, UnknownCommand, UnknownGame
from pbmserv.protocol.parser import parse_command

#: the most commands read from one mail (`multiple`): a mail's work and its
#: answers stay bounded, and the lines beyond are only counted
MOST_COMMANDS = 20
#: the most of a comment that is passed on to others (and kept with a move)
MOST_COMMENT_LINES = 100
MOST_COMMENT_CHARS = 8_000

#: the Subject of a board mail ("Majorities Board 101"; before 0144 "... bob", "New ...", "Nag: ..."),
#: as a player's reply to it keeps it: the title, then the board number
_BOARD_MAIL_SUBJECT = re.compile(r"^(?:new\s+|nag:\s*)?((?:[^\s:]+\s+){1,6}?)board\s+(\d{1,9})(?:\s|$)", re.IGNORECASE)
_REPLY_PREFIX = re.compile(r"^\s*(?:(?:re|fwd?|aw|sv|wg)\s*(?:\[\d+\])?\s*:\s*)+", re.IGNORECASE)


@dataclass(frozen=True)
class Line:
    """One command line of a mail: the command, or why it could not be read."""

    text: str
    command: Command | None = None
    error: ParseError | None = None


@dataclass(frozen=True)
class Request:
    lines: tuple[Line, ...]
    comment: str
    unread: tuple[str, ...] = ()  # command lines beyond MOST_COMMANDS, not read
    #: the reply addresses' codes the mail holds, as the service finds them
    #: (it knows the codes; this package does no I/O)
    codes: tuple[str, ...] = ()

    @cached_property
    def passwords(self) -> tuple[str, ...]:
        """The passwords of the mail's commands, to be masked wherever the
        mail is quoted, kept or passed on: those of each command that was
        read, and for a line that could not be read, every word that may be
        one (`probable_passwords`), as for every line not read; and the
        reply addresses' codes it holds, which are credentials too."""
        found: list[str] = []
        for line in self.lines:
            if line.command is None:
                found += probable_passwords(line.text)
            else:
                found += [
                    word for name in ("password", "new_password")
                    if isinstance(word := getattr(line.command, name, None), str) and word
                ]
        for text in (*self.unread, *self.comment.splitlines()):
            found += probable_passwords(text)
        return (*found, *self.codes)


def clean_subject(subject: str) -> str:
    """The Subject without reply/forward prefixes and `**` markers."""
    text = _REPLY_PREFIX.sub("", subject)
    return " ".join(token for token in text.split() if token != "**")


def is_multiple(subject: str) -> bool:
    """Whether the mail's commands are its body lines."""
    words = clean_subject(subject).split()
    return bool(words) and words[0].lower() == "multiple"


def parse_request(subject: str, body: str, games: Collection[str]) -> Request:
    """Read a mail's commands: one from the Subject, or one per body line after `multiple`."""
    cleaned = clean_subject(subject)
    words = cleaned.split()
    if is_multiple(subject):
        rest = " ".join(words[1:])
        texts = [rest] if rest else []
        texts += [clean_subject(line) for line in body.splitlines()]
        texts = [text for text in texts if text]
        if not texts:
            return Request((Line(cleaned, error=EmptyCommand(
                "The mail says 'multiple' but its body holds no command.",
                "put one command on each line of the body, e.g. 'help'",
            )),), "")
        read = tuple(parse_line(text, games) for text in texts[:MOST_COMMANDS])
        return Request(read, "", unread=tuple(texts[MOST_COMMANDS:]))
    line = parse_line(cleaned, games)
    if line.error is not None and board_mail_subject(subject) is not None:
        return _board_mail_reply(subject, body, games)
    return Request((line,), bounded_comment(body.strip()))


def board_mail_subject(subject: str) -> tuple[str, int] | None:
    """The game title and board number of a board mail's Subject, as a
    reply or forward keeps it ("Re: Majorities Board 101 bob"); None for
    any other Subject."""
    match = _BOARD_MAIL_SUBJECT.match(clean_subject(subject))
    return (match.group(1).strip(), int(match.group(2))) if match else None


def _board_mail_reply(subject: str, body: str, games: Collection[str]) -> Request:
    """A reply to a board mail: the first line of its body is the command,
    the rest of the body its comment."""
    lines = body.strip().splitlines()
    first = clean_subject(lines[0]) if lines else ""
    title, board = board_mail_subject(subject) or ("", 0)
    known = {game.lower() for game in games}
    named = [word.strip(",.").lower() for word in title.split()]
    game = next((word for word in named if word in known), "GAME")  # a title of words: "Move In Synch, ..."
    where = (
        f"put the command in the Subject, e.g. '{game} move {board} USERID PASSWORD MOVE', or answer "
        "the board mail with that command as the first line of the body"
    )
    if not first:
        return Request((Line(clean_subject(subject), error=EmptyCommand(
            f"The Subject '{clean_subject(subject)}' is a board mail's, not a command, and the body holds no command.",
            where,
        )),), "")
    line = parse_line(first, games)
    if isinstance(line.error, (UnknownCommand, UnknownGame)):
        line = Line(first, error=UnknownCommand(
            f"The Subject '{clean_subject(subject)}' is a board mail's, not a command, and the body's first line "
            f"'{first}' is not a command either.",
            where,
        ))
    return Request((line,), bounded_comment("\n".join(lines[1:]).strip()))


def bounded_comment(comment: str) -> str:
    """The comment as passed on: its first MOST_COMMENT_LINES lines and
    MOST_COMMENT_CHARS characters, with a note of what was left out."""
    lines = comment.splitlines()
    kept = "\n".join(lines[:MOST_COMMENT_LINES])[:MOST_COMMENT_CHARS]
    if kept == comment:
        return comment
    left_out = len(lines) - len(kept.splitlines())
    return kept.rstrip() + f"\n[... the rest of the comment ({left_out} more lines) was left out]"


def parse_line(text: str, games: Collection[str]) -> Line:
    try:
        return Line(text, command=parse_command(text, games))
    except ParseError as error:
        return Line(text, error=error)


#: where passwords stand in a command line, by its first words (0-based word index)
_PASSWORD_POSITIONS = {
    ("signup",): (2,), ("add",): (2,), ("signoff",): (2,), ("delete",): (2,),
    ("change", "password"): (3, 4), ("change", "address"): (3,),
    ("message",): (2,), ("broadcast",): (2,), ("vacation",): (2,), ("timezone",): (2,), ("pictures",): (2,),
    ("notifications",): (2,),
}
_GAME_PASSWORD_POSITIONS = {
    "move": (4,), "moves": (4,), "queue": (4,), "preview": (4,), "resign": (4,), "subscribe": (4,), "unsubscribe": (4,), "notify": (4,), "chat": (4,),
    "notifications": (4,), "showas": (3,), "accept": (3,), "reject": (3,), "challenges": (3,), "limit": (3,), "seek": (3,),
    "open": (3,), "take": (4,), "withdraw": (4,),
}


def probable_passwords(text: str) -> tuple[str, ...]:
    """The words of a command line that could not be read that may be its
    password, to be masked in anything kept, quoted or passed on. A line
    goes wrong by a word left out, added or swapped, and which one cannot
    be told from the words alone (`toy move 101 pw b2` may lack the userid
    or the move), so every word from one before the password's place on
    is taken."""
    words = clean_subject(text).split()
    positions = _password_shape([word.lower() for word in words])
    return tuple(words[min(positions) - 1:]) if positions else ()


def _password_shape(lowered: list[str]) -> tuple[int, ...] | None:
    """Where the passwords of a command line that takes them stand (0-based
    word indexes); None for a line of no such command."""
    for prefix, positions in _PASSWORD_POSITIONS.items():
        if tuple(lowered[: len(prefix)]) == prefix:
            return positions
    if len(lowered) > 1 and lowered[1] in _GAME_PASSWORD_POSITIONS:
        # also for a misspelt game name: the password is still where it stands
        return _GAME_PASSWORD_POSITIONS[lowered[1]]
    if len(lowered) > 4 and lowered[2].isdigit():
        # any `GAME VERB board userid password ...` shape, even with a misspelt verb
        return (4,)
    return None
