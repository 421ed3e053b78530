"""`pbmserv receive`'s hot path: what one mail piped in makes the process
load (seen in its `sys.modules`): to store it, neither SQLAlchemy nor
Alembic nor any game; to process it (`--wait`, or the drainer), its own
game only. And the schema check that costs one read of the database's
revision, without Alembic, while a database at a schema this pbmserv does
not know is still refused."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from alembic import command
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from pbmserv.config import Settings
from pbmserv.drainer import lock_path
from pbmserv.store.database import alembic_config, schema_revision, upgrade
from pbmserv.store.revision import MIGRATIONS, newest_revision
from tests.drain_helpers import drain_after_drainers
from tests.mailtools import make_mail

REPO = Path(__file__).resolve().parents[1]
GAME_MODULES = {"games.majorities", "games.majority", "games.parliament", "games.plurality", "games.synch"}

#: runs `pbmserv receive` as its console script does, and writes the names of the modules it loaded
RECEIVE_LISTING_MODULES = """
import atexit, sys
listing = sys.argv.pop(1)
atexit.register(lambda: open(listing, "w").write("\\n".join(sorted(sys.modules))))
from pbmserv.cli.main import main
sys.argv[0] = "pbmserv"
main()
"""


def receive(tmp_path: Path, database_url: str, sender: str, subject: str, *, wait: bool = True) -> set[str]:
    """Pipes a mail into `pbmserv receive` (with --wait unless `wait` is
    false); the modules the process loaded."""
    listing = tmp_path / "modules.txt"
    env = receive_env(tmp_path, database_url)
    result = subprocess.run(
        [sys.executable, "-c", RECEIVE_LISTING_MODULES, str(listing), "receive", *(["--wait"] if wait else [])],
        input=make_mail(f"{sender}@example.org", subject), env=env, cwd=tmp_path, capture_output=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr.decode()
    return set(listing.read_text().split())


def receive_env(tmp_path: Path, database_url: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PBMSERV_") or key.startswith("PBMSERV_TEST_")}
    env.update({
        "PBMSERV_DATABASE_URL": database_url,
        "PBMSERV_KEY_FILE": str(tmp_path / "pbmserv.key"),
        "PBMSERV_MAIL_BACKEND": "maildir",
        "PBMSERV_MAILDIR": str(tmp_path / "outbox"),
        "PBMSERV_PASSWORD_TIME_COST": "1",
        "PBMSERV_PASSWORD_MEMORY_KIB": "1024",
        "PYTHONPATH": str(REPO),
    })
    return env


def game_modules(modules: set[str]) -> set[str]:
    return {name for name in modules if name.partition(".")[0] == "games" and name.count(".") == 1}


def test_storing_a_mail_loads_neither_sqlalchemy_nor_alembic_nor_any_game(database_url: str, tmp_path: Path) -> None:
    receive(tmp_path, database_url, "alice", "signup alice secret1")
    receive(tmp_path, database_url, "bob", "signup bob secret2")
    for subject in ("help", "majorities challenge alice bob", "majorities move 101 alice secret1 c2"):
        modules = receive(tmp_path, database_url, "alice", subject, wait=False)
        assert game_modules(modules) == set()
        assert {name.partition(".")[0] for name in modules} & {"sqlalchemy", "alembic"} == set()
        assert {"pbmserv.runtime", "pbmserv.service.processing.processor", "pbmserv.store.database"} & modules == set()
        if make_url(database_url).get_backend_name() == "sqlite":
            assert "psycopg" not in modules
    settings = Settings(database_url=database_url, key_file=str(tmp_path / "pbmserv.key"))
    drain_after_drainers(lock_path(settings), receive_env(tmp_path, database_url), tmp_path)
    with create_engine(database_url).connect() as connection:
        statuses = connection.execute(text("SELECT status FROM inbound_mails")).scalars().all()
    assert statuses == ["done"] * 5  # the drainer processed the three stored last


def test_processing_a_mail_that_plays_no_game_loads_no_game_and_not_alembic(database_url: str, tmp_path: Path) -> None:
    modules = receive(tmp_path, database_url, "alice", "signup alice secret1")
    assert game_modules(modules) == set()
    assert not any(name == "alembic" or name.startswith("alembic.") for name in modules)
    if make_url(database_url).get_backend_name() == "sqlite":
        assert "sqlalchemy.dialects.postgresql" not in modules  # the dialect of the database in use only
    assert "pbmserv.service.processing.processor" in modules  # it was processed, too


def test_a_mail_to_a_game_loads_that_game_only(database_url: str, tmp_path: Path) -> None:
    receive(tmp_path, database_url, "alice", "signup alice secret1")
    receive(tmp_path, database_url, "bob", "signup bob secret2")
    challenge = receive(tmp_path, database_url, "alice", "majorities challenge alice bob")
    assert game_modules(challenge) == {"games.majorities"}
    move = receive(tmp_path, database_url, "alice", "majorities move 101 alice secret1 c2")
    assert game_modules(move) == {"games.majorities"}
    everything = receive(tmp_path, database_url, "carol", "list")  # lists every game's title
    assert game_modules(everything) == GAME_MODULES


def test_the_newest_revision_is_alembics_head() -> None:
    assert newest_revision() == ScriptDirectory(str(MIGRATIONS)).get_current_head()


def test_the_revision_is_read_as_alembic_reads_it(empty_database: str) -> None:
    engine = create_engine(empty_database)
    try:
        assert schema_revision(engine) is None
        command.upgrade(alembic_config(empty_database), "0007")
        assert schema_revision(engine) == "0007"
        with engine.connect() as connection:
            assert MigrationContext.configure(connection).get_current_revision() == "0007"
    finally:
        engine.dispose()


def test_receive_brings_an_older_schema_to_the_newest(empty_database: str, tmp_path: Path) -> None:
    command.upgrade(alembic_config(empty_database), "0007")
    receive(tmp_path, empty_database, "alice", "help")
    engine = create_engine(empty_database)
    try:
        assert schema_revision(engine) == newest_revision()
    finally:
        engine.dispose()


def test_receive_refuses_a_database_made_by_a_newer_pbmserv(empty_database: str, tmp_path: Path) -> None:
    upgrade(empty_database)
    engine = create_engine(empty_database)
    with engine.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = '9999'"))
    env = {key: value for key, value in os.environ.items() if not key.startswith("PBMSERV_")}
    env.update({"PBMSERV_DATABASE_URL": empty_database, "PBMSERV_KEY_FILE": str(tmp_path / "pbmserv.key")})
    result = subprocess.run(
        [Path(sys.executable).parent / "pbmserv", "receive"], input=make_mail("alice@example.org", "help"),
        env=env, cwd=tmp_path, capture_output=True, text=False, timeout=60,
    )
    stderr = result.stderr.decode()
    assert result.returncode == 75, stderr  # the MTA keeps the mail
    assert len(stderr.strip().splitlines()) == 1 and "9999" in stderr and "a newer pbmserv made it" in stderr
    with engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM inbound_mails")).scalar_one() == 0
    engine.dispose()
