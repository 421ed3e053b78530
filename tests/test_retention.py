"""Storage bounded (issue 35, item 4, F6): processed mail goes after its
retention, the games' record stays, and on SQLite the files give the room
back to the disk. The clock is moved, and the timer pass run, as
`serve`'s worker runs it every `timer_seconds`."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

from sqlalchemy import Table, func, select

from pbmserv.config import MIN_OUTBOX_DAYS, Settings
from pbmserv.mail.backends import MemoryBackend
from pbmserv.runtime import Runtime
from pbmserv.service.processing.catalog import Catalog
from pbmserv.service.processing.rates import CAPS
from pbmserv.store.database import upgrade
from pbmserv.store.models import (
    Address,
    Board,
    InboundMail,
    Move,
    OutboxMail,
    Rating,
    User,
)
from pbmserv.store.spool import Arrival, Spool
from tests.conftest import START, TEST_PASSWORD_COST, FakeClock
from tests.mailtools import make_mail, send

#: the games' record, kept for ever
RECORD: list[Table] = [User.__table__, Address.__table__, Board.__table__, Move.__table__, Rating.__table__]


def rows(runtime: Runtime, table: Table) -> set[int]:
    with runtime.engine.connect() as connection:
        return set(connection.scalars(select(table.c.id)))


def record(runtime: Runtime) -> dict[str, int]:
    with runtime.engine.connect() as connection:
        return {table.name: connection.scalar(select(func.count()).select_from(table)) or 0 for table in RECORD}


def test_processed_mail_goes_after_its_retention_and_the_games_record_stays(toy_boards: Runtime, clock: FakeClock) -> None:
    runtime = toy_boards
    send(runtime, "bob@example.org", "toy move 101 bob secret2 a1")
    done_in, sent_out = rows(runtime, InboundMail.__table__), rows(runtime, OutboxMail.__table__)
    runtime.intake.store(make_mail("carol@example.org", "help"))
    runtime.processor.process_pending()  # answered, but not delivered: its answer is pending in the outbox
    waiting_out = rows(runtime, OutboxMail.__table__) - sent_out
    waiting_in = {runtime.intake.store(make_mail("dave@example.org", "help"))[0]}  # never processed
    kept = record(runtime)

    clock.advance(days=13, hours=23)
    runtime.processor.run_timers()
    assert done_in | waiting_in <= rows(runtime, InboundMail.__table__)
    assert sent_out | waiting_out <= rows(runtime, OutboxMail.__table__)

    clock.advance(hours=2)  # 14 days and an hour
    runtime.processor.run_timers()
    inbound_left, outbox_left = rows(runtime, InboundMail.__table__), rows(runtime, OutboxMail.__table__)
    assert not done_in & inbound_left and waiting_in <= inbound_left
    assert not sent_out & outbox_left and waiting_out <= outbox_left
    assert record(runtime) == kept
    with runtime.engine.connect() as connection:
        dangling = connection.scalar(select(func.count()).where(
            OutboxMail.__table__.c.inbound_id.is_not(None),
            OutboxMail.__table__.c.inbound_id.not_in(select(InboundMail.__table__.c.id)),
        ))
    assert dangling == 0


def test_the_outbox_is_kept_longer_than_any_cap_counts_it() -> None:
    longest = max(cap.window for caps in CAPS.values() for cap in caps)
    assert longest.days < MIN_OUTBOX_DAYS <= Settings().outbox_days
    assert Settings().inbound_days >= 7  # processor.FAILED_ORIGINALS_KEPT


def files_size(database: Path) -> int:
    return sum(path.stat().st_size for path in database.parent.glob(f"{database.name}*") if not path.name.endswith("-key"))


def test_the_sqlite_files_shrink_back_once_the_retention_has_passed(tmp_path: Path, key_file: str) -> None:
    database = tmp_path / "shrinks.db"
    clock = FakeClock()
    settings = replace(
        Settings(), database_url=f"sqlite:///{database}", key_file=key_file, mail_backend="memory",
        max_message_bytes=300_000, **TEST_PASSWORD_COST,
    )
    upgrade(settings.database_url)
    runtime = Runtime(settings, catalog=Catalog.installed(), clock=clock, backend=MemoryBackend())
    try:
        filler = "a line of a long mail that nobody needs to keep for ever\n" * 3500  # 200 KB
        for number in range(100):
            runtime.intake.store(make_mail(f"stranger{number}@example.org", "help", filler))
        runtime.processor.process_pending()
        runtime.delivery.deliver_due()
    finally:
        runtime.close()
    flooded = files_size(database)
    assert flooded > 20_000_000

    clock.advance(days=15)
    runtime = Runtime(settings, catalog=Catalog.installed(), clock=clock, backend=MemoryBackend())
    try:
        runtime.processor.run_timers()
        assert not rows(runtime, InboundMail.__table__)
    finally:
        runtime.close()  # the last connection checkpoints the write-ahead log into the file
    assert files_size(database) < 5_000_000, (flooded, files_size(database))


def test_upgrade_switches_an_older_sqlite_file_to_incremental_vacuuming(tmp_path: Path) -> None:
    database = tmp_path / "older.db"
    upgrade(f"sqlite:///{database}")
    with sqlite3.connect(database, isolation_level=None) as older:  # as a file made before this change is
        older.execute("PRAGMA auto_vacuum=NONE")
        older.execute("VACUUM")
        assert older.execute("PRAGMA auto_vacuum").fetchone() == (0,)
    older.close()
    upgrade(f"sqlite:///{database}")
    with sqlite3.connect(database) as switched:
        assert switched.execute("PRAGMA auto_vacuum").fetchone() == (2,)  # INCREMENTAL
    switched.close()


def test_the_spool_gives_its_room_back_once_it_is_empty(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "x.db-spool")
    spool.append([Arrival(START, "flood@example.org", f"<{number}@x>", f"key{number}", b"x" * 250_000) for number in range(80)])
    assert spool.path.stat().st_size > 20_000_000
    waiting = spool.waiting(100)
    spool.admitted(waiting[-1].id, synced=True)
    spool.close()
    assert spool.path.stat().st_size < 100_000
