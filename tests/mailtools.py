"""Sending test mails through a Runtime the way `pbmserv receive` does."""

from __future__ import annotations

import mailbox
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from itertools import count
from pathlib import Path

from pbmserv.mail.backends import MemoryBackend
from pbmserv.runtime import Runtime

_numbers = count(1)


def make_mail(sender: str, subject: str, body: str = "", *, headers: dict[str, str] | None = None) -> bytes:
    message = EmailMessage(policy=policy.SMTP)
    message["From"] = sender
    message["To"] = "pbmserv@localhost"
    message["Subject"] = subject
    message["Message-ID"] = f"<test-{next(_numbers)}@example.org>"
    for name, value in (headers or {}).items():
        message[name] = value
    message.set_content(body or "\n")
    return message.as_bytes()


def send(
    runtime: Runtime, sender: str, subject: str, body: str = "", *, headers: dict[str, str] | None = None,
) -> list[tuple[str, EmailMessage]]:
    """Feed one mail in; returns the (recipient, message) pairs delivered in reply."""
    return send_raw(runtime, make_mail(sender, subject, body, headers=headers))


def signup(
    runtime: Runtime, userid: str, password: str, address: str | None = None,
) -> list[tuple[str, EmailMessage]]:
    """Sign `userid` up from `address` (default userid@example.org) and, if
    the server asks that address to confirm, confirm it as a player would:
    by replying to that mail. Returns every mail delivered on the way."""
    address = address or f"{userid}@example.org"
    replies = send(runtime, address, f"signup {userid} {password}")
    requests = [
        str(message["Subject"]) for recipient, message in replies
        if recipient == address and str(message["Subject"]).startswith(f"confirm {userid} ")
    ]
    for subject in requests:
        replies += send(runtime, address, f"Re: {subject}")
    return replies


def send_raw(
    runtime: Runtime, raw: bytes, envelope_sender: str | None = None, to: str = "",
) -> list[tuple[str, EmailMessage]]:
    parser = BytesParser(policy=policy.default)
    return [(recipient, parser.parsebytes(data)) for recipient, data in feed(runtime, raw, envelope_sender, to)]


def feed(runtime: Runtime, raw: bytes, envelope_sender: str | None = None, to: str = "") -> list[tuple[str, bytes]]:
    """Feed one mail in as `pbmserv receive` does (`to`: the reply address it came to, if any);
    the (recipient, bytes) delivered in reply."""
    backend = runtime.backend
    assert isinstance(backend, MemoryBackend)
    backend.sent.clear()
    runtime.intake.store(raw, envelope_sender, to)
    runtime.processor.process_pending()
    runtime.delivery.deliver_due()
    return list(backend.sent)


def body(message: EmailMessage) -> str:
    return message.get_content().replace("\r\n", "\n")


def read_maildir(maildir: Path) -> list[bytes]:
    try:
        box = mailbox.Maildir(maildir, create=False)
        return [box.get_bytes(key) for key in box.keys()]
    except (FileNotFoundError, mailbox.NoSuchMailboxError):  # not created yet, or being created now
        return []
