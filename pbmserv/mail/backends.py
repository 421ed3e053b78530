"""Where outgoing mail goes: an SMTP relay, a maildir, the console, or memory (tests)."""

from __future__ import annotations

import mailbox
import smtplib
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from pbmserv.config import Settings


class TemporaryFailure(Exception):
    """Try this mail again later (4xx, network trouble)."""


class PermanentFailure(Exception):
    """The relay refused this mail for good (5xx)."""


class Backend(Protocol):
    def send(self, sender: str, recipient: str, raw: bytes) -> None: ...


@dataclass
class MaildirBackend:
    path: Path
    _maildir: mailbox.Maildir | None = field(default=None, init=False, repr=False)

    def send(self, sender: str, recipient: str, raw: bytes) -> None:
        # Maildir writes into tmp/ and renames into new/: a reader never sees half a mail
        try:
            if self._maildir is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._maildir = mailbox.Maildir(self.path, create=True)
            self._maildir.add(raw)
        except OSError as error:
            self._maildir = None  # made again on the retry (say the folder was removed)
            raise TemporaryFailure(f"maildir {self.path}: {error}") from error


@dataclass
class ConsoleBackend:
    def send(self, sender: str, recipient: str, raw: bytes) -> None:
        out = sys.stdout
        out.write(f"----- mail to {recipient} -----\n")
        out.write(raw.decode("utf-8", errors="replace").replace("\r\n", "\n"))
        out.write("----- end -----\n")
        out.flush()


@dataclass
class MemoryBackend:
    sent: list[tuple[str, bytes]] = field(default_factory=list)

    def send(self, sender: str, recipient: str, raw: bytes) -> None:
        self.sent.append((recipient, raw))


@dataclass
class SmtpBackend:
    host: str
    port: int
    timeout: float = 30.0

    def send(self, sender: str, recipient: str, raw: bytes) -> None:
        try:
            with smtplib.SMTP(self.host, self.port, timeout=self.timeout) as client:
                client.sendmail(sender, [recipient], raw)
        except smtplib.SMTPRecipientsRefused as error:
            code, message = next(iter(error.recipients.values()))
            _raise_for(code, message)
        except smtplib.SMTPResponseException as error:
            _raise_for(error.smtp_code, error.smtp_error)
        except (OSError, smtplib.SMTPException) as error:
            raise TemporaryFailure(str(error)) from error


def _raise_for(code: int, message: bytes | str) -> None:
    text = message.decode("utf-8", "replace") if isinstance(message, bytes) else message
    if 500 <= code < 600:
        raise PermanentFailure(f"{code} {text}")
    raise TemporaryFailure(f"{code} {text}")


def make_backend(settings: Settings) -> Backend:
    if settings.mail_backend == "maildir":
        return MaildirBackend(Path(settings.maildir))
    if settings.mail_backend == "console":
        return ConsoleBackend()
    if settings.mail_backend == "memory":
        return MemoryBackend()
    host, _, port = settings.relay.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError("the smtp backend needs PBMSERV_RELAY as host:port")
    return SmtpBackend(host, int(port))
