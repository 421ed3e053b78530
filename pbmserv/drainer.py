"""One processor for mail piped in: `pbmserv receive` only stores a mail
and makes sure that a drainer runs; the drainer (`pbmserv drain`)
processes every pending mail and delivers the replies until nothing is
pending, then exits. A lock file says whether one runs (`flock`, on the
machine that runs `receive`): a receive that takes it starts a drainer in
the background and hands the lock to it, so that a burst of mails starts
one drainer, not one each.

No mail is left behind: a drainer lets the lock go only after it found
nothing pending (and none came for `LINGER_SECONDS`), and then looks once more, taking the lock back if there
is mail. A receive that found the lock held committed its mail before it
looked, so the drainer's last look, which comes after it let the lock go,
sees that mail (or another drainer, which took the lock meanwhile, does).
"""

from __future__ import annotations

import fcntl
import logging
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from pbmserv.config import Settings
from pbmserv.store.key import key_path
from pbmserv.store.urls import sqlite_file

if TYPE_CHECKING:
    from pbmserv.runtime import Runtime

log = logging.getLogger(__name__)

#: how long a drainer started by `receive` waits for more mail before it
#: ends: mail that comes a few at a time then costs one start, not one each
LINGER_SECONDS = 2.0
#: how often it looks for mail meanwhile (a read of the spool and the database)
LOOK_SECONDS = 0.05
#: a batch that finds the database busy past its busy timeout (SQLite's
#: write lock held by `serve` under a flood) is tried again this often,
#: this long apart, before the drainer gives up and leaves the mail to the next
BUSY_TRIES = 5
BUSY_PAUSE_SECONDS = 1.0


def lock_path(settings: Settings) -> Path:
    """`<database>-drain` beside a SQLite file; on PostgreSQL `<key file>-drain`."""
    database = sqlite_file(settings.database_url)
    return Path(f"{database if database is not None else key_path(settings)}-drain")


def log_path(settings: Settings) -> Path:
    """Where a drainer started by `receive` writes its log: beside its lock."""
    return lock_path(settings).with_name(f"{lock_path(settings).name}.log")


class DrainLock:
    """The drainers' lock: a `flock` on a file of its own (not one of the
    database's: closing one of those would drop SQLite's own locks)."""

    def __init__(self, descriptor: int):
        self.descriptor = descriptor

    @classmethod
    def at(cls, path: Path) -> DrainLock:
        return cls(os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600))

    def take(self, *, wait: bool) -> bool:
        """Take the lock; without `wait`, only if nobody holds it."""
        try:
            fcntl.flock(self.descriptor, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            return False
        return True

    def release(self) -> None:
        fcntl.flock(self.descriptor, fcntl.LOCK_UN)

    def close(self) -> None:
        os.close(self.descriptor)


def start_drainer(settings: Settings, lock: DrainLock, options: list[str]) -> None:
    """Start `pbmserv drain` in the background, holding `lock` (taken):
    a session of its own, the MTA's pipes closed (an MTA reads the pipe's
    output until every process holding it has ended), its log appended to
    `log_path`. `options` are `pbmserv`'s own (--config, the log's)."""
    with open(log_path(settings), "ab") as log:
        subprocess.Popen(
            [sys.executable, "-m", "pbmserv", *options, "drain", "--lock-fd", str(lock.descriptor)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
            pass_fds=(lock.descriptor,), start_new_session=True,
        )


def drain(runtime: Runtime, lock: DrainLock, linger: float = 0.0, *, report: bool = True) -> int:
    """Process and deliver, holding `lock`, until nothing has been pending
    for `linger` seconds; how many mails were processed, also logged with
    the process's CPU time if `report`. Returns with the lock let go.

    Each batch's replies are sent before the next batch: under a backlog
    (serve's, on the same database, too) the drainer's replies would
    otherwise wait until all of it was processed."""
    processed = 0
    while True:
        more = True
        while more:
            done, more = _batch(runtime)
            processed += done
        if _mail_within(runtime, linger):
            continue
        lock.release()
        if not runtime.processor.has_pending() or not lock.take(wait=False):
            if report:
                log.info("drained %d mail(s); this process used %.3f s of CPU", processed, time.process_time())
            return processed


def _batch(runtime: Runtime) -> tuple[int, bool]:
    """One batch processed and its replies sent (as `Processor.process_batch`),
    tried up to `BUSY_TRIES` times while the database is busy or away."""
    from pbmserv.store.inbound import CONNECTION_ERRORS  # SQLAlchemy: not on `receive`'s path, which imports this module

    tries_left = BUSY_TRIES
    while True:
        try:
            done = runtime.processor.process_batch()
            runtime.delivery.deliver_due()
            return done.processed, done.more
        except CONNECTION_ERRORS as error:
            tries_left -= 1
            if not tries_left:
                raise
            log.warning("the database did not answer in time (%s); trying again", str(error).splitlines()[0])
            time.sleep(BUSY_PAUSE_SECONDS)


def _mail_within(runtime: Runtime, seconds: float) -> bool:
    """Whether mail comes within `seconds`, looked for every `LOOK_SECONDS`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(LOOK_SECONDS)
        if runtime.processor.has_pending():
            return True
    return False
