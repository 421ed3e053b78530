"""Mail out: plain-text replies with the headers a well-behaved robot sends.

The bytes are written here directly rather than through `email.message`:
every reply has the same simple shape (one text/plain part, headers we
make ourselves), and the email package's generator costs more than the
rest of a move's handling. `tests/test_outbound.py` reads every shape back
with `policy.default` to keep this honest.
"""

from __future__ import annotations

from datetime import datetime
from email import quoprimime
from email.header import Header
from email.utils import format_datetime, make_msgid

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


def message_bytes(headers: list[tuple[str, str]], text: str) -> bytes:
    """A text/plain mail: 7-bit when the text is ASCII with lines of a lawful
    length, else UTF-8 as quoted-printable (still readable where a client
    shows the source)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if text.isascii() and all(len(line) <= LONGEST_LINE for line in text.split("\n")):
        content = [("Content-Type", 'text/plain; charset="us-ascii"'), ("Content-Transfer-Encoding", "7bit")]
        body = text
    else:
        content = [("Content-Type", 'text/plain; charset="utf-8"'), ("Content-Transfer-Encoding", "quoted-printable")]
        # quoprimime encodes one character per byte: hand it the UTF-8 bytes as Latin-1
        body = quoprimime.body_encode(text.encode("utf-8").decode("latin-1"), maxlinelen=76, eol="\n")
    lines = [header_line(name, value) for name, value in [*headers, ("MIME-Version", "1.0"), *content]]
    return ("\r\n".join(lines) + "\r\n\r\n" + body.replace("\n", "\r\n")).encode("ascii")


def compose(
    *,
    sender: str,
    recipient: str,
    subject: str,
    body: str,
    date: datetime,
    in_reply_to: str = "",
    references: str = "",
    reply_to: str = "",
) -> tuple[str, bytes]:
    """The Message-ID and the bytes of a reply."""
    text = body if body.endswith("\n") else body + "\n"
    message_id = make_msgid(domain=sender.rpartition("@")[2] or "localhost")
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
        headers.append(("References", " ".join(part for part in (references, in_reply_to) if part)))
    headers.append(("Auto-Submitted", "auto-replied"))
    return message_id, message_bytes(headers, text)
