"""Where outgoing mail goes: an SMTP relay, a maildir, the console, or memory (tests)."""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import itertools
import mailbox
import os
import smtplib
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from pbmserv.config import Settings


class TemporaryFailure(Exception):
    """Try this mail again later (4xx, network trouble)."""


class PermanentFailure(Exception):
    """The relay refused this mail for good (5xx)."""


class Backend(Protocol):
    def send(self, sender: str, recipient: str, raw: bytes, mail_key: str = "") -> None:
        """Take one mail. `mail_key` tells it from every other mail and is
        the same each time it is tried (the outbox row's id and Message-ID;
        "" for none): a backend that can tell it took a mail before uses it."""

    def close(self) -> None:
        """End the batch: what `send` took is safe with the backend once this
        returns, and what it keeps open between mails (a relay session) is
        closed. A TemporaryFailure raised here means that none of the
        batch's mails is safe: they are all tried again later."""


@dataclass
class MaildirBackend:
    """Mail into a maildir (the layout of the standard library's `mailbox`,
    which the folder is made with). Each mail is written into `tmp/`; at
    the end of the batch (`close`) the files reach the disk together and
    are then renamed into `new/`, so that a reader never sees half a mail,
    and a mail the backend took survives a power cut. Lines end in LF, as
    in any maildir (mail clients and shell tools read it as local text),
    not in the CRLF of mail on the wire.

    `mailbox.Maildir.add` would fsync every mail by itself; each fsync
    commits the filesystem's journal, which under load costs more CPU than
    writing the mail and stalls the other processes' writes too. One sync
    of the filesystem for the batch (syncfs where the C library has it,
    else an fsync of each file) does the same work once.

    A mail that comes with a `mail_key` is written once however often its
    row is tried: its file is named by the key, and a name already in
    `new/` or `cur/` is taken as delivered
    (docs/decisions/0157-maildir-writes-each-reply-once.md)."""

    path: Path
    _staged: list[tuple[str, str]] = field(default_factory=list, init=False, repr=False)
    _made: bool = field(default=False, init=False, repr=False)
    _read: set[str] | None = field(default=None, init=False, repr=False)  # the names in cur/, for this batch

    def send(self, sender: str, recipient: str, raw: bytes, mail_key: str = "") -> None:
        try:
            if not self._made:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                mailbox.Maildir(self.path, create=True)
                self._made = True
            name = _name_of(mail_key) if mail_key else _unique_name()
            if mail_key and self._delivered(name):
                return
            staged = os.path.join(self.path, "tmp", name)
            with open(staged, "wb") as handle:  # a file left in tmp/ by a crash is written over
                handle.write(raw.replace(b"\r\n", b"\n"))
        except OSError as error:
            self._made = False  # made again on the retry (say the folder was removed)
            raise TemporaryFailure(f"maildir {self.path}: {error}") from error
        self._staged.append((staged, os.path.join(self.path, "new", name)))

    def _delivered(self, name: str) -> bool:
        """Whether the mail of this file name is in the maildir already: in
        `new/`, or read and moved to `cur/` (as `NAME:2,FLAGS`). A crash
        after the mail reached the maildir and before its row was marked
        sent leaves it there, and the row's next try finds it. `cur/` is
        listed once a batch."""
        if os.path.exists(os.path.join(self.path, "new", name)):
            return True
        if self._read is None:
            self._read = {entry.partition(":")[0] for entry in os.listdir(os.path.join(self.path, "cur"))}
        return name in self._read

    def close(self) -> None:
        staged, self._staged, self._read = self._staged, [], None
        if not staged:
            return
        try:
            _sync_files([source for source, _ in staged])
            for source, target in staged:
                os.rename(source, target)
            _sync_files([os.path.join(self.path, "new")])
        except OSError as error:
            for source, _ in staged:  # a mail already renamed is sent twice: at least once, as promised
                with contextlib.suppress(OSError):
                    os.remove(source)
            self._made = False
            raise TemporaryFailure(f"maildir {self.path}: {error}") from error


_names = itertools.count()
_HOST = socket.gethostname().replace("/", r"\057").replace(":", r"\072")
_syncfs = getattr(ctypes.CDLL(None, use_errno=True), "syncfs", None)


def _name_of(mail_key: str) -> str:
    """The file name of the mail with this key, the same on every try:
    its outbox row, so that the names sort in the order the mails were
    queued, and a code of the whole key, so that another database's row
    of that number (a server started over into the same maildir) is
    another mail."""
    row, _, _ = mail_key.partition(".")
    code = hashlib.sha256(mail_key.encode()).hexdigest()[:16]
    return f"{row:0>12}.{code}.pbmserv.{_HOST}"


def _unique_name() -> str:
    """A maildir file name: time, process and a counter, and the host (as `mailbox` makes them)."""
    now = time.time()
    return f"{int(now)}.M{int(now % 1 * 1e6)}P{os.getpid()}Q{next(_names)}.{_HOST}"


def _sync_files(paths: list[str]) -> None:
    """What was written to these files (or directories) so far is on the
    disk: for several, one syncfs of their filesystem where the C library
    has it, else an fsync of each."""
    sync: Callable[[int], None] = os.fsync
    if _syncfs is not None and len(paths) > 1:
        paths, sync = paths[:1], _sync_filesystem
    for path in paths:
        descriptor = os.open(path, os.O_RDONLY)
        try:
            sync(descriptor)
        finally:
            os.close(descriptor)


def _sync_filesystem(descriptor: int) -> None:
    assert _syncfs is not None
    if _syncfs(descriptor) != 0:
        number = ctypes.get_errno()
        raise OSError(number, os.strerror(number))


@dataclass
class ConsoleBackend:
    def send(self, sender: str, recipient: str, raw: bytes, mail_key: str = "") -> None:
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

    def send(self, sender: str, recipient: str, raw: bytes, mail_key: str = "") -> None:
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

    def send(self, sender: str, recipient: str, raw: bytes, mail_key: str = "") -> None:
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
