"""Reply addresses: each board mail to a player comes from an address of
its own, and a mail to that address plays as that player on that board
without a password.

The address is the server's with a plus part, `pbmserv+GAME-BOARD-SEAT-MAC@host`
(the seat counted from 1). The MAC is a code only the server's key can make
(`ServerKey.code`) over the game, the board, the seat, the player's userid
and the account's reply secret, which every new password draws anew: whoever knows
an address can play that seat on that board, and nothing else, until the
player's next password. 16 letters of a 32-letter alphabet: 80 bits, and a
guess costs an SMTP command that is refused.

What is stored of an address a mail came to is its `kept_form`: the MAC
replaced by a code made from it, which checks a mail when it is processed
but is no address anyone could write to. Every copy of a mail that is kept
has its addresses masked (`mask_addresses`).
"""

from __future__ import annotations

import hmac
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from pbmserv.protocol.commands import MASK
from pbmserv.store.key import ServerKey

if TYPE_CHECKING:  # the records' module is SQLAlchemy's: `receive`'s hot path reads reply addresses without it
    from pbmserv.store.records import Account

MAC_CHARS = 16
_PLUS_PART = re.compile(r"([a-z][a-z0-9_]*)-(\d{1,9})-(\d{1,2})-([a-z2-9]{16})")
#: a reply address's plus part anywhere in a text, its MAC the third group
_ANYWHERE = re.compile(r"(\+[a-z][a-z0-9_]*-\d{1,9}-\d{1,2}-)([a-z2-9]{16})(@)", re.IGNORECASE)


@dataclass(frozen=True)
class ReplyToken:
    """The plus part of a reply address: which seat of which board, and its MAC."""

    game: str
    board: int
    seat: int  # 0-based, as in `BoardRecord.seats`
    mac: str

    def __str__(self) -> str:
        return f"{self.game}-{self.board}-{self.seat + 1}-{self.mac}"

    @classmethod
    def read(cls, text: str) -> ReplyToken | None:
        match = _PLUS_PART.fullmatch(text.lower())
        if match is None or int(match.group(3)) < 1:
            return None
        return cls(match.group(1), int(match.group(2)), int(match.group(3)) - 1, match.group(4))


def token_for(key: ServerKey, game: str, board: int, seat: int, userid: str, secret: str) -> ReplyToken:
    code = key.code("reply address", game, str(board), str(seat), userid, secret, length=MAC_CHARS)
    return ReplyToken(game, board, seat, code)


def seat_address(key: ServerKey, server_address: str, game: str, board: int, seat: int, account: Account) -> str:
    """The reply address of `account`, the player in `seat` on the board."""
    return reply_address(server_address, token_for(key, game, board, seat, account.userid, account.reply_secret))


def reply_address(server_address: str, token: ReplyToken) -> str:
    local, _, domain = server_address.rpartition("@")
    return f"{local}+{token}@{domain}"


def token_of(recipient: str, server_address: str) -> ReplyToken | None:
    """The token of a recipient address that is one of the server's reply
    addresses in form (whether it is genuine is `is_genuine`'s to say)."""
    local, _, domain = server_address.lower().rpartition("@")
    address = recipient.strip().strip("<>").lower()
    head, at, tail = address.rpartition("@")
    if not at or tail != domain or not head.startswith(local + "+"):
        return None
    return ReplyToken.read(head[len(local) + 1:])


def kept_form(key: ServerKey, token: ReplyToken) -> ReplyToken:
    """The token as it is stored with the mail that came to it."""
    return replace(token, mac=key.code("kept reply address", token.mac, length=MAC_CHARS))


def is_genuine(key: ServerKey, token: ReplyToken, userid: str, secret: str, *, kept: bool = False) -> bool:
    """Whether the token (or, `kept`, its kept form) was made for `userid`
    holding its seat, with the account's reply secret as it is now."""
    expected = token_for(key, token.game, token.board, token.seat, userid, secret)
    if kept:
        expected = kept_form(key, expected)
    return hmac.compare_digest(expected.mac, token.mac)


def holds_reply_address(text: str) -> bool:
    return _ANYWHERE.search(text) is not None


def mask_addresses(text: str) -> str:
    """`text` with the MAC of every reply address in it masked."""
    return _ANYWHERE.sub(lambda match: match.group(1) + MASK + match.group(3), text)
