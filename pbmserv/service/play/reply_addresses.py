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
has its addresses masked (`mask_addresses`), and a code is masked by the
code itself, in whatever form it is written (`mask_codes`): what a player
pastes may have lost its `@`, be a `mailto:` link's percent-escapes, be in
upper case or fullwidth letters, or have a zero-width space, a space or a
line break inside.
"""

from __future__ import annotations

import hmac
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Collection
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import accumulate
from typing import TYPE_CHECKING
from urllib.parse import unquote

from pbmserv.protocol.commands import MASK
from pbmserv.store.key import CODE_ALPHABET, ServerKey

if TYPE_CHECKING:  # the records' module is SQLAlchemy's: `receive`'s hot path reads reply addresses without it
    from pbmserv.store.records import Account

MAC_CHARS = 16
_PLUS_PART = re.compile(r"([a-z][a-z0-9_]*)-(\d{1,9})-(\d{1,2})-([a-z2-9]{16})")


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


# -- a code in whatever form it is written -----------------------------------------------
#: dashes other than ASCII's, as word processors and keyboards write them (NFKD keeps them)
_DASHES = re.compile("[\u2010-\u2015\u2212\u2e3a\u2e3b]")
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")
_NOT_ALNUM_BYTES = bytes(byte for byte in range(128) if not chr(byte).isalnum())
#: a reply address's plus part in a `_plain` text (its `+` and `@` may be
#: gone); the code's letters may have up to 4 other characters between
#: them (spaces, hyphens, a line break and a quote's `> `). The game's name
#: starts a word and is bounded, so that a long word is not tried at each
#: of its letters.
_ADDRESS_CODE = re.compile(
    r"(?<![a-z0-9_])[a-z][a-z0-9_]{0,39}-\d{1,9}-\d{1,2}-((?:[a-z2-9][^a-z0-9@]{0,4}){15}[a-z2-9])(?![a-z0-9])"
)
#: a code's letters in a row, as a folded text holds every code it holds
_CODE_RUN = re.compile(f"[{re.escape(CODE_ALPHABET)}]{{{MAC_CHARS}}}")
#: what every reply address in a `_plain` text holds: the board, the seat and the code's first letter
_ADDRESS_HINT = re.compile(r"\d-\d{1,2}-[a-z2-9]")
#: a text cut where `_folded` may cut it: a run of percent-escapes (decoded
#: together: UTF-8 spends several on one character), a run of ASCII letters
#: and digits (each its own letter), a character that is not ASCII, and
#: what folds to nothing (other ASCII, a `%` that escapes nothing)
_SEGMENT = re.compile(r"((?:%[0-9a-fA-F]{2})+)|([A-Za-z0-9]+)|([^\x00-\x7f])|[^A-Za-z0-9%\x80-\U0010ffff]+|%")


def _plain(text: str) -> str:
    """`text` as codes are looked for in it: percent-escapes decoded (a
    `mailto:` link's `%2B`, `%40`), compatibility forms as ASCII and accents
    taken off (NFKD: fullwidth, circled and mathematical letters), other
    dashes as `-`, every other character that is not ASCII dropped (zero-width
    and bidi characters among them); in lower case."""
    if "%" in text:
        text = unquote(text)
    if not text.isascii():
        text = _DASHES.sub("-", unicodedata.normalize("NFKD", text)).encode("ascii", "ignore").decode("ascii")
    return text.lower()


def _folded(text: str) -> str:
    """What a code is matched in: only the letters and digits of the
    `_plain` text. Each character folds alone (a run of percent-escapes
    together), so the folded text is the folded pieces one after another."""
    return _plain(text).encode("ascii").translate(None, _NOT_ALNUM_BYTES).decode("ascii")


_folded_piece = lru_cache(maxsize=4096)(_folded)


def is_code(word: str) -> bool:
    """Whether `word` has the shape of a reply address's code."""
    return len(word) == MAC_CHARS and all(char in CODE_ALPHABET for char in word)


def address_codes(text: str) -> frozenset[str]:
    """The codes of the reply addresses written in `text`, in any form."""
    plain = _plain(text)
    if _ADDRESS_HINT.search(plain) is None:  # C speed: most texts hold no `board-seat-` at all
        return frozenset()
    return frozenset(_NOT_ALNUM.sub("", match.group(1)) for match in _ADDRESS_CODE.finditer(plain))


def may_hold_code(text: str) -> bool:
    """Whether `text` has 16 letters of a code's alphabet in a row, once
    folded: without them it holds no code in any form (C speed)."""
    return _CODE_RUN.search(_folded(text)) is not None


def codes_written(text: str, codes: Collection[str]) -> list[str]:
    """Those of `codes` (in lower case) that `text` holds, in any form."""
    folded = _folded(text) if codes else ""
    return [code for code in set(codes) if code in folded]  # C speed


def mask_codes(text: str, codes: Collection[str]) -> str:
    """`text` with each of `codes` (in lower case) masked wherever it is
    written, in any case, form or encoding, whatever stands between its
    letters (`_folded`). An 80-bit code is found by chance in no text.
    Only the pieces of the text a code is found in are gone through letter
    by letter (`_Pieces`): a 256 KB mail with a code in it costs a few
    milliseconds, not the tenth of a second of going through it all."""
    if not codes_written(text, codes):  # most texts hold none
        return text
    pieces = _Pieces(text)
    spans = []
    for code in set(codes):
        at = pieces.folded.find(code)
        while at >= 0:
            spans.append((pieces.source(at)[0], pieces.source(at + len(code) - 1)[1]))
            at = pieces.folded.find(code, at + len(code))
    masked, end = [], 0
    for start, stop in sorted(spans):
        if start >= end:
            masked += [text[end:start], MASK]
        end = max(end, stop)
    return "".join(masked) + text[end:]


class _Pieces:
    """A text cut into pieces of about PIECE characters where `_folded` may
    cut it (before a character that is neither an ASCII letter or digit nor
    a `%`: it folds alone), with the folded text of each."""

    PIECE = 2048
    _CUT = re.compile(r"[^A-Za-z0-9%]")

    def __init__(self, text: str):
        self.text = text
        self.cuts = [0]
        while (cut := self._CUT.search(text, self.cuts[-1] + self.PIECE)) is not None:
            self.cuts.append(cut.start())
        self.cuts.append(len(text))
        folded = [_folded(text[start:end]) for start, end in zip(self.cuts, self.cuts[1:])]
        self.folded = "".join(folded)
        self.starts = list(accumulate((len(piece) for piece in folded[:-1]), initial=0))
        self._sources: dict[int, tuple[list[int], list[tuple[int, int, bool]]]] = {}

    def source(self, index: int) -> tuple[int, int]:
        """Where in the text the folded text's letter `index` comes from (start, end)."""
        piece = bisect_right(self.starts, index) - 1
        if piece not in self._sources:
            self._sources[piece] = _sources(self.text, self.cuts[piece], self.cuts[piece + 1])
        starts, segments = self._sources[piece]
        segment = bisect_right(starts, index - self.starts[piece]) - 1
        start, end, alnum = segments[segment]
        if alnum:  # a run of ASCII letters and digits, one letter each
            start += index - self.starts[piece] - starts[segment]
            end = start + 1
        return start, end


def _sources(text: str, start: int, end: int) -> tuple[list[int], list[tuple[int, int, bool]]]:
    """For `_folded(text[start:end])`: where each of its stretches starts in
    it, and the segment of `text` each comes from (start, end, and whether it
    is a run of ASCII letters and digits, each one letter of the folded text;
    any other segment gives its letters together)."""
    starts: list[int] = []
    segments: list[tuple[int, int, bool]] = []
    at = 0
    for match in _SEGMENT.finditer(text, start, end):
        if match.lastindex is None:  # folds to nothing
            continue
        alnum = match.lastindex == 2
        length = match.end() - match.start() if alnum else len(_folded_piece(match.group()))
        if length:
            starts.append(at)
            segments.append((match.start(), match.end(), alnum))
            at += length
    return starts, segments


def holds_reply_address(text: str) -> bool:
    return bool(address_codes(text))


def mask_addresses(text: str) -> str:
    """`text` with the code of every reply address in it masked, wherever it is written, in any form."""
    return mask_codes(text, address_codes(text))
