"""Processed mail is deleted once its retention has passed, and the room
it took goes back to the disk (issue 35, item 4); run by the timer pass.
What is kept for ever is the games' record: accounts, boards, moves,
ratings (see docs/decisions/0128-retention.md)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from functools import partial

from pbmserv.config import Settings
from pbmserv.store import inbound, outbox, vacuum
from pbmserv.store.database import writing
from pbmserv.store.handles import Engine

log = logging.getLogger(__name__)

#: rows one statement deletes
DELETE_CHUNK = 10
#: the longest one transaction of deletions goes on taking chunks (on SQLite it holds the one write lock):
#: 50 rows of 250 KB took 110-240 ms here, 50 small ones a few
HOLD_SECONDS = 0.1
#: free pages given back to the disk in one transaction (2 MiB of 4 KiB pages)
PAGES_PER_STEP = 512
#: free pages left in the file for the rows to come (4 MiB): processing frees pages all the time
#: (a processed mail's sealed original goes) and the next batch uses them again
KEPT_FREE_PAGES = 1024


def forget_old_mail(engine: Engine, settings: Settings, now: datetime) -> None:
    """Delete the outbox mails sent or given up more than `outbox_days`
    ago and the inbound mails processed more than `inbound_days` ago, a
    chunk a statement and a few statements a transaction, then give the
    room back to the disk; a log line for what was done (the timer pass's
    report is about boards)."""
    report = []
    outbox_before = now - timedelta(days=settings.outbox_days)
    inbound_before = now - timedelta(days=settings.inbound_days)
    deleted = _in_chunks(engine, partial(outbox.delete_finished, before=outbox_before))
    if deleted:
        report.append(f"deleted {deleted} outbox mails made before {outbox_before:%Y-%m-%d %H:%M} (kept {settings.outbox_days} days)")
    deleted = _in_chunks(engine, partial(inbound.delete_processed, before=inbound_before))
    if deleted:
        report.append(
            f"deleted {deleted} inbound mails processed before {inbound_before:%Y-%m-%d %H:%M} (kept {settings.inbound_days} days)"
        )
    pages = _give_back(engine)
    if pages:
        report.append(f"gave {pages} free pages of the database back to the disk")
    for line in report:
        log.info("retention: %s", line)


def _in_chunks(engine: Engine, delete_some: Callable[..., int]) -> int:
    """Call `delete_some(connection, most=DELETE_CHUNK)` until it deletes
    fewer, in transactions of at most about `HOLD_SECONDS`; how many it deleted."""
    deleted = 0
    while True:
        began = time.monotonic()
        with writing(engine) as connection:
            while True:
                some = delete_some(connection, most=DELETE_CHUNK)
                deleted += some
                if some < DELETE_CHUNK:
                    return deleted
                if time.monotonic() - began >= HOLD_SECONDS:
                    break


def _give_back(engine: Engine) -> int:
    """Give the free pages of a SQLite database beyond `KEPT_FREE_PAGES`
    back to the disk, `PAGES_PER_STEP` a transaction; how many."""
    given = 0
    free = vacuum.free_pages(engine)
    while free > KEPT_FREE_PAGES:
        vacuum.give_back(engine, min(PAGES_PER_STEP, free - KEPT_FREE_PAGES))
        left = vacuum.free_pages(engine)
        if left >= free:  # not incremental after all (its one VACUUM has not run): nothing to do here
            break
        given, free = given + free - left, left
    return given
