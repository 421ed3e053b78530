"""Databases for tests: a SQLite file by default, PostgreSQL when
PBMSERV_TEST_DATABASE_URL names one (each xdist worker gets its own database,
created here and dropped at the end)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TypedDict

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from pbmserv.config import Settings
from pbmserv.mail.backends import MaildirBackend, MemoryBackend
from pbmserv.runtime import Runtime
from pbmserv.service.processing.catalog import Catalog
from pbmserv.smtpd import start_listener
from pbmserv.store.database import normalise_url, upgrade
from pbmserv.store.models import Base
from pbmserv.store.spool import spool_file
from pbmserv.worker import Worker
from tests.mailtools import send, signup
from tests.smtp_helpers import close_server, loop_thread
from tests.toygame import Toy

POSTGRES_URL = os.environ.get("PBMSERV_TEST_DATABASE_URL", "")
REQUIRE_POSTGRES = os.environ.get("PBMSERV_REQUIRE_POSTGRES") == "1"
START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "db: uses the test database (SQLite, or PostgreSQL in CI's second run)")
    config.addinivalue_line("markers", "slow: a proof at scale or a real MTA (`tests/run --fast` leaves them out)")
    if REQUIRE_POSTGRES and not POSTGRES_URL:
        raise pytest.UsageError("PBMSERV_REQUIRE_POSTGRES=1 but PBMSERV_TEST_DATABASE_URL is not set")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "database_url" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.db)


def pytest_report_header() -> str:
    return f"pbmserv test database: {f'PostgreSQL {make_url(POSTGRES_URL).database}' if POSTGRES_URL else 'SQLite'}"


@pytest.fixture(scope="session")
def _session_database(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Iterator[str]:
    if not POSTGRES_URL:
        url = f"sqlite:///{tmp_path_factory.mktemp('db') / 'pbmserv.db'}"
        upgrade(url)
        yield url
        return
    base = make_url(normalise_url(POSTGRES_URL))
    name = f"{base.database}_{worker_id}"
    admin = create_engine(base.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    url = base.set(database=name).render_as_string(hide_password=False)
    upgrade(url)
    yield url
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture
def database_url(_session_database: str) -> str:
    """The test database, emptied before each test (on SQLite with the
    arrival spool beside it, where an earlier test's `serve` may have left
    mail it had not yet admitted when it stopped)."""
    engine = create_engine(_session_database)
    with engine.begin() as connection:
        tables = list(reversed(Base.metadata.sorted_tables))
        if engine.dialect.name == "postgresql":
            names = ", ".join(table.name for table in tables)
            connection.execute(text(f"TRUNCATE {names} RESTART IDENTITY CASCADE"))
        else:
            for table in tables:
                connection.execute(table.delete())
            # numbers never used again (`open_challenges`) start anew, as RESTART IDENTITY does
            connection.execute(text("DELETE FROM sqlite_sequence"))
            assert engine.url.database is not None  # a SQLite URL names its file
            spool = spool_file(engine.url.database)
            for suffix in ("", "-wal", "-shm"):
                spool.with_name(spool.name + suffix).unlink(missing_ok=True)
    engine.dispose()
    return _session_database


class FakeClock:
    def __init__(self, start: datetime = START):
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kwargs: float) -> None:
        self.now += timedelta(**kwargs)


class PasswordCost(TypedDict):
    password_time_cost: int
    password_memory_kib: int


#: cheap argon2 parameters so that tests are fast; production uses Settings' defaults
TEST_PASSWORD_COST: PasswordCost = {"password_time_cost": 1, "password_memory_kib": 1024}


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(scope="session")
def key_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A server key that is the same in every run, so that the codes it makes are too (transcripts show them)."""
    path = tmp_path_factory.mktemp("key") / "pbmserv.key"
    path.write_bytes(bytes(range(32)))
    path.chmod(0o600)  # a key others may read is refused
    return str(path)


@pytest.fixture
def runtime(database_url: str, clock: FakeClock, key_file: str) -> Iterator[Runtime]:
    settings = replace(
        Settings(), database_url=database_url, key_file=key_file, mail_backend="memory", **TEST_PASSWORD_COST,
    )
    catalog = Catalog([*Catalog.installed(), Toy()])
    runtime = Runtime(settings, catalog=catalog, clock=clock, backend=MemoryBackend())
    yield runtime
    runtime.close()


@pytest.fixture
def toy_boards(runtime: Runtime) -> Runtime:
    """alice and bob on toy board 101 (bob to move) and a finished board 102."""
    signup(runtime, "alice", "secret1")
    signup(runtime, "bob", "secret2")
    send(runtime, "alice@example.org", "toy challenge alice bob")
    send(runtime, "alice@example.org", "toy move 101 alice secret1 b2")
    send(runtime, "alice@example.org", "toy challenge alice bob")
    send(runtime, "alice@example.org", "toy resign 102 alice secret1")
    return runtime


@pytest.fixture
def empty_database(database_url: str, tmp_path: Path) -> Iterator[str]:
    """A database with no schema yet, on the test database's server (SQLite: an empty file)."""
    url = make_url(database_url)
    if url.get_backend_name() == "sqlite":
        (tmp_path / "empty.db").touch()
        yield f"sqlite:///{tmp_path / 'empty.db'}"
        return
    name = f"{url.database}_empty"
    server = create_engine(url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with server.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield url.set(database=name).render_as_string(hide_password=False)
    finally:
        with server.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        server.dispose()


@pytest.fixture
def listener(runtime: Runtime, tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """pbmserv listening on a free loopback port, delivering into a real maildir."""
    runtime.settings = replace(runtime.settings, max_message_bytes=20_000, poll_seconds=0.2)
    runtime.processor.settings = runtime.intake.settings = runtime.settings
    runtime.delivery.backend = MaildirBackend(tmp_path / "outbox")
    worker = Worker(runtime)
    worker.start()
    with loop_thread() as loop:
        server = asyncio.run_coroutine_threadsafe(start_listener(runtime.intake, worker.wake, "127.0.0.1", 0), loop).result(10)
        port = server.sockets[0].getsockname()[1]
        yield port, tmp_path / "outbox"
        close_server(server, loop)
    worker.stop()
