"""Fail fast, fail clear: each mistake an operator can make in a setting,
a database or the network ends `pbmserv` and `pbmserv-admin` with one line
on stderr that names it, and a sysexits code, never a traceback. Run as an
operator and an MTA run them: the installed scripts, in real processes."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError

from pbmserv.store.database import alembic_config, make_engine, upgrade, writing
from pbmserv.store.revision import newest_revision
from tests.mailtools import make_mail
from tests.smtp_helpers import free_port

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
EX_TEMPFAIL, EX_CONFIG = 75, 78


def env_for(workdir: Path, **settings: str) -> dict[str, str]:
    """The environment without any PBMSERV_* setting of the caller's, and `settings`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PBMSERV_") or k.startswith("PBMSERV_TEST_")}
    env.update({
        "PBMSERV_MAILDIR": str(workdir / "outbox"),
        "PBMSERV_WEB_LISTEN": "",  # no site: these tests are about the SMTP side, and must not contend for port 8080
        "PBMSERV_PASSWORD_TIME_COST": "1",
        "PBMSERV_PASSWORD_MEMORY_KIB": "1024",
        "PYTHONPATH": str(REPO),
    })
    env.update(settings)
    return env


def run(workdir: Path, program: str, *args: str, stdin: str = "", **settings: str) -> subprocess.CompletedProcess[str]:
    workdir.mkdir(exist_ok=True)
    return subprocess.run(
        [BIN / program, *args], input=stdin, env=env_for(workdir, **settings), cwd=workdir,
        capture_output=True, text=True, timeout=60,
    )


def receive(workdir: Path, **settings: str) -> subprocess.CompletedProcess[str]:
    return run(workdir, "pbmserv", "receive", "--wait", stdin=make_mail("alice@example.org", "help").decode(), **settings)


def assert_one_line(result: subprocess.CompletedProcess[str], code: int, *says: str) -> str:
    """The command exited `code` with one line on stderr that says all of `says`."""
    assert result.returncode == code, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    for words in says:
        assert words in lines[0], lines[0]
    return lines[0]


# -- settings ------------------------------------------------------------------

@pytest.mark.parametrize(
    ("settings", "says"),
    [
        ({"PBMSERV_MAIL_BACKEND": "smtp"}, ["smtp mail backend", "PBMSERV_RELAY", "host:port"]),
        ({"PBMSERV_MAIL_BACKEND": "smtp", "PBMSERV_RELAY": "mail.example.org"}, ["PBMSERV_RELAY must be host:port"]),
        ({"PBMSERV_MAIL_BACKEND": "pigeon"}, ["PBMSERV_MAIL_BACKEND must be one of", "'pigeon'"]),
        ({"PBMSERV_LISTEN": "nonsense"}, ["PBMSERV_LISTEN must be host:port", "'nonsense'"]),
        ({"PBMSERV_DATABASE_URL": "nonsense"}, ["PBMSERV_DATABASE_URL is not a database URL"]),
        ({"PBMSERV_DATABASE_URL": "mysql://games:secret@db/pbmserv"}, ["PBMSERV_DATABASE_URL names a mysql database"]),
        ({"PBMSERV_BAKEND": "smtp"}, ["unknown environment variable PBMSERV_BAKEND", "did you mean PBMSERV_MAIL_BACKEND?"]),
        ({"PBMSERV_MAX_SESSIONS": "many"}, ["PBMSERV_MAX_SESSIONS must be a whole number, not 'many'"]),
        ({"PBMSERV_EXTRA_GAMES": "no_such_module:Game"}, ["PBMSERV_EXTRA_GAMES", "no_such_module"]),
    ],
)
def test_a_bad_setting_is_named_in_one_line(tmp_path: Path, settings: dict[str, str], says: list[str]) -> None:
    assert run(tmp_path / "work", "pbmserv-admin", "db", "upgrade").returncode == 0
    line = assert_one_line(run(tmp_path / "work", "pbmserv", "process", **settings), EX_CONFIG, *says)
    assert "secret" not in line


@pytest.mark.parametrize(
    ("toml", "says"),
    [
        ('[mail]\nbakend = "smtp"\n', "unknown setting [mail] bakend (did you mean backend?)"),
        ('[mial]\nbackend = "smtp"\n', "unknown section [mial] (did you mean [mail]?)"),
        ('url = "sqlite:///x.db"\n', "unknown setting url outside any section (did you mean [database] url?)"),
        ('[smtp]\nmax_sessions = "many"\n', "[smtp] max_sessions must be a whole number, not 'many'"),
        ("[smtp]\nlisten = 2525\n", "[smtp] listen must be a string"),
    ],
)
def test_a_mistake_in_the_config_file_is_named_in_one_line(tmp_path: Path, toml: str, says: str) -> None:
    config = tmp_path / "pbmserv.toml"
    config.write_text(toml)
    assert_one_line(run(tmp_path / "work", "pbmserv", "--config", str(config), "process"), EX_CONFIG, f"config file {config}: {says}")


def test_variables_of_the_test_suite_are_not_taken_for_settings(tmp_path: Path) -> None:
    result = run(
        tmp_path / "work", "pbmserv-admin", "db", "upgrade",
        PBMSERV_TEST_ANYTHING="1", PBMSERV_REQUIRE_POSTFIX="1", PBMSERV_REGENERATE="1",
    )
    assert result.returncode == 0, result.stderr


def test_receive_exits_75_for_a_bad_setting_so_that_the_mta_keeps_the_mail(tmp_path: Path) -> None:
    assert_one_line(
        receive(tmp_path / "work", PBMSERV_BAKEND="smtp"), EX_TEMPFAIL,
        "the mail was not stored, try again later", "PBMSERV_BAKEND",
    )


# -- the server's key --------------------------------------------------------------

def test_a_key_that_cannot_be_made_is_one_line(tmp_path: Path) -> None:
    key = str(tmp_path / "no" / "such" / "dir" / "pbmserv.key")
    older_database(tmp_path / "work")
    assert_one_line(
        run(tmp_path / "work", "pbmserv", "process", PBMSERV_KEY_FILE=key), EX_CONFIG,
        f"no server key: cannot read or make {key}", "PBMSERV_KEY_FILE",
    )
    assert_one_line(receive(tmp_path / "work", PBMSERV_KEY_FILE=key), EX_TEMPFAIL, "try again later", "no server key")


def test_a_lost_key_is_never_made_again_silently_once_the_database_holds_mail(tmp_path: Path) -> None:
    """Before, a deleted key was made anew with no word, and every reply
    address mailed so far then bounced with a text blaming a password change."""
    work = tmp_path / "work"
    assert run(work, "pbmserv-admin", "db", "upgrade").returncode == 0
    assert receive(work).returncode == 0  # a new database: its key is made, and said so
    key = work / "pbmserv.db-key"
    assert key.stat().st_mode & 0o777 == 0o600
    key.unlink()
    says = (f"no server key at {key}, but the database already holds mail", "restore the key file", "pbmserv-admin key new")
    for args in (["process"], ["drain"], ["deliver", "--once"], ["bots", "--once"]):
        assert_one_line(run(work, "pbmserv", *args), EX_CONFIG, *says)
    assert_one_line(receive(work), EX_TEMPFAIL, "the mail was not stored, try again later", *says)
    assert not key.exists()
    made = run(work, "pbmserv-admin", "key", "new")
    assert made.returncode == 0 and f"made a new server key at {key}" in made.stdout, made.stderr
    assert key.stat().st_mode & 0o777 == 0o600
    assert receive(work).returncode == 0
    assert_one_line(run(work, "pbmserv-admin", "key", "new"), EX_CONFIG, f"there is a server key at {key} already")


def test_a_new_server_says_it_made_its_key(tmp_path: Path) -> None:
    work = tmp_path / "work"
    assert run(work, "pbmserv-admin", "db", "upgrade").returncode == 0
    first = receive(work)
    assert f"made a new server key at {work / 'pbmserv.db-key'}: keep it apart from the backups" in first.stderr
    assert "made a new server key" not in receive(work).stderr


def test_a_key_others_may_read_is_refused(tmp_path: Path) -> None:
    work = tmp_path / "work"
    assert run(work, "pbmserv-admin", "db", "upgrade").returncode == 0
    key = work / "pbmserv.db-key"
    key.write_bytes(os.urandom(32))
    key.chmod(0o644)
    says = (f"the key file {key} may be read by others (mode 0644)", f"chmod 600 {key}")
    assert_one_line(run(work, "pbmserv", "process"), EX_CONFIG, *says)
    assert_one_line(receive(work), EX_TEMPFAIL, *says)
    key.chmod(0o600)
    assert receive(work).returncode == 0


def test_the_database_its_spool_and_key_are_made_for_their_owner_alone(tmp_path: Path) -> None:
    """Before, pbmserv.db was made world-readable (0644): accounts, addresses and mail."""
    work = tmp_path / "work"
    assert run(work, "pbmserv-admin", "db", "upgrade").returncode == 0
    assert receive(work).returncode == 0
    files = {path.name: path.stat().st_mode & 0o777 for path in work.iterdir() if path.name.startswith("pbmserv.db")}
    assert {"pbmserv.db", "pbmserv.db-spool", "pbmserv.db-key"} <= files.keys()
    assert set(files.values()) == {0o600}, files


def test_db_upgrade_says_what_it_did(tmp_path: Path) -> None:
    older = older_database(tmp_path / "work")
    upgraded = run(tmp_path / "work", "pbmserv-admin", "db", "upgrade")
    assert upgraded.stdout == f"database upgraded from schema {older} to {newest_revision()}\n", upgraded.stderr
    again = run(tmp_path / "work", "pbmserv-admin", "db", "upgrade")
    assert again.stdout == f"the database is at the newest schema ({newest_revision()}) already: nothing to do\n"
    made = run(tmp_path / "new", "pbmserv-admin", "db", "upgrade")
    assert made.stdout == f"database upgraded from schema nothing (a new database) to {newest_revision()}\n"


# -- the database ------------------------------------------------------------------

def test_a_missing_directory_for_the_sqlite_file_is_one_line(tmp_path: Path) -> None:
    url = "sqlite:////nonexistent/pbmserv.db"
    assert_one_line(run(tmp_path / "work", "pbmserv", "process", PBMSERV_DATABASE_URL=url), EX_CONFIG, "no directory /nonexistent")
    assert_one_line(receive(tmp_path / "work", PBMSERV_DATABASE_URL=url), EX_TEMPFAIL, "try again later", "no directory /nonexistent")


def test_a_sqlite_file_that_cannot_be_opened_asks_about_its_permissions(tmp_path: Path) -> None:
    (tmp_path / "not-a-file.db").mkdir()  # SQLite cannot open it, as it cannot open one it may not write
    url = f"sqlite:///{tmp_path / 'not-a-file.db'}"
    says = ("cannot use the database: unable to open database file", "write the SQLite file and its directory?")
    assert_one_line(run(tmp_path / "work", "pbmserv", "process", PBMSERV_DATABASE_URL=url), EX_TEMPFAIL, *says)
    assert_one_line(run(tmp_path / "work", "pbmserv-admin", "db", "upgrade", PBMSERV_DATABASE_URL=url), EX_TEMPFAIL, *says)


def test_a_postgresql_server_that_is_down_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as closed:  # a port nobody listens on
        closed.bind(("127.0.0.1", 0))
        url = f"postgresql://pbmserv:topsecret@127.0.0.1:{closed.getsockname()[1]}/pbmserv"
    settings = {"PBMSERV_DATABASE_URL": url, "PBMSERV_KEY_FILE": str(tmp_path / "key")}
    line = assert_one_line(run(tmp_path / "work", "pbmserv", "process", **settings), EX_TEMPFAIL, "cannot use the database", "refused")
    assert "topsecret" not in line
    assert_one_line(receive(tmp_path / "work", **settings), EX_TEMPFAIL, "try again later", "refused")
    assert_one_line(run(tmp_path / "work", "pbmserv-admin", "users", "list", **settings), EX_TEMPFAIL, "refused")


def test_a_database_that_does_not_exist_on_its_server_is_one_line(database_url: str, tmp_path: Path) -> None:
    url = make_url(database_url)
    if url.get_backend_name() == "sqlite":
        url = url.set(database=str(tmp_path / "gone" / "pbmserv.db"))
        says, code = "no directory", EX_CONFIG
    else:
        url = url.set(database=f"{url.database}_nonexistent")
        says, code = "does not exist", EX_TEMPFAIL
    settings = {"PBMSERV_DATABASE_URL": url.render_as_string(hide_password=False), "PBMSERV_KEY_FILE": str(tmp_path / "key")}
    assert_one_line(run(tmp_path / "work", "pbmserv", "process", **settings), code, says)
    assert_one_line(receive(tmp_path / "work", **settings), EX_TEMPFAIL, says)


def test_a_database_made_by_a_newer_pbmserv_is_one_line(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'pbmserv.db'}"
    upgrade(url)
    engine = create_engine(url)
    with engine.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = '9999'"))
    engine.dispose()
    for program, args in (("pbmserv", ["process"]), ("pbmserv-admin", ["users", "list"])):
        assert_one_line(run(tmp_path / "work", program, *args, PBMSERV_DATABASE_URL=url), EX_CONFIG, "9999", "newer pbmserv")


# -- pbmserv-admin never makes a database --------------------------------------------

ADMIN_COMMANDS = [["users", "list"], ["games", "list"], ["inbound", "list"], ["outbox", "list"]]


@pytest.mark.parametrize("args", ADMIN_COMMANDS, ids=" ".join)
def test_admin_without_a_database_makes_none_and_says_so(tmp_path: Path, args: list[str]) -> None:
    work = tmp_path / "work"
    result = run(work, "pbmserv-admin", *args)  # the default database: ./pbmserv.db
    assert_one_line(
        result, EX_CONFIG,
        f"no pbmserv database at {work / 'pbmserv.db'} (set PBMSERV_DATABASE_URL or --config to the server's; "
        "`pbmserv serve` or `pbmserv-admin db upgrade` makes a new one)",
    )
    assert list(work.iterdir()) == []


# -- only serve and db upgrade make a database ---------------------------------------

@pytest.mark.parametrize("args", [["process"], ["deliver", "--once"], ["drain"], ["bots", "--once"]], ids=" ".join)
def test_a_command_run_where_there_is_no_database_makes_none_and_says_so(tmp_path: Path, args: list[str]) -> None:
    """Before, `pbmserv process` (and so a cron `drain` without --config)
    run from the wrong directory made a new database and key there and
    reported "processed 0 mail(s)"."""
    work = tmp_path / "work"
    assert_one_line(run(work, "pbmserv", *args), EX_CONFIG, f"no pbmserv database at {work / 'pbmserv.db'}", "pbmserv serve")
    assert list(work.iterdir()) == []


def test_receive_where_there_is_no_database_keeps_the_mail_with_the_mta_and_makes_nothing(tmp_path: Path) -> None:
    work = tmp_path / "work"
    line = assert_one_line(receive(work), EX_TEMPFAIL, f"no pbmserv database at {work / 'pbmserv.db'}")
    assert line.startswith("pbmserv: the mail was not stored, try again later: ")
    assert list(work.iterdir()) == []


def test_receive_and_process_on_a_database_without_the_schema_make_none(empty_database: str, tmp_path: Path) -> None:
    settings = {"PBMSERV_DATABASE_URL": empty_database, "PBMSERV_KEY_FILE": str(tmp_path / "key")}
    assert_one_line(receive(tmp_path / "work", **settings), EX_TEMPFAIL, "no pbmserv database at")
    assert_one_line(run(tmp_path / "work", "pbmserv", "process", **settings), EX_CONFIG, "no pbmserv database at")
    assert not (tmp_path / "key").exists()


def test_admin_on_a_database_without_the_schema_says_how_to_make_it(empty_database: str, tmp_path: Path) -> None:
    settings = {"PBMSERV_DATABASE_URL": empty_database, "PBMSERV_KEY_FILE": str(tmp_path / "key")}
    assert_one_line(run(tmp_path / "work", "pbmserv-admin", "users", "list", **settings), EX_CONFIG, "no pbmserv database at")
    assert run(tmp_path / "work", "pbmserv-admin", "db", "upgrade", **settings).returncode == 0
    assert run(tmp_path / "work", "pbmserv-admin", "users", "list", **settings).returncode == 0


def test_admin_on_an_older_schema_says_to_upgrade(empty_database: str, tmp_path: Path) -> None:
    command.upgrade(alembic_config(empty_database), "0007")
    settings = {"PBMSERV_DATABASE_URL": empty_database, "PBMSERV_KEY_FILE": str(tmp_path / "key")}
    assert_one_line(
        run(tmp_path / "work", "pbmserv-admin", "users", "list", **settings), EX_CONFIG,
        "older schema (0007", "run `pbmserv-admin db upgrade`",
    )
    assert run(tmp_path / "work", "pbmserv-admin", "db", "upgrade", **settings).returncode == 0
    assert run(tmp_path / "work", "pbmserv-admin", "users", "list", **settings).returncode == 0


# -- the schema upgrade on each start and each received mail ------------------------------

def older_database(work: Path) -> str:
    """A SQLite database in `work` at the schema before the newest; its revision."""
    from alembic import command

    older = f"{int(newest_revision()) - 1:04d}"
    work.mkdir()
    command.upgrade(alembic_config(f"sqlite:///{work / 'pbmserv.db'}"), older)
    return older


def test_receive_upgrades_an_older_schema_quietly(tmp_path: Path) -> None:
    older = older_database(tmp_path / "work")
    first = receive(tmp_path / "work")
    assert first.returncode == 0, first.stderr
    assert "alembic" not in first.stderr and f"database schema upgraded from {older} to {newest_revision()}" in first.stderr
    again = run(tmp_path / "work", "pbmserv", "receive", "--wait", stdin=make_mail("bob@example.org", "help").decode())
    assert again.returncode == 0, again.stderr
    assert "alembic" not in again.stderr and "upgraded" not in again.stderr
    current = run(tmp_path / "work", "pbmserv", "-v", "receive", "--wait", stdin=make_mail("carol@example.org", "help").decode())
    assert "alembic" not in current.stderr  # a current schema is read without Alembic
    older_database(tmp_path / "other")
    upgrading = run(tmp_path / "other", "pbmserv", "-v", "receive", "--wait", stdin=make_mail("carol@example.org", "help").decode())
    assert "alembic" in upgrading.stderr


def test_the_upgrade_waits_for_the_database_only_as_long_as_busy_seconds(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'pbmserv.db'}"
    outcome: list[BaseException | None] = []

    def upgrade_meanwhile() -> None:
        try:
            upgrade(url, busy_seconds=0.2)
            outcome.append(None)
        except BaseException as error:
            outcome.append(error)

    holder = make_engine(url)
    with writing(holder):  # another writer holds the database: longer than 0.2 s, shorter than the default 10 s
        upgrading = threading.Thread(target=upgrade_meanwhile)
        upgrading.start()
        upgrading.join(timeout=5)
    upgrading.join()
    holder.dispose()
    assert isinstance(outcome[0], OperationalError) and "locked" in str(outcome[0])


# -- serve ---------------------------------------------------------------------------

def processes_with(marker: str) -> list[int]:
    """The processes whose environment holds `marker` (a test's own directory)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def serve(workdir: Path, **settings: str) -> subprocess.CompletedProcess[str]:
    """`pbmserv serve`, which must stop by itself; killed with everything it started if it does not."""
    workdir.mkdir(exist_ok=True)
    process = subprocess.Popen(
        [BIN / "pbmserv", "serve"], env=env_for(workdir, **settings), cwd=workdir,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise AssertionError("pbmserv serve did not stop by itself") from None
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def test_serve_exits_when_its_port_is_in_use_and_leaves_no_process(tmp_path: Path) -> None:
    work = tmp_path / "work"
    assert run(work, "pbmserv-admin", "db", "upgrade").returncode == 0
    assert run(work, "pbmserv-admin", "key", "new").returncode == 0  # else serve says it made one
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = serve(work, PBMSERV_LISTEN=f"127.0.0.1:{port}")
    assert_one_line(result, EX_TEMPFAIL, f"cannot listen on 127.0.0.1:{port}", "in use", "PBMSERV_LISTEN")
    assert processes_with(str(work)) == []


def test_serve_exits_on_an_address_it_cannot_have_and_leaves_no_process(tmp_path: Path) -> None:
    work = tmp_path / "work"
    assert run(work, "pbmserv-admin", "db", "upgrade").returncode == 0
    assert run(work, "pbmserv-admin", "key", "new").returncode == 0  # else serve says it made one
    result = serve(work, PBMSERV_LISTEN=f"192.0.2.1:{free_port()}")  # TEST-NET-1: on no interface here
    assert_one_line(result, EX_CONFIG, "cannot listen on 192.0.2.1", "PBMSERV_LISTEN")
    assert processes_with(str(work)) == []


def test_serve_refuses_a_bad_listen_value_before_starting_anything(tmp_path: Path) -> None:
    work = tmp_path / "work"
    assert_one_line(serve(work, PBMSERV_LISTEN="nonsense"), EX_CONFIG, "PBMSERV_LISTEN must be host:port")
    assert list(work.iterdir()) == []  # not even the database was made


# -- a health check that reads the settings ------------------------------------------

def test_health_asks_the_listener_the_settings_name(database_url: str, tmp_path: Path) -> None:
    """Before, the image's health check asked 127.0.0.1:2525 whatever the
    listener, and called a working server with another PBMSERV_LISTEN
    unhealthy, with a traceback."""
    from tests.serve_helpers import ServeProcess

    server = ServeProcess(database_url, tmp_path).start()  # on a port of its own, not 2525
    try:
        asked = subprocess.run([BIN / "pbmserv", "health"], env=server.env, capture_output=True, text=True, timeout=60)
        assert asked.returncode == 0, asked.stderr
        assert asked.stdout == f"the SMTP listener at 127.0.0.1:{server.port} answers\n"
    finally:
        server.stop()
    port = free_port()
    down = run(tmp_path / "work", "pbmserv", "health", PBMSERV_LISTEN=f"127.0.0.1:{port}")
    assert_one_line(down, 1, f"no SMTP answer at 127.0.0.1:{port} (127.0.0.1:{port})")
