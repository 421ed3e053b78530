"""Wiring: settings -> database, processor and delivery, shared by every command line tool."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine
from sqlalchemy.orm import sessionmaker

from pbmserv.config import ConfigError, Settings
from pbmserv.mail.backends import Backend, make_backend
from pbmserv.service.catalog import Catalog
from pbmserv.service.delivery import Delivery
from pbmserv.service.processor import Clock, Processor, utc_now
from pbmserv.store.database import make_engine, session_factory, sqlite_file, upgrade
from pbmserv.store.spool import Spool, spool_file


@dataclass
class Runtime:
    settings: Settings
    catalog: Catalog | None = None
    clock: Clock = utc_now
    backend: Backend | None = None

    def __post_init__(self) -> None:
        self.engine: Engine = make_engine(
            self.settings.database_url, self.settings.database_busy_seconds, prepared=self.settings.database_prepared,
        )
        self.sessions: sessionmaker = session_factory(self.engine)
        if self.catalog is None:
            try:
                self.catalog = Catalog.installed(self.settings.extra_games)
            except (ImportError, AttributeError) as error:
                raise ConfigError(f"[games] extra (PBMSERV_EXTRA_GAMES): cannot load a game: {error}") from error
        if self.backend is None:
            self.backend = make_backend(self.settings)
        self.spool = spool_of(self.settings)
        self.processor = Processor(self.engine, self.settings, self.catalog, self.clock, self.spool)
        self.delivery = Delivery(
            self.engine, self.backend, self.settings.address, self.clock,
            max_attempts=self.settings.delivery_max_attempts,
            first_retry_seconds=self.settings.delivery_first_retry_seconds,
        )

    def upgrade_schema(self) -> None:
        upgrade(self.settings.database_url, self.settings.database_busy_seconds)

    def close(self) -> None:
        self.engine.dispose()
        if self.spool is not None:
            self.spool.close()


def spool_of(settings: Settings) -> Spool | None:
    """The arrival spool beside a SQLite database file (`<file>-spool`); None on PostgreSQL."""
    path = sqlite_file(settings.database_url)
    return None if path is None else Spool(spool_file(str(path)), settings.database_busy_seconds)
