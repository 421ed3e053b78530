"""Engines and sessions: SQLite in WAL mode with a busy timeout, or PostgreSQL via psycopg 3."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.orm import sessionmaker

from pbmserv.config import ConfigError
from pbmserv.store import statements
from pbmserv.store.prepared import PLAIN, run_sql
from pbmserv.store.revision import MIGRATIONS, newest_revision
from pbmserv.store.sqlite import WAL_KEPT_BYTES, SQLiteConnection, require_directory
from pbmserv.store.urls import no_database, normalise_url, shown, sqlite_file
from pbmserv.store.vacuum import make_incremental

if TYPE_CHECKING:  # Alembic is imported only where the schema is made or changed: `receive` costs less without it
    from alembic.config import Config
    from alembic.script import ScriptDirectory

log = logging.getLogger(__name__)

def make_engine(
    url: str, busy_seconds: float = 10.0, *, prepared: bool = True, read_only: bool = False, connections: int | None = None,
) -> Engine:
    """The engine for `url`; without `prepared`, every statement goes through
    `Connection.execute` (`store.prepared`: for echo and bisecting). Its
    errors never show a statement's parameters (a mail, a comment): they
    reach the log with a traceback. With `read_only` the database itself
    refuses every change made through it (the web site's). With
    `connections` its pool keeps that many connections open and makes no
    more (for as many threads: SQLAlchemy's default keeps 5 and makes and
    closes up to 10 more, which costs more than a page's reads)."""
    url = normalise_url(url)
    options = {} if prepared else {PLAIN: True}
    pooling: dict[str, Any] = {} if connections is None else {"pool_size": connections, "max_overflow": 0}
    if make_url(url).get_backend_name() == "sqlite":
        path = sqlite_file(url)
        if path is not None:
            require_directory(path)
        engine = create_engine(
            url, connect_args={"timeout": busy_seconds, "factory": SQLiteConnection}, execution_options=options,
            hide_parameters=True, **pooling,
        )
        _configure_sqlite(engine, read_only)
        return engine
    # the same bound on PostgreSQL: a connection that cannot be made, or a
    # lock that another process holds too long, is an error (intake answers
    # 451, the worker retries its batch), not a wait without end
    return create_engine(url, pool_pre_ping=True, execution_options=options, hide_parameters=True, **pooling, connect_args={
        "connect_timeout": max(2, round(busy_seconds)),
        "options": f"-c lock_timeout={max(1, round(busy_seconds * 1000))}"
        + (" -c default_transaction_read_only=on" if read_only else ""),
    })


def _configure_sqlite(engine: Engine, read_only: bool) -> None:
    @event.listens_for(engine, "connect")
    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        # let SQLAlchemy, not the driver, decide when transactions begin
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        # before anything else, which may make the file: a new file takes it only while it holds no table
        cursor.execute("PRAGMA auto_vacuum=INCREMENTAL")  # deleted rows' room can be given back (store/vacuum.py)
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA journal_size_limit={WAL_KEPT_BYTES}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA secure_delete=ON")  # deleted and overwritten mail (passwords) is zeroed in the file
        if read_only:
            cursor.execute("PRAGMA query_only=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def on_begin(connection: Connection) -> None:
        dbapi_connection = connection.connection.dbapi_connection
        assert isinstance(dbapi_connection, SQLiteConnection)
        options = connection.get_execution_options()
        try:
            if options.get(READ_ONLY):
                dbapi_connection.execute("BEGIN")  # in WAL mode readers never wait for the writer
            else:  # take the write lock up front: one writer at a time, no upgrade deadlocks
                dbapi_connection.set_synchronous("FULL" if options.get(DURABLE) else "NORMAL")
                dbapi_connection.begin_writing()
        except sqlite3.Error as error:
            # SQLAlchemy wraps the driver's errors, but not those of an
            # event: "database is locked" must be the OperationalError it
            # is everywhere else (`receive` exits 75 for it, not 1)
            raise DBAPIError.instance("BEGIN", (), error, sqlite3.Error, dialect=connection.dialect) from error


#: execution option of a write transaction whose commit must survive a power cut (see `writing`)
DURABLE = "pbmserv_durable"


@contextmanager
def writing(engine: Engine, *, durable: bool = False) -> Iterator[Connection]:
    """A write transaction, as `engine.begin()`; with `durable`, its commit
    is on the disk when the block ends, and so is every commit made before
    it by any process.

    SQLite runs with synchronous=NORMAL: in WAL mode a commit survives a
    crash of the program at once, but one of the machine only once the WAL
    has reached the disk, which SQLite sees to before each checkpoint (and
    syncs the database file after it). A durable transaction runs with
    synchronous=FULL, which syncs the WAL at its commit, and with it every
    earlier commit still in the WAL (the older ones were checkpointed, and
    so synced). A commit that wrote nothing writes no WAL frame and syncs
    nothing. An fsync for every commit would cost the worker more than
    many a move, so only commits that something is promised on are made
    durable. PostgreSQL syncs each commit itself."""
    with engine.connect() as connection:
        if durable:
            connection.execution_options(**{DURABLE: True})
        with connection.begin():
            yield connection


def synced(engine: Engine) -> bool:
    """Whether every commit made so far is on the disk, making it so where
    it can at once. SQLite checkpoints its write-ahead log, which syncs the
    log before and the database file after a checkpoint that completes (a
    reader in the way leaves it incomplete: False, try later). PostgreSQL
    syncs each commit itself."""
    if engine.dialect.name != "sqlite":
        return True
    with engine.connect() as connection:  # on the driver's connection: a checkpoint runs outside any transaction
        driver = connection.connection.driver_connection
        assert isinstance(driver, sqlite3.Connection)
        busy, frames, checkpointed = driver.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    return bool(busy == 0 and frames == checkpointed)


#: execution option of a transaction that only reads (see `reading`)
READ_ONLY = "pbmserv_read_only"


@contextmanager
def reading(engine: Engine) -> Iterator[Connection]:
    """A transaction that only reads; on SQLite it takes no write lock."""
    with engine.connect() as connection:
        connection.execution_options(**{READ_ONLY: True})
        with connection.begin():
            yield connection


#: SQLSTATE of a transaction the database rolled back to break a deadlock
DEADLOCK_DETECTED = "40P01"


def lost_a_race(error: DBAPIError) -> bool:
    """Whether a transaction failed because another one got there first: a
    unique key taken meanwhile, or a deadlock (as between transactions that
    insert the same keys in different orders) that the database broke by
    rolling this one back. Doing it again is the remedy."""
    return isinstance(error, IntegrityError) or getattr(error.orig, "sqlstate", None) == DEADLOCK_DETECTED


@contextmanager
def savepoint(connection: Connection, name: str) -> Iterator[None]:
    """Everything done in the block, or (when it raises) none of it, within
    the connection's transaction. The SAVEPOINT is written out here because
    SQLAlchemy's own (`begin_nested`) gives each one a new name, and so
    compiles its statement anew every time, which costs more than a query;
    it is invisible to SQLAlchemy, so no ORM session may be used inside (the
    service uses none). It runs on the driver's cursor, as the statements
    of a move do (`prepared`)."""
    run_sql(connection, f"SAVEPOINT {name}")
    try:
        yield
    except BaseException:
        run_sql(connection, f"ROLLBACK TO SAVEPOINT {name}")
        run_sql(connection, f"RELEASE SAVEPOINT {name}")
        raise
    run_sql(connection, f"RELEASE SAVEPOINT {name}")


def session_factory(engine: Engine) -> sessionmaker:
    return sessionmaker(engine, expire_on_commit=False)


def alembic_config(url: str, busy_seconds: float = 10.0) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", normalise_url(url).replace("%", "%%"))
    config.attributes["busy_seconds"] = busy_seconds  # for env.py's engine
    return config


def upgrade(url: str, busy_seconds: float = 10.0, engine: Engine | None = None) -> None:
    """Bring the database at `url` to the newest schema, making it if there
    is none. `receive` upgrades for each mail: a database that is current
    costs one read of its revision (on `engine`, if given), without Alembic;
    Alembic's log lines (two even when it has nothing to do) are kept for
    -v; one line says when the schema changed. A SQLite file made before
    incremental vacuuming is switched to it (`vacuum.make_incremental`)."""
    own_engine = engine or make_engine(url, busy_seconds)
    try:
        current, head = schema_revision(own_engine), newest_revision()
        if current != head:
            require_known_revision(url, current)
            with _alembic_quiet():
                from alembic import command

                command.upgrade(alembic_config(url, busy_seconds), "head")
            log.info("database schema upgraded from %s to %s", current or "nothing", head)
        make_incremental(own_engine)
    finally:
        if engine is None:
            own_engine.dispose()


def require_database(url: str, busy_seconds: float = 10.0) -> str:
    """The schema revision of the pbmserv database at `url` (one this
    pbmserv knows, perhaps older), or a ConfigError if there is none, making
    nothing: not the SQLite file, nor the files that its connections keep
    beside it. Only `serve` and `pbmserv-admin db upgrade` make a database:
    any other command run with the wrong settings or in the wrong directory
    would otherwise start a new, empty server there."""
    path = sqlite_file(url)
    if path is not None:
        require_directory(path)
        if not path.exists():
            raise ConfigError(no_database(url))
    current = _revision_at(url, busy_seconds)
    if current is None:
        raise ConfigError(no_database(url))
    require_known_revision(url, current)
    return current


def holds_mail(url: str, busy_seconds: float = 10.0) -> bool:
    """Whether the database at `url` has taken mail or made accounts (a
    missing one, or one without the schema, has not), making nothing."""
    path = sqlite_file(url)
    if path is not None and not path.exists():
        return False
    own_engine = make_engine(url, busy_seconds)
    try:
        if schema_revision(own_engine) is None:
            return False
        with reading(own_engine) as connection:
            return bool(connection.execute(text(statements.HOLDS_MAIL)).scalar_one())
    finally:
        own_engine.dispose()


def require_current_schema(url: str, busy_seconds: float = 10.0) -> None:
    """Raise a ConfigError unless `url` holds a pbmserv database at the
    newest schema, making nothing (`require_database`)."""
    current, head = require_database(url, busy_seconds), newest_revision()
    if current != head:
        raise ConfigError(
            f"the database at {shown(url)} has an older schema ({current}, this pbmserv needs {head}): "
            "run `pbmserv-admin db upgrade`"
        )


def _revision_at(url: str, busy_seconds: float) -> str | None:
    """The schema revision of the database (None: no pbmserv schema)."""
    own_engine = make_engine(url, busy_seconds)
    try:
        return schema_revision(own_engine)
    finally:
        own_engine.dispose()


def schema_revision(engine: Engine) -> str | None:
    """The revision Alembic wrote into the database (None: none), read as
    Alembic reads it, with one query, without loading Alembic."""
    with reading(engine) as connection:
        if not connection.execute(text(statements.REVISION_TABLE_THERE[engine.dialect.name])).scalar_one():
            return None
        revisions = connection.execute(text(statements.REVISIONS)).scalars().all()
    if len(revisions) > 1:
        raise ConfigError(f"the database has more than one schema revision ({', '.join(revisions)}): pbmserv makes only one")
    return revisions[0] if revisions else None


@contextmanager
def _alembic_quiet() -> Iterator[None]:
    """Alembic's INFO lines (what it assumes of the database, each
    migration) only where the program logs at DEBUG (-v)."""
    alembic_log = logging.getLogger("alembic")
    level = alembic_log.level
    if not alembic_log.isEnabledFor(logging.DEBUG):
        alembic_log.setLevel(logging.WARNING)
    try:
        yield
    finally:
        alembic_log.setLevel(level)


def require_known_revision(url: str, current: str | None) -> None:
    if current is None:
        return
    with _alembic_quiet():  # importing Alembic logs its plugins at INFO
        known = {script.revision for script in _scripts().walk_revisions()}
    if current not in known:
        raise ConfigError(
            f"the database at {shown(url)} has schema {current}, which this pbmserv does not know: "
            "a newer pbmserv made it; run that one"
        )


@cache  # the migration files do not change while the program runs; reading them costs some 13 ms
def _scripts() -> ScriptDirectory:
    from alembic.script import ScriptDirectory

    return ScriptDirectory(str(MIGRATIONS))


