"""Mail out: plain-text replies with the headers a well-behaved robot sends,
and board mails with a picture for players who asked for them.

The bytes of a plain reply are written here directly rather than through
`email.message`: nearly every reply has the same simple shape (one
text/plain part, headers we make ourselves), and the email package's
generator costs more than the rest of a move's handling. A mail with a
picture (`HtmlVersion`, docs/decisions/0143-pictures-in-mail.md) is
rarer and has parts within parts: the email package writes it, around a
text part whose bytes are the plain mail's own. `tests/test_outbound.py`
and `tests/test_pictures_in_mail.py` read every shape back with
`policy.default` to keep this honest.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from email import policy, quoprimime
from email.header import Header
from email.message import MIMEPart
from email.utils import format_datetime, make_msgid
from html import escape

from pbmserv.mail import attachments as attached
from pbmserv.mail.attachments import Attachment

#: RFC 5322's limit for a line; RFC 5322 asks for 78 where it can be had
LONGEST_LINE = 998
FOLD_AT = 78


def header_line(name: str, value: str) -> str:
    """`name: value` as lawful header text: one line when it is short ASCII
    (nearly every header a reply has), else folded by the email package's
    `Header`, with non-ASCII text as RFC 2047 encoded words."""
    value = " ".join(value.split())  # no line breaks can get in from what a sender wrote
    line = f"{name}: {value}"
    if len(line) <= FOLD_AT and line.isascii():
        return line
    charset = "us-ascii" if value.isascii() else "utf-8"
    return f"{name}: " + Header(value, charset, header_name=name).encode(linesep="\r\n")


#: the email package's policy for what it writes: policy.default, with the line ends of the mail on the wire
WIRE = policy.default.clone(linesep="\r\n")


@dataclass(frozen=True)
class Picture:
    """A PNG shown inline by an HTML part, which refers to it as `cid:` + `content_id`."""

    png: bytes
    content_id: str  # an RFC 5322 msg-id without its angle brackets
    filename: str


@dataclass(frozen=True)
class HtmlVersion:
    """The HTML alternative of a mail's text: `body` is the inside of the
    document's <body>, HTML already (every text in it escaped), showing
    `pictures` (a board mail's one, a digest's one per board); `notice` a
    paragraph of text put above it (a cap's pause)."""

    title: str
    body: str
    pictures: tuple[Picture, ...]
    notice: str = ""

    def document(self) -> str:
        notice = f"<p><strong>{escape(self.notice)}</strong></p>\n" if self.notice else ""
        return (
            f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{escape(self.title)}</title>\n'
            f"</head>\n<body>\n{notice}{self.body}</body>\n</html>\n"
        )


def text_content(text: str) -> tuple[list[tuple[str, str]], str]:
    """The content headers and the encoded lines (LF ends) of a text/plain
    part: 7-bit when the text is ASCII with lines of a lawful length, else
    UTF-8 as quoted-printable (still readable where a client shows the
    source)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if text.isascii() and all(len(line) <= LONGEST_LINE for line in text.split("\n")):
        return [("Content-Type", 'text/plain; charset="us-ascii"'), ("Content-Transfer-Encoding", "7bit")], text
    # quoprimime encodes one character per byte: hand it the UTF-8 bytes as Latin-1
    body = quoprimime.body_encode(text.encode("utf-8").decode("latin-1"), maxlinelen=76, eol="\n")
    return [("Content-Type", 'text/plain; charset="utf-8"'), ("Content-Transfer-Encoding", "quoted-printable")], body


def message_bytes(headers: list[tuple[str, str]], text: str) -> bytes:
    """A text/plain mail."""
    content, body = text_content(text)
    lines = [header_line(name, value) for name, value in [*headers, ("MIME-Version", "1.0"), *content]]
    return ("\r\n".join(lines) + "\r\n\r\n" + body.replace("\n", "\r\n")).encode("ascii")


def message_with_picture(headers: list[tuple[str, str]], text: str, html: HtmlVersion) -> bytes:
    """A multipart/alternative mail: first the text/plain part, its bytes
    those of `message_bytes`'s body, then a multipart/related of the HTML
    and the pictures it shows inline. The email package writes the parts;
    the mail's own headers are the very lines of a plain mail's."""
    message = MIMEPart(policy=WIRE)
    content, body = text_content(text)
    for name, value in content:
        message[name] = value
    message.set_payload(body)
    message.make_alternative()  # the text part as it stands becomes the first part
    related = MIMEPart(policy=WIRE)
    related.set_content(html.document(), subtype="html", cte="quoted-printable")
    for picture in html.pictures:
        related.add_related(
            picture.png, "image", "png", cid=f"<{picture.content_id}>", disposition="inline", filename=picture.filename,
        )
    message.attach(related)
    lines = [header_line(name, value) for name, value in [*headers, ("MIME-Version", "1.0")]]
    return ("\r\n".join(lines) + "\r\n").encode("ascii") + message.as_bytes(policy=WIRE)


@dataclass(frozen=True)
class BoardThread:
    """The board a mail is of: every mail of a board to one address refers
    to the board's first mail to it, so that they read as one thread
    (docs/decisions/0144-one-thread-per-board.md)."""

    game: str
    board: int
    board_id: int
    created_at: datetime
    #: the board's first mail: its Message-ID is the thread's root
    first: bool = False
    #: a chat: its Message-ID says so, and a reply to it is a chat (`answers_chat`)
    chat: bool = False


#: what the Message-ID of a chat mail ends with before its `@`
_CHAT_MARK = ".chat"


def new_message_id(domain: str, *, chat: bool = False) -> str:
    return make_msgid(idstring=_CHAT_MARK[1:] if chat else None, domain=domain)


def answers_chat(in_reply_to: str) -> bool:
    """Whether a mail's In-Reply-To names a chat mail of the server's (`new_message_id`)."""
    return in_reply_to.strip().strip("<>").rpartition("@")[0].endswith(_CHAT_MARK)


def message_with_attachments(headers: list[tuple[str, str]], text: str, attachments: tuple[Attachment, ...]) -> bytes:
    """A multipart/mixed mail: the text/plain part, its bytes those of
    `message_bytes`'s body, then the files (`attachments.mixed`); the mail's
    own headers are the very lines of a plain mail's."""
    content, body = text_content(text)
    lines = [header_line(name, value) for name, value in [*headers, ("MIME-Version", "1.0")]]
    return ("\r\n".join(lines) + "\r\n").encode("ascii") + attached.mixed(content, body, attachments).as_bytes(policy=WIRE)


def compose(
    *,
    sender: str,
    recipient: str,
    subject: str,
    body: str,
    date: datetime,
    message_id: str = "",
    in_reply_to: str = "",
    references: str = "",
    reply_to: str = "",
    html: HtmlVersion | None = None,
    attachments: tuple[Attachment, ...] = (),
) -> tuple[str, bytes]:
    """The Message-ID (`message_id`, else a new one) and the bytes of a
    reply: text alone, or with `html` beside it, or with files attached.
    Its References are `references` and `in_reply_to`, each once."""
    text = body if body.endswith("\n") else body + "\n"
    message_id = message_id or new_message_id(sender.rpartition("@")[2] or "localhost")
    headers = [
        ("From", sender),
        ("To", recipient),
        ("Subject", subject),
        ("Date", format_datetime(date)),
        ("Message-ID", message_id),
    ]
    if reply_to:
        headers.append(("Reply-To", reply_to))
    if in_reply_to:
        headers.append(("In-Reply-To", in_reply_to))
        headers.append(("References", " ".join(dict.fromkeys(f"{references} {in_reply_to}".split()))))
    headers.append(("Auto-Submitted", "auto-replied"))
    if attachments:
        assert html is None, "a mail with files attached has no HTML version"
        return message_id, message_with_attachments(headers, text, attachments)
    return message_id, message_bytes(headers, text) if html is None else message_with_picture(headers, text, html)
