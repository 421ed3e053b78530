"""The retention pass on SQLite (issue 35, item 4): how long its
transactions hold the database's one write lock, and what giving the
room back costs, incrementally (`store/vacuum.py`) against one VACUUM.

A database is filled with MAILS processed mails of SIZE bytes (random
text, as a flood sends) and their answers, half of them past the
retention when the timer pass runs, half not. Printed: the file's size before and
after, the longest transaction of the deletions and of the vacuuming
steps, the pass's total; then, on a copy deleted the same way, one
VACUUM's time (one transaction, holding the lock throughout).

    .venv/bin/python bench/bench_retention.py [--mails 1000] [--size 250000]
"""

from __future__ import annotations

import argparse
import base64
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from sqlalchemy import event

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pbmserv.config import MIB, Settings  # noqa: E402
from pbmserv.mail.backends import MemoryBackend  # noqa: E402
from pbmserv.runtime import Runtime  # noqa: E402
from pbmserv.service.processing.catalog import Catalog  # noqa: E402
from pbmserv.service.timers.retention import PAGES_PER_STEP, forget_old_mail  # noqa: E402
from pbmserv.store.database import upgrade  # noqa: E402
from tests.conftest import START, FakeClock  # noqa: E402


def mail(number: int, size: int) -> bytes:
    head = f"From: s{number}@example.org\r\nTo: pbmserv@localhost\r\nSubject: flood\r\nMessage-ID: <r{number}@x>\r\n\r\n"
    lines = (base64.b64encode(os.urandom(57)).decode() + "\r\n" for _ in range((size - len(head)) // 78 + 1))
    return (head + "".join(lines))[:size].encode()


def files(database: Path) -> float:
    return sum(path.stat().st_size for path in database.parent.glob(f"{database.name}*")) / MIB


def fill(settings: Settings, clock: FakeClock, mails: range, size: int) -> None:
    runtime = Runtime(settings, catalog=Catalog.installed(), clock=clock, backend=MemoryBackend())
    try:
        for start in range(mails.start, mails.stop, 100):
            for number in range(start, min(mails.stop, start + 100)):
                runtime.intake.store(mail(number, size))
            runtime.processor.process_pending()
            runtime.delivery.deliver_due()
    finally:
        runtime.close()


def timed_pass(settings: Settings, clock: FakeClock) -> tuple[list[float], list[float], float]:
    """The retention pass as the timer runs it; how long it held each connection it took from the pool (each
    deletion transaction with its commit, each step giving pages back, each look at the free list), how long
    each deletion transaction's statements took (to its COMMIT), and the pass in all."""
    runtime = Runtime(settings, catalog=Catalog.installed(), clock=clock, backend=MemoryBackend())
    held: list[float] = []
    taken: dict[int, float] = {}
    event.listen(runtime.engine, "checkout", lambda dbapi, record, proxy: taken.__setitem__(id(dbapi), time.perf_counter()))
    event.listen(runtime.engine, "checkin", lambda dbapi, record: held.append(time.perf_counter() - taken.pop(id(dbapi))))
    statements: list[float] = []
    began: dict[int, float] = {}
    event.listen(runtime.engine, "begin", lambda connection: began.__setitem__(id(connection), time.perf_counter()))
    event.listen(runtime.engine, "commit", lambda connection: statements.append(time.perf_counter() - began.pop(id(connection))))
    try:
        at = time.perf_counter()
        forget_old_mail(runtime.engine, settings, clock())
        return held, statements, time.perf_counter() - at
    finally:
        runtime.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mails", type=int, default=1000)
    parser.add_argument("--size", type=int, default=250_000)
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="pbmserv-retention-"))
    try:
        database = workdir / "r.db"
        settings = replace(Settings(), database_url=f"sqlite:///{database}", key_file=str(workdir / "key"),
                           mail_backend="memory", max_message_bytes=max(args.size, 262144),
                           password_time_cost=1, password_memory_kib=1024)
        upgrade(settings.database_url)
        clock = FakeClock(START)
        fill(settings, clock, range(args.mails // 2), args.size)  # past the retention at the pass
        clock.advance(days=settings.inbound_days - 4)
        fill(settings, clock, range(args.mails // 2, args.mails), args.size)  # kept
        before = files(database)
        copy = workdir / "copy.db"
        shutil.copy(database, copy)  # no process holds the database now: its log was checkpointed at close
        clock.advance(days=5)
        cutoff = (clock() - timedelta(days=settings.inbound_days)).isoformat(" ")
        held, statements, total = timed_pass(settings, clock)
        after = files(database)
        print(f"{args.mails} mails of {args.size} bytes: files {before:.1f} MiB before, {after:.1f} MiB after the pass"
              f" ({total:.2f} s in all)")
        print(f"  {len(held)} uses of a connection (deletions a transaction each, giving back {PAGES_PER_STEP} pages a step):"
              f" longest {', '.join(f'{one * 1000:.0f}' for one in sorted(held)[-3:])} ms, median {sorted(held)[len(held) // 2] * 1000:.1f} ms")
        print(f"  the deletions' statements, to their COMMIT: {len(statements)} transactions, longest {max(statements) * 1000:.0f} ms"
              " (a COMMIT that fills the write-ahead log checkpoints it then, without the write lock)")
        with sqlite3.connect(copy, isolation_level=None) as connection:
            connection.execute("PRAGMA secure_delete=ON")
            before_copy = copy.stat().st_size / MIB
            at = time.perf_counter()
            connection.execute("DELETE FROM outbox WHERE created_at < ?", (cutoff,))
            connection.execute("DELETE FROM inbound_mails WHERE processed_at < ?", (cutoff,))
            deleted = time.perf_counter() - at
            at = time.perf_counter()
            connection.execute("VACUUM")
            vacuumed = time.perf_counter() - at
        connection.close()
        print(f"  one VACUUM instead, on a copy: the deletions in one transaction {deleted * 1000:.0f} ms, then VACUUM"
              f" {vacuumed * 1000:.0f} ms holding the lock ({before_copy:.1f} -> {copy.stat().st_size / MIB:.1f} MiB;"
              f" it needs room for a whole copy of the database meanwhile)")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
