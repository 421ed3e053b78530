"""A proof's own database: a SQLite file in its folder, or a PostgreSQL
database made for the run and dropped after it; and the folder itself."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from pbmserv.store.urls import normalise_url


@contextmanager
def proof_database(kind: str, server: str, directory: Path, prefix: str) -> Iterator[str]:
    """The run's database URL: `directory`'s pbmserv.db, or on the PostgreSQL
    `server` a database named `prefix` and this process's id."""
    if kind == "sqlite":
        yield f"sqlite:///{directory / 'pbmserv.db'}"
        return
    name = f"{prefix}_{os.getpid()}"
    server_url = make_url(normalise_url(server))
    admin = create_engine(server_url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f"CREATE DATABASE {name}"))
    try:
        yield server_url.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        admin.dispose()


@contextmanager
def proof_workdir(kind: str, server: str, prefix: str, *, keep: bool = False) -> Iterator[tuple[Path, str]]:
    """A new folder named `prefix`-..., and the run's database (`proof_database`) in it or on `server`;
    the folder is removed afterwards unless `keep`."""
    directory = Path(tempfile.mkdtemp(prefix=f"pbmserv-{prefix}-"))
    try:
        with proof_database(kind, server, directory, f"pbm_{prefix.replace('-', '_')}") as url:
            yield directory, url
    finally:
        if not keep:
            shutil.rmtree(directory, ignore_errors=True)
