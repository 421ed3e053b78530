"""A mail to a reply address -> its request: the first line the player
wrote is a command on that board as that player, without the words the
address stands for (game, verb, board, userid, password). No I/O.

`e5` (or `move e5`, `e5 #12`) moves; `resign`, `undo`, `propose`,
`accept`, `reject`, `show`, `record`, `moves`, `queue MOVE`, `preview MOVES`,
`chat` and `help` work as their full commands do, and `pictures on|off`
and `timezone ZONE` as the global commands do for that player; the rest of the body is the
comment (or, for `chat`, the message). A first line that starts with
a game's name or a global command is read as the full command it is,
with its own password (a game's name alone, or followed by what is not
one of its commands, is a move: synch has a move called `synch`).
A reply to a chat mail (its In-Reply-To names one) is a chat: all the
player wrote is its message.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace
from typing import Any, cast

from pbmserv.protocol.commands import BY_REPLY_ADDRESS
from pbmserv.protocol.errors import EmptyCommand
from pbmserv.protocol.game_commands import GAME_VERBS
from pbmserv.protocol.global_commands import GLOBAL_VERBS
from pbmserv.protocol.request import Line, Request, bounded_comment, clean_subject, parse_line

#: the short forms that are the full command's verb, followed by what the player wrote after it
_VERBS = ("move", "resign", "queue", "preview", "moves", "chat")
#: the global commands a reply may give without the userid and password, which the address stands for
_ACCOUNT_VERBS = ("pictures", "timezone")
#: what stands for the password while the full line is read (any one word would do)
_PLACEHOLDER = "password"


def parse_reply(
    subject: str, body: str, game: str, board: int, userid: str, games: Collection[str], *, to_chat: bool = False,
) -> Request:
    """The request of a mail to the reply address of `userid` on `game`
    board `board`; `to_chat`: a reply to a chat mail, which is a chat,
    all of what they wrote its message."""
    if to_chat:
        return _chat_reply(subject, body, game, board, userid, games)
    lines = body.strip().splitlines()
    first = clean_subject(lines[0]) if lines else ""
    comment = bounded_comment("\n".join(lines[1:]).strip())
    if not first:
        return Request((Line(clean_subject(subject), error=EmptyCommand(
            "Your reply holds no command: its first line is empty.",
            "write your move (or resign, show, undo, chat ...) as the first line of your reply, above the quoted board",
        )),), "")
    words = first.split()
    head = words[0].lower()
    names_a_game = head in {name.lower() for name in games} and len(words) > 1 and words[1].lower() in GAME_VERBS
    reads_as_global = head in GLOBAL_VERBS and GLOBAL_VERBS[head].read is not None
    short_account_command = head in _ACCOUNT_VERBS and len(words) <= 2
    if names_a_game or (reads_as_global and head != "help" and not short_account_command):
        return Request((parse_line(first, games),), comment)
    rest = " ".join(words[1:])
    if head == "chat":  # the message: what follows the word, and the rest of the body
        rest, comment = "", bounded_comment("\n".join([rest, *lines[1:]]).strip())
    if head in ("show", "record"):
        full = f"{game} {head} {board}"
    elif head == "help":
        full = f"{game} help"
    elif short_account_command:
        full = f"{head} {userid} {_PLACEHOLDER} {rest}"
    elif head in _VERBS:
        full = f"{game} {head} {board} {userid} {_PLACEHOLDER} {rest}"
    else:  # a move, or a word the full `move` command takes (resign, undo, propose, accept, reject)
        full = f"{game} move {board} {userid} {_PLACEHOLDER} {first}"
    return _as_player(first, full, comment, games)


def _chat_reply(subject: str, body: str, game: str, board: int, userid: str, games: Collection[str]) -> Request:
    text = body.strip()
    if not text:
        return Request((Line(clean_subject(subject), error=EmptyCommand(
            "Your reply to the chat holds no text: nothing was sent.",
            "write what you want to say above the quoted chat",
        )),), "")
    first = clean_subject(text.splitlines()[0])
    return _as_player(first, f"{game} chat {board} {userid} {_PLACEHOLDER}", bounded_comment(text), games)


def _as_player(first: str, full: str, comment: str, games: Collection[str]) -> Request:
    """The full command `full`, its password the reply address's proof, as the line the player wrote."""
    line = parse_line(full.strip(), games)
    if line.command is not None and getattr(line.command, "password", None) == _PLACEHOLDER:
        return Request((Line(first, command=replace(cast(Any, line.command), password=BY_REPLY_ADDRESS)),), comment)
    return Request((Line(first, command=line.command, error=line.error),), comment)
