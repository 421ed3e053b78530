"""RFC 5322 bytes in -> the sender, the Subject and the text a player wrote.

Real mail is messy: bodies come as multipart/alternative, HTML only or with
attachments, in any transfer encoding and charset (declared wrongly or not at
all), and a reply carries the quoted earlier mail and a signature below the
player's words. Nothing in here may raise on bad input: a mail we cannot make
sense of gives empty fields, and the server answers or drops it as usual.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from email.errors import MessageError
from email.header import decode_header, make_header
from email.message import Message
from email.parser import BytesHeaderParser, BytesParser
from email.policy import Compat32, Policy
from email.utils import getaddresses
from html.parser import HTMLParser

from pbmserv.protocol.mailbox import mailbox


@dataclass(frozen=True)
class IncomingMail:
    sender: str  # where replies go: Reply-To, else From ("" when neither is usable)
    subject: str
    body: str  # the player's own text: quotes and signature removed
    text: str  # the whole text of the mail, quotes included
    message_id: str
    references: str
    headers: dict[str, str]


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


def _bounded_policy() -> _CountingPolicy:
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
    return BytesParser(policy=_bounded_policy()).parsebytes(raw)


#: the headers the server looks at (loop protection, the masked copy it keeps)
KEPT_HEADERS = (
    "from", "reply-to", "to", "date", "message-id", "in-reply-to", "references",
    "auto-submitted", "precedence", "list-id", "x-auto-response-suppress",
)


def parse_mail(raw: bytes) -> IncomingMail:
    """The mail's sender, Subject and text; raises Unreadable for a mail
    beyond the bounds (`parse_headers` then still gives its headers)."""
    message = read_message(raw)
    text = message_text(message)
    return _incoming(raw_headers(message), text)


def parse_headers(raw: bytes) -> IncomingMail:
    """The mail's top-level headers only, its text left empty: what can be
    read of a mail that is Unreadable, to answer it (or see that it must
    not be answered). Raises Unreadable for more header lines than the bound."""
    return _incoming(raw_headers(BytesHeaderParser(policy=_bounded_policy()).parsebytes(raw)), "")


def _incoming(headers: RawHeaders, text: str) -> IncomingMail:
    return IncomingMail(
        sender=reply_address(headers),
        subject=header_text(headers, "Subject"),
        body=strip_replies(text),
        text=text,
        message_id=header_text(headers, "Message-ID"),
        references=header_text(headers, "References"),
        headers={name: header_text(headers, name) for name in KEPT_HEADERS if name in headers},
    )


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
    From's; "" if there is none."""
    for name in ("reply-to", "from"):
        for value in headers.get(name, ()):
            for _, address in getaddresses([_unfolded(_decoded(value))]):
                usable = mailbox(address.strip())
                if usable is not None:
                    return usable
    return ""


def _unfolded(value: str) -> str:
    """A header value on one line (RFC 5322 unfolding)."""
    return re.sub(r"\r?\n(?=[ \t])", "", value)


def header_text(headers: RawHeaders, name: str) -> str:
    """The first `name` header, decoded (encoded words, 8-bit bytes) and
    unfolded onto one line; "" when absent."""
    values = headers.get(name.lower())
    return " ".join(_printable(_decoded(values[0])).split()) if values else ""


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


# -- body --------------------------------------------------------------------------


def message_text(message: Message) -> str:
    """The text of the mail, with "\\n" line ends: its first inline text/plain
    part (attachments ignored), else its first HTML part as text, else ""."""
    parts = list(_inline_text_parts(message))
    for subtype, part in parts:
        if subtype == "plain":
            text = part_text(part)
            if text.strip():
                return _printable(normalise_newlines(text))
    for subtype, part in parts:
        if subtype == "html":
            return _printable(html_to_text(part_text(part)))
    return ""


def _inline_text_parts(message: Message) -> Iterator[tuple[str, Message]]:
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


def _printable(text: str) -> str:
    """Drop control characters (NUL breaks PostgreSQL text) and lone
    surrogates (they cannot be encoded into a reply)."""
    return _SURROGATE.sub("\ufffd", _CONTROL.sub("", text))


# -- HTML ----------------------------------------------------------------------------


class _TextExtractor(HTMLParser):
    """HTML to plain text: <p> and headings become paragraphs, <div>, <br>,
    <li> and table rows lines; <blockquote> becomes `> ` quoted lines (which
    strip_replies drops); style, script and title are dropped."""

    PARAGRAPHS = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "ul", "ol", "table", "dl"}
    LINES = {"div", "tr", "li", "dd", "dt", "hr", "center", "section", "article", "header", "footer", "address"}
    HIDDEN = {"style", "script", "title", "template"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.at_line_start = True
        self.hidden = 0
        self.preformatted = 0
        self.quote_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.HIDDEN:
            self.hidden += 1
        elif tag == "br":
            self._newline()
        elif tag in self.PARAGRAPHS:
            self._blank_line()
        elif tag in self.LINES:
            self._end_line()
        elif tag in ("td", "th") and not self.at_line_start:
            self.out.append(" ")
        if tag == "li":
            self._write("- ")
        elif tag == "pre":
            self.preformatted += 1
        elif tag == "blockquote":
            self.quote_depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in self.HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        elif tag in self.PARAGRAPHS:
            self._blank_line()
        elif tag in self.LINES:
            self._end_line()
        if tag == "pre":
            self.preformatted = max(0, self.preformatted - 1)
        elif tag == "blockquote":
            self.quote_depth = max(0, self.quote_depth - 1)

    def handle_data(self, data: str) -> None:
        if self.hidden:
            return
        if not self.preformatted:
            self._write(re.sub(r"\s+", " ", data))
            return
        for index, line in enumerate(data.replace("\xa0", " ").split("\n")):
            if index:
                self._newline()
            self._write(line, keep_indent=True)

    def _write(self, text: str, keep_indent: bool = False) -> None:
        if not keep_indent and self.out and self.out[-1].endswith(" "):
            text = text.lstrip()
        if self.at_line_start:
            text = text if keep_indent else text.lstrip()
            if not text:
                return
            if self.quote_depth:
                self.out.append("> " * self.quote_depth)
            self.at_line_start = False
        self.out.append(text)

    def _newline(self) -> None:
        self.out.append("\n")
        self.at_line_start = True

    def _end_line(self) -> None:
        if not self.at_line_start:
            self._newline()

    def _blank_line(self) -> None:
        self._end_line()
        self._newline()


def html_to_text(html: str) -> str:
    """Readable text from HTML: paragraphs and line breaks kept, entities
    decoded, at most one blank line in a row."""
    extractor = _TextExtractor()
    extractor.feed(normalise_newlines(html))
    extractor.close()
    lines = "".join(extractor.out).replace("\xa0", " ").split("\n")
    kept: list[str] = []
    for line in (line.rstrip() for line in lines):
        if line or (kept and kept[-1]):
            kept.append(line)
    return "\n".join(kept).strip("\n")


# -- quotes and signatures --------------------------------------------------------

# "On <date>, <name> wrote:" and its German and French forms. The date (a
# digit) gives it away: above `>` quotes it goes with them, anywhere else it
# ends the player's text (the quoted mail below it is not `>`-quoted).
_DATED_ATTRIBUTION = re.compile(
    r"""(?=.*\d)\s*(
        on\s.*\swrote                         # Gmail, Apple Mail, Thunderbird, Outlook
      | am\s.*\sschrieb(\s[^:]*)?             # Am 05.01.2026 um 09:00 schrieb Alice:
      | [^:]*\sschrieb\s+am\s.*               # Alice schrieb am 05.01.2026 09:00:
      | le\s.*\sa\s+écrit\s*                  # Le 5 janv. 2026 à 09:00, Alice a écrit :
    ):\s*""",
    re.IGNORECASE | re.VERBOSE,
)
# "<name> wrote:" (Thunderbird): only taken as an attribution when a quote
# follows it or nothing of the player's does.
_NAME_ATTRIBUTION = re.compile(r"\s*\S.{0,100}\s(wrote|schrieb|a\s+écrit)\s*:\s*", re.IGNORECASE)
_SEPARATOR = re.compile(
    r"\s*(-{2,}\s*(original message|forwarded message|ursprüngliche nachricht|message d'origine"
    r"|weitergeleitete nachricht|message transféré)\s*-{2,}|begin forwarded message:)\s*",
    re.IGNORECASE,
)
_UNDERSCORE_RULE = re.compile(r"\s*_{10,}\s*")
_HEADER_FROM = re.compile(r"\s*\*?(from|von|de)\s?:\*?\s.*", re.IGNORECASE)
_HEADER_NEXT = re.compile(
    r"\s*\*?(sent|date|to|cc|subject|gesendet|datum|an|betreff|envoyé|à|objet)\s?:\*?(\s.*)?", re.IGNORECASE
)
_MOBILE_FOOTER = re.compile(
    r"\s*(sent from (my|mail for|yahoo mail|outlook)\b.{0,40}|get outlook for \S.{0,20}"
    r"|von meinem \S.{0,40} gesendet|envoyé de mon \S.{0,40})\s*",
    re.IGNORECASE,
)
_LONGEST_MARKER = 300  # attributions and the like are short; longer lines are never tested


def strip_replies(text: str) -> str:
    """The player's own words: quoted lines (`>`, and the attribution line
    that introduces them) are dropped, and the text ends at a signature
    (`-- `), a mobile footer or a quoted earlier mail that is not `>`-quoted
    (Outlook's header block, "-----Original Message-----", "On ... wrote:").
    Lines lose trailing whitespace; blank lines at either end go."""
    lines = _without_quotes([line.rstrip() for line in normalise_newlines(text).split("\n")])
    return "\n".join(lines[: _end_of_own_text(lines)]).strip("\n")


def _is_quote(line: str) -> bool:
    return line.lstrip().startswith(">")


def _attribution_length(lines: list[str], index: int) -> int:
    """How many lines an attribution starting at `index` spans (0: none)."""
    line = lines[index]
    if line.endswith(":") and len(line) <= _LONGEST_MARKER and _NAME_ATTRIBUTION.fullmatch(line):
        return 1
    return _dated_attribution_length(lines, index)


def _dated_attribution_length(lines: list[str], index: int) -> int:
    """1 for "On <date>, <name> wrote:" at `index`, 2 when it is wrapped over
    two lines (as Gmail does), 0 when there is none."""
    line = lines[index]
    if len(line) > _LONGEST_MARKER:
        return 0
    if line.endswith(":") and _DATED_ATTRIBUTION.fullmatch(line):
        return 1
    following = lines[index + 1] if index + 1 < len(lines) else ""
    if following.endswith(":") and len(following) <= _LONGEST_MARKER:
        return 2 if _DATED_ATTRIBUTION.fullmatch(f"{line} {following.strip()}") else 0
    return 0


def _without_quotes(lines: list[str]) -> list[str]:
    """Drop `>` lines and an attribution right above them; a run of blank
    and dropped lines becomes one blank line."""
    kept: list[str] = []
    dropping = False
    index = 0
    while index < len(lines):
        line = lines[index]
        length = 1 if _is_quote(line) else _attribution_length(lines, index)
        if length and (_is_quote(line) or _is_quote(_next_text(lines, index + length - 1))):
            while kept and not kept[-1]:
                kept.pop()
            dropping = True
            index += length
            continue
        if line or not dropping:
            if dropping:
                kept.append("")
                dropping = False
            kept.append(line)
        index += 1
    return kept


def _next_text_index(lines: list[str], index: int) -> int:
    """Index of the first non-blank line after `index` (len(lines) if none)."""
    index += 1
    while index < len(lines) and not lines[index].strip():
        index += 1
    return index


def _next_text(lines: list[str], index: int) -> str:
    following = _next_text_index(lines, index)
    return lines[following] if following < len(lines) else ""


def _end_of_own_text(lines: list[str]) -> int:
    """Index of the first line that is not the player's any more."""
    end = len(lines)
    for index in reversed(range(len(lines))):
        if _starts_foreign_text(lines, index) or (
            _attribution_length(lines, index) and _next_text_index(lines, index) >= end
        ):
            end = index
    return end


def _starts_foreign_text(lines: list[str], index: int) -> bool:
    """Whether a signature, a footer or a quoted mail that is not `>`-quoted starts here."""
    line = lines[index]
    if len(line) > _LONGEST_MARKER:
        return False
    if line == "--" or _SEPARATOR.fullmatch(line) or _MOBILE_FOOTER.fullmatch(line):  # "-- " lost its space
        return True
    if _dated_attribution_length(lines, index):
        return True
    following = lines[index + 1] if index + 1 < len(lines) else ""
    if _UNDERSCORE_RULE.fullmatch(line) and _HEADER_FROM.fullmatch(following):  # Outlook on the web
        return True
    return bool(_HEADER_FROM.fullmatch(line) and _HEADER_NEXT.fullmatch(following))  # Outlook
