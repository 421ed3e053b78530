"""RFC 5322 bytes in -> the sender, the Subject and the text a player wrote.

Real mail is messy: bodies come as multipart/alternative, HTML only or with
attachments, in any transfer encoding and charset (declared wrongly or not at
all), and a reply carries the quoted earlier mail and a signature below the
player's words. Nothing in here may raise on bad input: a mail we cannot make
sense of gives empty fields, and the server answers or drops it as usual.
"""

from __future__ import annotations

from dataclasses import dataclass
from email.message import Message
from email.parser import BytesHeaderParser

from pbmserv.mail.authentication import author, vouchers
from pbmserv.mail.html_text import html_to_text
from pbmserv.mail.mime import (
    RawHeaders,
    Unreadable,
    bounded_policy,
    header_text,
    inline_text_parts,
    normalise_newlines,
    part_text,
    printable,
    raw_headers,
    read_message,
    reply_address,
)
from pbmserv.mail.replies import strip_replies


@dataclass(frozen=True)
class IncomingMail:
    sender: str  # where replies go: Reply-To, else From ("" when neither is usable)
    subject: str
    body: str  # the player's own text: quotes and signature removed
    text: str  # the whole text of the mail, quotes included
    message_id: str
    references: str
    headers: dict[str, str]
    #: the mailbox of its one From header ("" if it names none or several)
    author: str = ""
    #: the mail servers whose Authentication-Results vouch for the author (`mail.authentication`)
    vouched_by: frozenset[str] = frozenset()


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
    return _incoming(raw_headers(BytesHeaderParser(policy=bounded_policy()).parsebytes(raw)), "")


#: where MTAs write the address a mail was delivered to (Postfix, Exim, qmail), most trusted first
DELIVERY_HEADERS = ("x-original-to", "delivered-to", "envelope-to")


def delivery_addresses(raw: bytes) -> list[str]:
    """The addresses the mail says it was delivered to, as MTAs write them
    at the top of a mail they hand to a program, topmost first; [] for a
    mail whose headers cannot be read."""
    try:
        headers = raw_headers(BytesHeaderParser(policy=bounded_policy()).parsebytes(raw))
    except Unreadable:
        return []
    return [value.strip().strip("<>") for name in DELIVERY_HEADERS for value in headers.get(name, []) if value.strip()]


def _incoming(headers: RawHeaders, text: str) -> IncomingMail:
    written_by = author(headers)
    return IncomingMail(
        sender=reply_address(headers),
        subject=header_text(headers, "Subject"),
        body=strip_replies(text),
        text=text,
        message_id=header_text(headers, "Message-ID"),
        references=header_text(headers, "References"),
        headers={name: header_text(headers, name) for name in KEPT_HEADERS if name in headers},
        author=written_by,
        vouched_by=vouchers(headers, written_by),
    )


def message_text(message: Message) -> str:
    """The text of the mail, with "\\n" line ends: its first inline text/plain
    part (attachments ignored), else its first HTML part as text, else ""."""
    parts = list(inline_text_parts(message))
    for subtype, part in parts:
        if subtype == "plain":
            text = part_text(part)
            if text.strip():
                return printable(normalise_newlines(text))
    for subtype, part in parts:
        if subtype == "html":
            return printable(html_to_text(part_text(part)))
    return ""
