"""Mail out: plain-text replies with the headers a well-behaved robot sends."""

from __future__ import annotations

from datetime import datetime
from email import policy
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid


def compose(
    *,
    sender: str,
    recipient: str,
    subject: str,
    body: str,
    date: datetime,
    in_reply_to: str = "",
    references: str = "",
) -> EmailMessage:
    message = EmailMessage(policy=policy.SMTP)
    message["From"] = sender
    message["To"] = recipient
    message["Subject"] = subject
    message["Date"] = format_datetime(date)
    message["Message-ID"] = make_msgid(domain=sender.rpartition("@")[2] or "localhost")
    if in_reply_to:
        message["In-Reply-To"] = in_reply_to
        message["References"] = " ".join(part for part in (references, in_reply_to) if part)
    message["Auto-Submitted"] = "auto-replied"
    message.set_content(body if body.endswith("\n") else body + "\n")
    return message
