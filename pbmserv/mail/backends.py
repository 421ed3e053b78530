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

    def close(self) -> None:
        """End what `send` keeps open between mails (a relay session); called after each batch."""


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

    def close(self) -> None:
        pass


@dataclass
class ConsoleBackend:
    def send(self, sender: str, recipient: str, raw: bytes) -> None:
        out = sys.stdout
        out.write(f"----- mail to {recipient} -----\n")
        out.write(raw.decode("utf-8", errors="replace").replace("\r\n", "\n"))
        out.write("----- end -----\n")
        out.flush()

    def close(self) -> None:
        pass


@dataclass
class MemoryBackend:
    sent: list[tuple[str, bytes]] = field(default_factory=list)

    def send(self, sender: str, recipient: str, raw: bytes) -> None:
        self.sent.append((recipient, raw))

    def close(self) -> None:
        pass


@dataclass
class SmtpBackend:
    """Mail to a relay, one session for a batch of mails (a connection for
    each would cost more than the mail). A session the relay has closed
    meanwhile is opened again once; when the relay cannot be reached, the
    rest of the batch fails at once instead of waiting out its timeout
    again for every mail."""

    host: str
    port: int
    timeout: float = 30.0
    _client: smtplib.SMTP | None = field(default=None, init=False, repr=False)
    _unreachable: TemporaryFailure | None = field(default=None, init=False, repr=False)

    def send(self, sender: str, recipient: str, raw: bytes) -> None:
        kept = self._client is not None
        try:
            self._session().sendmail(sender, [recipient], raw)
        except smtplib.SMTPServerDisconnected as error:
            self.close()
            if not kept:
                raise TemporaryFailure(str(error)) from error
            self.send(sender, recipient, raw)  # the kept session had ended: once more, in a new one
        except smtplib.SMTPRecipientsRefused as error:
            code, message = next(iter(error.recipients.values()))
            _raise_for(code, message)
        except smtplib.SMTPResponseException as error:
            _raise_for(error.smtp_code, error.smtp_error)
        except (OSError, smtplib.SMTPException) as error:
            self.close()
            raise TemporaryFailure(str(error)) from error

    def close(self) -> None:
        client, self._client, self._unreachable = self._client, None, None
        if client is not None:
            try:
                client.quit()
            except (OSError, smtplib.SMTPException):
                client.close()

    def _session(self) -> smtplib.SMTP:
        if self._unreachable is not None:
            raise self._unreachable
        if self._client is None:
            try:
                self._client = smtplib.SMTP(self.host, self.port, timeout=self.timeout)
            except (OSError, smtplib.SMTPException) as error:
                self._unreachable = TemporaryFailure(f"relay {self.host}:{self.port}: {error}")
                raise self._unreachable from error
        return self._client


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
