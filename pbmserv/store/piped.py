"""What `pbmserv receive`'s hot path asks of the database, through its
driver alone (`sqlite3`, psycopg): importing SQLAlchemy costs more than
storing a mail (see docs/decisions/0104-receive-without-sqlalchemy.md).

On SQLite a mail goes into the arrival spool, as SMTP intake's does, and
the database is only read (its schema revision, a seat's holder, a dedup
key); on PostgreSQL it goes straight into `inbound_mails`. The reads are
the store's own (`store.statements`); the insert says what `store.inbound`
says in Core, and `tests/test_receive_drain.py` holds the two to the same
answers."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from pbmserv.config import Settings
from pbmserv.store import statements
from pbmserv.store.room import DATABASE_SIZE, Room, sqlite_room
from pbmserv.store.spool import Arrival, Spool, spool_file
from pbmserv.store.sqlite import require_directory
from pbmserv.store.states import Inbound
from pbmserv.store.urls import sqlite_file


class Unstorable(Exception):
    """The database refuses this mail's data itself, and would every time."""


class PipedStore:
    """One connection for one mail: read what intake must check, then store
    the mail durably. Statements are written with `?` and turned into
    psycopg's form for PostgreSQL (`store.statements`)."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self._database = sqlite_file(settings.database_url)
        if self._database is not None:
            require_directory(self._database)
        self._connection: Any = None
        self._spool: Spool | None = None

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
        if self._spool is not None:
            self._spool.close()

    def schema_revision(self) -> str | None:
        """The database's schema revision (None: no pbmserv schema, or on SQLite no file yet)."""
        if self._database is not None and not self._database.exists():
            return None  # connecting would make the file: that is for the upgrade to do
        dialect = "sqlite" if self._database is not None else "postgresql"
        if not self._one(statements.REVISION_TABLE_THERE[dialect])[0]:
            return None
        revisions = [row[0] for row in self._all(statements.REVISIONS)]
        return revisions[0] if len(revisions) == 1 else None  # the upgrade says what is wrong

    def holds_mail(self) -> bool:
        """As `store.database.holds_mail`, of a database with the schema."""
        return bool(self._one(statements.HOLDS_MAIL)[0])

    def seat_holder(self, game: str, board: int, seat: int) -> tuple[str, str] | None:
        return statements.seat_holder(self._one, game, board, seat)

    @property
    def on_sqlite(self) -> bool:
        return self._database is not None

    def room(self) -> Room:
        """As `store.room.room_of`."""
        if self._database is not None:
            return sqlite_room(self._database)
        return Room(int(self._one(DATABASE_SIZE)[0]), None)

    def stored_id(self, dedup_key: str) -> int | None:
        """The row of a mail with this dedup key in `inbound_mails`, if any."""
        row = self._one(statements.STORED_ID, {"dedup_key": dedup_key})
        return None if row is None else int(row[0])

    def store(self, arrival: Arrival) -> tuple[int | None, bool]:
        """Commit the mail durably; (its row id, True if it was a duplicate).
        On SQLite it goes into the spool (id None: the drainer admits it, and
        a copy admitted already is left out then); a duplicate seen in the
        database is not spooled again."""
        known = self.stored_id(arrival.dedup_key)
        if known is not None:
            return known, True
        if self._database is not None:
            self._spool = self._spool or Spool(spool_file(str(self._database)), self.settings.database_busy_seconds)
            try:
                self._spool.append([arrival])
            except UnicodeError as error:
                raise Unstorable(type(error).__name__) from error
            return None, False
        return self._insert(arrival)

    def _insert(self, arrival: Arrival) -> tuple[int | None, bool]:
        import psycopg

        row = {key: value for key, value in asdict(arrival).items() if key != "id"} | {"status": Inbound.PENDING.value}
        try:
            with self._open().transaction():  # PostgreSQL syncs each commit
                inserted = self._open().execute(
                    "INSERT INTO inbound_mails (received_at, envelope_sender, message_id, dedup_key, raw, sealed,"
                    " reply_token, status, error, from_player)"
                    " VALUES (%(received_at)s, %(envelope_sender)s, %(message_id)s, %(dedup_key)s, %(raw)s,"
                    " %(sealed)s, %(reply_token)s, %(status)s, '', %(reply_token)s::varchar <> '' OR EXISTS (SELECT 1 FROM"
                    " addresses WHERE address = %(verified_sender)s::varchar AND confirmed_at IS NOT NULL))"
                    " ON CONFLICT (dedup_key) DO NOTHING RETURNING id",
                    row,
                ).fetchone()
        except (psycopg.DataError, UnicodeError) as error:
            raise Unstorable(type(error).__name__) from error
        if inserted is not None:
            return int(inserted[0]), False
        return self.stored_id(arrival.dedup_key), True  # stored by another process meanwhile

    def _one(self, statement: str, parameters: Mapping[str, object] = {}) -> Any:
        return self._execute(statement, parameters).fetchone()

    def _all(self, statement: str) -> list[Any]:
        return list(self._execute(statement, {}).fetchall())

    def _execute(self, statement: str, parameters: Mapping[str, object]) -> Any:
        connection = self._open()
        if self._database is None:
            statement = statements.for_psycopg(statement)
        return connection.execute(statement, parameters)

    def _open(self) -> Any:
        if self._connection is None:
            self._connection = _connect(self.settings)
        return self._connection


def _connect(settings: Settings) -> Any:
    database = sqlite_file(settings.database_url)
    if database is not None:
        return sqlite3.connect(database, timeout=settings.database_busy_seconds, isolation_level=None)
    import psycopg

    rest = settings.database_url.partition("://")[2]
    busy = settings.database_busy_seconds  # the same bounds as `store.database.make_engine`'s
    return psycopg.connect(
        f"postgresql://{rest}", autocommit=True, connect_timeout=max(2, round(busy)),
        options=f"-c lock_timeout={max(1, round(busy * 1000))}",
    )
