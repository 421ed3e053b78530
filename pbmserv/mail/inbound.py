"""RFC 5322 bytes in -> the sender, the Subject and the text a player wrote."""

from __future__ import annotations

import re
from dataclasses import dataclass
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import getaddresses
from html.parser import HTMLParser


@dataclass(frozen=True)
class IncomingMail:
    sender: str  # where replies go: Reply-To, else From ("" when neither is usable)
    subject: str
    body: str  # the player's own text: quotes and signature removed
    message_id: str
    references: str
    headers: dict[str, str]


def read_message(raw: bytes) -> EmailMessage:
    message = BytesParser(policy=policy.default).parsebytes(raw)
    assert isinstance(message, EmailMessage)
    return message


def parse_mail(raw: bytes) -> IncomingMail:
    message = read_message(raw)
    return IncomingMail(
        sender=reply_address(message),
        subject=_header(message, "Subject"),
        body=strip_replies(message_text(message)),
        message_id=_header(message, "Message-ID").strip(),
        references=_header(message, "References").strip(),
        headers={key.lower(): _header(message, key) for key in set(message.keys())},
    )


def reply_address(message: EmailMessage) -> str:
    for name in ("Reply-To", "From"):
        try:
            addresses = getaddresses([str(value) for value in message.get_all(name, [])])
        except (TypeError, ValueError, IndexError):
            continue
        for _, address in addresses:
            if "@" in address:
                return address.strip().lower()
    return ""


def _header(message: EmailMessage, name: str) -> str:
    try:
        value = message.get(name)
    except (TypeError, ValueError, IndexError):
        return ""
    return " ".join(str(value).split()) if value is not None else ""


def message_text(message: EmailMessage) -> str:
    """The text of the mail: its text/plain part, else its HTML part as text."""
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    text = _decoded(part)
    if part.get_content_subtype() == "html":
        return html_to_text(text)
    return text


def _decoded(part: EmailMessage) -> str:
    try:
        content = part.get_content()
    except (LookupError, UnicodeError, AssertionError):
        payload = part.get_payload(decode=True) or b""
        content = payload.decode("utf-8", errors="replace") if isinstance(payload, bytes) else str(payload)
    if isinstance(content, bytes):
        return content.decode("utf-8", errors="replace")
    return str(content)


class _TextExtractor(HTMLParser):
    BREAKS = {"br", "p", "div", "tr", "li", "h1", "h2", "h3", "h4", "blockquote", "pre"}
    SKIP = {"style", "script", "head", "title"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0
        self.quoting = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self.skipping += 1
        if tag == "blockquote":
            self.quoting += 1
        if tag in self.BREAKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP and self.skipping:
            self.skipping -= 1
        if tag == "blockquote" and self.quoting:
            self.quoting -= 1
        if tag in self.BREAKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.skipping and not self.quoting:
            self.parts.append(data)


def html_to_text(html: str) -> str:
    extractor = _TextExtractor()
    extractor.feed(html)
    extractor.close()
    lines = (" ".join(line.split()) for line in "".join(extractor.parts).splitlines())
    return "\n".join(lines)


_ATTRIBUTION = re.compile(r"^\s*(on\s.+wrote:|.+\s(a écrit|schrieb)\s?:)\s*$", re.IGNORECASE)
_ORIGINAL = re.compile(r"^\s*-{2,}\s*(original message|forwarded message)\s*-{2,}\s*$", re.IGNORECASE)
_OUTLOOK_HEADER = re.compile(r"^\s*(from|sent|von|de):\s", re.IGNORECASE)


def strip_replies(text: str) -> str:
    """The player's own words: stop at a signature or a quoted earlier mail,
    drop `>` quote lines."""
    kept: list[str] = []
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for index, line in enumerate(lines):
        if line.rstrip() in ("--", "-- ") and line.startswith("--"):
            break
        if _ORIGINAL.match(line) or _ATTRIBUTION.match(line):
            break
        if line.startswith("_" * 10) and index + 1 < len(lines) and _OUTLOOK_HEADER.match(lines[index + 1]):
            break
        if _OUTLOOK_HEADER.match(line) and index + 1 < len(lines) and re.match(
            r"^\s*(sent|date|gesendet|envoyé):\s", lines[index + 1], re.IGNORECASE
        ):
            break
        if line.lstrip().startswith(">"):
            continue
        kept.append(line.rstrip())
    return "\n".join(kept).strip()
