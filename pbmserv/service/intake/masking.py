"""Passwords masked: in a text, and in the copy of a mail that is kept."""

from __future__ import annotations

import re

from pbmserv.mail.inbound import IncomingMail
from pbmserv.mail.outbound import message_bytes
from pbmserv.protocol.commands import MASK
from pbmserv.service.play.reply_addresses import is_code, mask_addresses, mask_codes

#: the header of a copy of a mail whose passwords are masked, saying what was kept
MASKED_HEADER = "X-Pbmserv-Masked"


def mask(text: str, secrets: tuple[str, ...]) -> str:
    """`text` with every password in it masked: wherever it stands as a
    word, also in quotes or brackets or before punctuation marks (as an
    error message quotes a word, or a comment ends a sentence). One pass
    over the words, however many passwords: a mail of 20,000 lines may
    give tens of thousands of words that may be passwords. A secret of a
    reply address code's shape (a code, or a password like one) is masked
    in whatever form it is written too (`mask_codes`)."""
    hidden = frozenset(secret for secret in secrets if secret)
    if not hidden:
        return text
    return mask_codes(_WORD.sub(lambda word: _masked_word(word.group(), hidden), text), _codes(hidden))


def _codes(secrets: frozenset[str]) -> list[str]:
    return [secret for secret in secrets if is_code(secret)]


_WORD = re.compile(r"\S+")

_OPENING, _CLOSING = "'\"`(<[", "'\"`)>].,;:!?"



def _masked_word(word: str, hidden: frozenset[str]) -> str:
    """The word, or it with the password it holds within up to three
    quotes, brackets or punctuation marks on either side masked."""
    leading = min(len(word) - len(word.lstrip(_OPENING)), 3)
    trailing = min(len(word) - len(word.rstrip(_CLOSING)), 3)
    for start in range(leading + 1):
        for cut in range(trailing + 1):
            if word[start:len(word) - cut] in hidden:
                return word[:start] + MASK + word[len(word) - cut:]
    return word



def masked_copy(mail: IncomingMail, secrets: tuple[str, ...], *, state: str = "passwords removed after processing") -> bytes:
    """What is kept of a mail that carried passwords or reply addresses:
    its headers that matter and its text, with every password and the
    code of every reply address replaced by a mask."""
    codes = _codes(frozenset(secrets))
    headers = [
        (name, mask_addresses(mask_codes(mail.headers[name.lower()], codes)))
        for name in ("From", "Reply-To", "To", "Date", "Message-ID", "In-Reply-To", "References")
        if mail.headers.get(name.lower())
    ]
    headers += [
        ("Subject", mask_addresses(mask(mail.subject, secrets))),
        (MASKED_HEADER, state),
    ]
    return message_bytes(headers, mask_addresses(mask(mail.text, secrets)) + "\n")



def nothing_kept(state: str) -> bytes:
    """A copy of a mail that keeps nothing of it but what `state` says."""
    return message_bytes([(MASKED_HEADER, state)], "")

