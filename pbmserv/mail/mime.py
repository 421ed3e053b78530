"""Reading a mail's MIME structure within bounds on its parts, headers and
lines (`Unreadable` beyond them): its headers decoded, its inline text parts,
any charset and transfer encoding undone. Nothing here raises on bad input
but `Unreadable`."""

from __future__ import annotations

import re
from collections.abc import Iterator
from email.errors import MessageError
from email.header import decode_header, make_header
from email.message import Message
from email.parser import BytesParser
from email.policy import Compat32, Policy
from email.utils import getaddresses

from pbmserv.mailbox import mailbox

# -- bounds ----------------------------------------------------------------------

#: the most a mail may hold for the server to read it. The stdlib parser
#: recurses once per nested part, so 1,000 nested parts overflow Python's
#: stack; at most MOST_PARTS parts bound that depth too. Real mail has a few
#: parts and a few dozen headers; the line bound keeps a 256 KB mail of
#: empty lines from costing more than an ordinary one.
MOST_PARTS = 100
MOST_HEADERS = 1_000
MOST_LINES = 20_000


class Unreadable(Exception):
    """A mail the server will not read; `reason` says why, in words for its sender."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class _Counts:
    """Counts parts and headers as the parser makes them, and stops it at the bounds."""

    def __init__(self) -> None:
        self.parts = self.headers = 0

    def new_part(self, policy: Policy) -> Message:
        self.parts += 1
        if self.parts > MOST_PARTS:
            raise Unreadable(f"it has more than {MOST_PARTS} MIME parts")
        return Message(policy=policy)

    def header(self) -> None:
        self.headers += 1
        if self.headers > MOST_HEADERS:
            raise Unreadable(f"it has more than {MOST_HEADERS} header lines")


class _CountingPolicy(Compat32):
    counts: _Counts

    def __init__(self, counts: _Counts) -> None:
        super().__init__(message_factory=counts.new_part)
        object.__setattr__(self, "counts", counts)  # a policy refuses attributes set the ordinary way

    def header_source_parse(self, sourcelines: list[str]) -> tuple[str, str]:
        self.counts.header()
        return super().header_source_parse(sourcelines)


def bounded_policy() -> _CountingPolicy:
    return _CountingPolicy(_Counts())


def read_message(raw: bytes) -> Message:
    """The parsed mail; raises Unreadable beyond the bounds above. The
    compat32 policy keeps header values as the raw text, which
    `header_text` decodes only for the few headers we read: the header
    objects of `policy.default` cost more than all the rest of a move's
    mail handling together."""
    lines = raw.count(b"\n") + raw.count(b"\r") - raw.count(b"\r\n")
    if lines > MOST_LINES:
        raise Unreadable(f"it has {lines} lines, more than the {MOST_LINES} the server reads")
    return BytesParser(policy=bounded_policy()).parsebytes(raw)


# -- headers -------------------------------------------------------------------

# What the email package may raise while parsing a malformed header value.
_HEADER_ERRORS = (MessageError, LookupError, ValueError, TypeError, IndexError, AttributeError)

RawHeaders = dict[str, list[str]]


def raw_headers(message: Message) -> RawHeaders:
    """The header values as written, by lower-case name, in mail order."""
    headers: RawHeaders = {}
    for name, value in message.raw_items():
        if isinstance(value, str):
            headers.setdefault(name.lower(), []).append(value)
    return headers


def reply_address(headers: RawHeaders) -> str:
    """Where replies go: the first Reply-To address that is a mailbox, else
    From's; "" if there is none. Encoded words are not decoded first: an
    address is never one (RFC 2047, 5), and decoded, `=?utf-8?q?x=40y?=`
    or a display name holding CR LF and "Bcc: x@y" would name another."""
    for name in ("reply-to", "from"):
        for value in headers.get(name, ()):
            text = value if value.isascii() else _surrogates_to_text(value)
            for _, address in getaddresses([unfolded(text)]):
                usable = mailbox(address.strip())
                if usable is not None:
                    return usable
    return ""


def unfolded(value: str) -> str:
    """A header value on one line (RFC 5322 unfolding)."""
    return re.sub(r"\r?\n(?=[ \t])", "", value)


def header_text(headers: RawHeaders, name: str) -> str:
    """The first `name` header, decoded (encoded words, 8-bit bytes) and
    unfolded onto one line; "" when absent."""
    values = headers.get(name.lower())
    return " ".join(printable(_decoded(values[0])).split()) if values else ""


def _decoded(value: str) -> str:
    """A raw header value as text: 8-bit bytes by `decode_bytes`, RFC 2047
    encoded words by their charset; a malformed encoded word stays as written."""
    if not value.isascii():
        value = _surrogates_to_text(value)
    if "=?" not in value:
        return value
    try:
        return str(make_header(decode_header(value)))
    except _HEADER_ERRORS:
        return value


def _surrogates_to_text(value: str) -> str:
    """A header as the parser keeps it (8-bit bytes as surrogates) to text."""
    return decode_bytes(value.encode("utf-8", "surrogateescape"), None)


# -- parts -----------------------------------------------------------------------


def inline_text_parts(message: Message) -> Iterator[tuple[str, Message]]:
    """The text parts that are not attachments, with their subtypes, depth
    first in mail order. Attached mails (message/rfc822) are not entered."""
    stack = [message]
    while stack:
        part = stack.pop()
        maintype, _, subtype = part.get_content_type().partition("/")
        if part.is_multipart():
            if maintype == "multipart":
                stack.extend(reversed([item for item in part.get_payload() if isinstance(item, Message)]))
        elif maintype == "text" and not _is_attachment(part):
            yield subtype, part


def _is_attachment(part: Message) -> bool:
    try:
        return part.get_content_disposition() == "attachment" or part.get_filename() is not None
    except _HEADER_ERRORS:
        return True


def part_text(part: Message) -> str:
    """A leaf part's content as text, undoing its transfer encoding and charset."""
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        return ""
    try:
        charset = part.get_content_charset()
    except _HEADER_ERRORS:
        charset = None
    return decode_bytes(payload, charset)


# ISO-8859-1 labels are read as its superset Windows-1252, as browsers do:
# mail that says Latin-1 often holds Windows "smart quotes".
_CHARSET_ALIASES = {"iso-8859-1": "windows-1252", "iso8859-1": "windows-1252", "latin1": "windows-1252",
                    "latin-1": "windows-1252", "us-ascii": "", "ascii": ""}


def decode_bytes(data: bytes, charset: str | None) -> str:
    """Decode leniently: the declared charset if Python knows it and it fits,
    else UTF-8, else the declared charset with replacement characters, else
    Windows-1252; never raises."""
    declared = (charset or "").strip().lower()
    declared = _CHARSET_ALIASES.get(declared, declared)
    for candidate, errors in ((declared, "strict"), ("utf-8", "strict"), (declared, "replace")):
        if candidate:
            try:
                return data.decode(candidate, errors)
            except (LookupError, ValueError):  # unknown, not a text codec, or does not fit (UnicodeError)
                pass
    return data.decode("windows-1252", errors="replace")


def normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def printable(text: str) -> str:
    """Drop control characters (NUL breaks PostgreSQL text) and lone
    surrogates (they cannot be encoded into a reply)."""
    return _SURROGATE.sub("\ufffd", _CONTROL.sub("", text))
