"""Wiring: settings -> database, intake, processor and delivery, shared by every command line tool."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from pbmserv.config import ConfigError, Settings
from pbmserv.mail.backends import Backend, make_backend
from pbmserv.service.delivery.sending import Delivery
from pbmserv.service.intake.arrival import Clock, Intake, utc_now
from pbmserv.service.processing.catalog import Catalog
from pbmserv.service.processing.processor import Processor
from pbmserv.store.database import make_engine, session_factory, upgrade
from pbmserv.store.handles import Engine, Sessions
from pbmserv.store.key import server_key
from pbmserv.store.spool import spool_of


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
        self.sessions: Sessions = session_factory(self.engine)
        if self.catalog is None:
            try:
                self.catalog = Catalog.installed(self.settings.extra_games)
            except (ImportError, AttributeError) as error:
                raise ConfigError(f"[games] extra (PBMSERV_EXTRA_GAMES): cannot load a game: {error}") from error
        more_sessions: list[Backend] = []
        if self.backend is None:
            self.backend = make_backend(self.settings)
            if self.settings.mail_backend == "smtp":
                more_sessions = [make_backend(self.settings) for _ in range(self.settings.relay_sessions - 1)]
        self.spool = spool_of(self.settings)
        self.intake = Intake(self.engine, self.settings, self.catalog.names(), self.clock, self.spool)
        self.processor = Processor(self.engine, self.settings, self.catalog, self.clock, self.spool)
        self.delivery = Delivery(
            self.engine, self.backend, self.settings.address, partial(server_key, self.settings), self.clock,
            max_attempts=self.settings.delivery_max_attempts,
            first_retry_seconds=self.settings.delivery_first_retry_seconds, more_sessions=more_sessions,
        )

    def upgrade_schema(self) -> None:
        upgrade(self.settings.database_url, self.settings.database_busy_seconds, self.engine)

    def close(self) -> None:
        self.engine.dispose()
        if self.spool is not None:
            self.spool.close()

