"""Mail out: plain-text replies with the headers a well-behaved robot sends.

Replies are built with `MIMEText` and serialised with `policy.SMTP`: the
header objects of `EmailMessage` parse every header we set, which costs
about 2 ms a mail, four times the whole of this function, on a path that
runs twice for every move.
"""

from __future__ import annotations

from datetime import datetime
from email import charset, policy
from email.header import Header
from email.mime.text import MIMEText
from email.utils import format_datetime, make_msgid

# UTF-8 bodies as quoted-printable: still readable where a client shows the source
_UTF8_QP = charset.Charset("utf-8")
_UTF8_QP.body_encoding = charset.QP


def text_message(text: str) -> MIMEText:
    """A text/plain message: 7-bit when the text is ASCII, else UTF-8 as quoted-printable."""
    return MIMEText(text, "plain", "us-ascii" if text.isascii() else _UTF8_QP)  # type: ignore[arg-type]


def encoded_subject(subject: str) -> str:
    return subject if subject.isascii() else Header(subject, "utf-8").encode()


def compose(
    *,
    sender: str,
    recipient: str,
    subject: str,
    body: str,
    date: datetime,
    in_reply_to: str = "",
    references: str = "",
) -> tuple[str, bytes]:
    """The Message-ID and the bytes of a reply."""
    text = body if body.endswith("\n") else body + "\n"
    message = text_message(text)
    message_id = make_msgid(domain=sender.rpartition("@")[2] or "localhost")
    message["From"] = sender
    message["To"] = recipient
    message["Subject"] = encoded_subject(subject)
    message["Date"] = format_datetime(date)
    message["Message-ID"] = message_id
    if in_reply_to:
        message["In-Reply-To"] = in_reply_to
        message["References"] = " ".join(part for part in (references, in_reply_to) if part)
    message["Auto-Submitted"] = "auto-replied"
    return message_id, message.as_bytes(policy=policy.SMTP)
