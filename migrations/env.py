from alembic import context
from sqlalchemy import Connection, text

from pbmserv.store.database import make_engine
from pbmserv.store.models import Base

config = context.config
target_metadata = Base.metadata


def run_migrations_offline() -> None:
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=target_metadata,
        literal_binds=True,
        render_as_batch=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connectable = config.attributes.get("connection")
    if connectable is None:
        url = config.get_main_option("sqlalchemy.url")
        assert url is not None, "store.database sets the URL"
        engine = make_engine(url, config.attributes["busy_seconds"])
        with engine.connect() as connection:
            _run(connection)
        engine.dispose()
    else:
        _run(connectable)


#: any fixed number: the PostgreSQL advisory lock that upgrades take turns on
UPGRADE_LOCK = 0x70626D73


def _run(connection: Connection) -> None:
    # Servers starting together upgrade one at a time, and the later ones
    # then find the schema current: the whole upgrade is one transaction
    # (Alembic would commit SQLite's after each migration, letting another
    # process in between to run the same ones again), which on SQLite holds
    # the write lock and on PostgreSQL takes an advisory lock first.
    context.configure(
        connection=connection, target_metadata=target_metadata, render_as_batch=True, transactional_ddl=True,
    )
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": UPGRADE_LOCK})
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
