"""The pipes between `serve`'s processes, and the worker's `Progress` in shared memory. None holds a lock that a killed
process could leave taken, and writing never blocks: each line is written
whole or not at all (at most PIPE_BUF bytes), so a process killed between
two writes leaves no half line for its successor, which reads the same pipe."""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import secrets
import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol

from pbmserv.service.delivery.claims import Claim

log = logging.getLogger(__name__)

#: the most bytes one write puts into a pipe whole (POSIX's least PIPE_BUF)
LINE_BYTES = 512 * 8


class EventLike(Protocol):
    """What wakes a role: a threading.Event in one process, a `WakePipe` between processes."""

    def set(self) -> None: ...
    def clear(self) -> None: ...
    def is_set(self) -> bool: ...
    def wait(self, timeout: float | None = None) -> bool: ...


class _LinePipe:
    def __init__(self, context: multiprocessing.context.BaseContext):
        self._reader, self._writer = context.Pipe(duplex=False)
        os.set_blocking(self._writer.fileno(), False)
        self._unfinished = b""

    def _write(self, line: bytes) -> bool:
        """Whether the line went in (False: the pipe is full, or its reader gone for good)."""
        try:
            os.write(self._writer.fileno(), line)
        except (BlockingIOError, BrokenPipeError):
            return False
        return True

    def wait(self, timeout: float | None = None) -> bool:
        return self._reader.poll(timeout)

    def fileno(self) -> int:
        return self._reader.fileno()

    def _lines(self) -> list[bytes]:
        """Every whole line written so far and not yet taken."""
        descriptor = self._reader.fileno()
        os.set_blocking(descriptor, False)
        received = self._unfinished
        try:
            while chunk := os.read(descriptor, 65536):
                received += chunk
        except BlockingIOError:
            pass
        *lines, self._unfinished = received.split(b"\n")
        return lines


class WakePipe(_LinePipe):
    """Wakes the worker process with a byte down a pipe. Unlike a
    multiprocessing.Event it holds no lock that a killed worker could leave
    taken (which would hang the SMTP side for good), and setting it never
    blocks the event loop."""

    def set(self) -> None:
        self._write(b"!")  # else a wake-up is already waiting, or the worker is gone (the watchdog restarts it)

    def is_set(self) -> bool:
        return self._reader.poll(0)

    def clear(self) -> None:
        self._lines()
        self._unfinished = b""


class Handover(_LinePipe):
    """What the worker has claimed for the deliverer to send: the ids of the
    inbound mails whose replies it wrote, and of outbox mails that came due,
    as lines of text. When the pipe is full (a deliverer far behind, or
    gone) the ids are dropped; those mails are sent once their claim runs out."""

    IDS_PER_LINE = 400  # at most 10 digits and a space each: within LINE_BYTES

    def send(self, inbound_ids: Sequence[int], outbox_ids: Sequence[int] = ()) -> None:
        for kind, ids in ((b"i", inbound_ids), (b"o", outbox_ids)):
            for start in range(0, len(ids), self.IDS_PER_LINE):
                line = b" ".join([kind, *(str(one).encode() for one in ids[start:start + self.IDS_PER_LINE])]) + b"\n"
                if not self._write(line):
                    log.warning("the deliverer is far behind: %s mails wait for their claim to run out", len(ids))
                    return

    def take(self) -> tuple[list[int], list[int]]:
        """The inbound ids and the outbox ids sent so far and not yet taken."""
        taken: dict[bytes, list[int]] = {b"i": [], b"o": []}
        for line in self._lines():
            kind, *ids = line.split()
            taken[kind] += map(int, ids)
        return taken[b"i"], taken[b"o"]


class OutcomesPipe(_LinePipe):
    """How the mails the deliverer sent went, handed back to the worker to
    write (the database's one writer, on SQLite): as JSON lines."""

    #: an error message is cut to this for the pipe (the deliverer's log has it whole)
    ERROR_CHARS = 500

    def send(self, outcomes: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Put the outcomes into the pipe; returns those that did not fit (the pipe is full)."""
        for position in range(len(outcomes)):
            if not self._write(self._line(outcomes[position])):
                return outcomes[position:]
        return []

    def _line(self, outcome: dict[str, Any]) -> bytes:
        fields = {
            **outcome, "last_error": str(outcome["last_error"])[:self.ERROR_CHARS],
            "next_try_at": outcome["next_try_at"].isoformat(),
        }
        return json.dumps(fields).encode() + b"\n"

    def take(self) -> list[dict[str, Any]]:
        """The outcomes sent so far and not yet taken."""
        outcomes = [json.loads(line) for line in self._lines()]
        for outcome in outcomes:
            outcome["next_try_at"] = datetime.fromisoformat(outcome["next_try_at"])
        return outcomes


class Progress:
    """What the worker process is doing, shared with `serve`: the dedup key
    of the inbound mail it is processing ("": none; the row id would not
    do, as a killed worker's admission of spooled mail is undone with its
    transaction) and since when, by `time.monotonic()` (one clock for
    every process on the machine)."""

    def __init__(self, context: multiprocessing.context.BaseContext):
        self._mail = context.Array("c", 64, lock=False)
        self._since = context.Value("d", 0.0, lock=False)

    def begin(self, key: str) -> None:
        self._since.value = time.monotonic()
        self._mail.value = key.encode()

    def end(self) -> None:
        self._mail.value = b""

    def stuck_on(self, seconds: float) -> str | None:
        """The mail the worker has been processing for more than `seconds`."""
        mail = self._mail.value.decode()
        return mail if mail and time.monotonic() - self._since.value > seconds else None


class Claims:
    """Whom `serve` claims outbox mail for, shared with its worker: the
    server's name (`by`: the same across restarts) and the token of the
    deliverer process running now, new for each (`renew`, before the
    process is started)."""

    TOKEN_BYTES = 16

    def __init__(self, context: multiprocessing.context.BaseContext, by: str):
        self.by = by
        self._token = context.Array("c", 2 * self.TOKEN_BYTES, lock=False)

    def renew(self) -> None:
        self._token.value = secrets.token_hex(self.TOKEN_BYTES).encode()

    def current(self) -> Claim:
        return Claim(self.by, self._token.value.decode())
