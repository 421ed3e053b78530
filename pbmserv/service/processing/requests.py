"""A mail's commands, as its sender means them: the Subject's command (or
a `multiple` mail's lines), or, for a mail to a player's reply address,
the first line they wrote, as that player on that board."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace
from typing import TYPE_CHECKING

from pbmserv.mail.inbound import IncomingMail, parse_mail
from pbmserv.mail.outbound import answers_chat
from pbmserv.protocol import Line, Request, parse_request
from pbmserv.protocol.commands import Broadcast, Chat, GameCommand, Message, ReplyAddressProof
from pbmserv.protocol.reply import parse_reply
from pbmserv.refusal import Refusal
from pbmserv.service.play.reply_addresses import (
    ReplyToken,
    address_codes,
    codes_written,
    is_genuine,
    may_hold_code,
    token_for,
)
from pbmserv.store import users
from pbmserv.store.key import ServerKey

if TYPE_CHECKING:
    from pbmserv.store.handles import Connection


#: the commands that pass the mail's text on to others beyond one board's players
_RELAYS = (Chat, Message, Broadcast)


class StaleReplyAddress(Refusal):
    """A mail to a reply address that is no longer genuine: its account has
    a new password since (or the board or account is gone)."""


def read_request(
    connection: Connection, key: ServerKey, games: Collection[str], mail: IncomingMail, kept_token: str,
    server_address: str,
) -> tuple[Request, str | None]:
    """The mail's request, with the codes it holds (`with_codes`), and the
    userid its reply address vouches for (None for a mail to the server's
    own address). Raises StaleReplyAddress."""
    if not kept_token:
        return with_codes(connection, key, parse_request(mail.subject, mail.body, games), mail), None
    token = ReplyToken.read(kept_token)
    holder = users.seat_holder(connection, token.game, token.board, token.seat) if token is not None else None
    if token is None or holder is None or not is_genuine(key, token, *holder, kept=True):
        raise StaleReplyAddress(
            "The address you wrote to is a reply address that no longer works: the password of its account has "
            "changed since (or its board is gone). Nothing was done.",
            f"reply to a newer board mail, or send the full command with your password to {server_address}",
        )
    userid = holder[0]
    request = parse_reply(
        mail.subject, mail.body, token.game, token.board, userid, games,
        to_chat=answers_chat(mail.headers.get("in-reply-to", "")),
    )
    code = token_for(key, token.game, token.board, token.seat, *holder).mac
    return with_codes(connection, key, request, mail, {(token.game, token.board, userid): code}), userid


def with_codes(
    connection: Connection, key: ServerKey, request: Request, mail: IncomingMail,
    known: dict[tuple[str, int, str], str] | None = None,
) -> Request:
    """The request, with the reply addresses' codes its mail holds, in any
    form, to be masked as its passwords are. Found: the code of every reply
    address written in it, and, written alone too, the codes of its author:
    those `known` (the code of the address it came to, by its game, board
    and userid), those of the seat the userid of each command holds on the
    board it names, and for a command that passes text on (chat, message,
    broadcast) those of every seat its userid holds on a running board.
    Only those read all running boards (the seats have no index); a move
    is not made to wait for it."""
    text = f"{mail.subject}\n{mail.text}"
    if not may_hold_code(text):  # most mails: no read of the database, no code made
        return request
    known = known or {}
    on_boards, anywhere = set(), set()
    for line in request.lines:
        board, userid = getattr(line.command, "board", None), getattr(line.command, "userid", None)
        if isinstance(line.command, _RELAYS) and isinstance(userid, str):
            anywhere.add(userid)
        if isinstance(line.command, GameCommand) and isinstance(board, int) and isinstance(userid, str):
            on_boards.add((line.command.game, board, userid))
    seats = users.seats_held(connection, on_boards - known.keys(), anywhere)
    codes = codes_written(text, {*address_codes(text), *known.values(), *(token_for(key, *seat).mac for seat in seats)})
    return replace(request, codes=tuple(sorted(codes))) if codes else request


def readable(original: bytes, games: Collection[str]) -> tuple[IncomingMail | None, Request | None]:
    """The mail and its commands as far as they can be read (for a mail failed unprocessed)."""
    try:
        mail = parse_mail(original)
    except Exception:
        return None, None
    try:
        return mail, parse_request(mail.subject, mail.body, games)
    except Exception:
        return mail, None


def naming_the_game(line: Line, error: Refusal) -> Refusal:
    """The error, naming the game (and board) of the command it refuses if
    it does not yet; for a command of a mail to a reply address, saying how
    to write it there rather than the full command's syntax."""
    if error.game is None and isinstance(line.command, GameCommand):
        error.game = line.command.game
        error.board = getattr(line.command, "board", None)
    if isinstance(getattr(line.command, "password", None), ReplyAddressProof) and "password" in error.fix:
        error.fix = f"reply with just your move as the first line; '{error.game} help' explains the moves"
    return error
