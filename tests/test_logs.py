"""The log an operator reads: one line per mail processed, one per failed
delivery attempt, `serve`'s start and stop; as text or as JSON lines; and
never a password. Real `pbmserv` processes, real relays on loopback."""

from __future__ import annotations

import json
import logging
import re
import subprocess
from datetime import datetime
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from pbmserv.runtime import Runtime
from pbmserv.store.key import make_key
from pbmserv.store.models import InboundMail
from tests.mailtools import make_mail
from tests.serve_helpers import ServeProcess, count, wait_until
from tests.smtp_helpers import ScriptedSink, free_port, smtp_server
from tests.test_cli import BIN, env_for
from tests.test_hostile_mail import nested_multipart

TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4}"
PASSWORD = "Tr0ub4dor"


def pbmserv(tmp_path: Path, database_url: str, *args: str, raw: bytes = b"", **env: str) -> subprocess.CompletedProcess[str]:
    make_key(tmp_path / "pbmserv.key")  # a server that runs already: no line saying its key was made
    settings = {"PBMSERV_DATABASE_URL": database_url, "PBMSERV_KEY_FILE": str(tmp_path / "pbmserv.key"), **env}
    result = subprocess.run(
        [BIN / "pbmserv", *args], input=raw, env=env_for(tmp_path, **settings), cwd=tmp_path, capture_output=True,
        timeout=60,
    )
    return subprocess.CompletedProcess(result.args, result.returncode, result.stdout.decode(), result.stderr.decode())


def own_lines(stderr: str) -> list[str]:
    """The lines pbmserv logged, without Alembic's (quietened elsewhere)."""
    return [line for line in stderr.splitlines() if " alembic." not in line and '"logger": "alembic.' not in line]


def processing_line(stderr: str) -> str:
    [line] = [line for line in own_lines(stderr) if "pbmserv.service.processing.processor" in line]
    return line


def test_receive_logs_one_line_for_the_mail_and_no_password(database_url: str, tmp_path: Path) -> None:
    result = pbmserv(tmp_path, database_url, "receive", "--wait", raw=make_mail("alice@example.org", f"signup alice {PASSWORD}"))
    assert result.returncode == 0, result.stderr
    assert own_lines(result.stderr) == [processing_line(result.stderr)], "at INFO, the processing line and nothing else"
    assert re.fullmatch(
        rf"{TIME} INFO pbmserv\.service\.processing\.processor: inbound 1 from alice@example\.org: signup: done in \d+ ms",
        processing_line(result.stderr),
    ), result.stderr
    assert PASSWORD not in result.stderr + result.stdout


@pytest.mark.parametrize("how", [("--log-format=json",), ("--log-format", "json"), ()], ids=["option=", "option", "setting"])
def test_receive_logs_json_lines_with_the_fields_as_keys(database_url: str, tmp_path: Path, how: tuple[str, ...]) -> None:
    setting = {} if how else {"PBMSERV_LOG_FORMAT": "json"}
    mail = make_mail("alice@example.org", f"signup alice {PASSWORD}")
    result = pbmserv(tmp_path, database_url, *how, "receive", "--wait", raw=mail, **setting)
    assert result.returncode == 0, result.stderr
    entries = [json.loads(line) for line in result.stderr.splitlines()]
    [entry] = [entry for entry in entries if entry["logger"] == "pbmserv.service.processing.processor"]
    assert datetime.fromisoformat(entry.pop("time")).utcoffset() is not None
    ms = entry.pop("ms")
    assert isinstance(ms, int) and ms >= 0
    assert entry == {
        "level": "INFO", "logger": "pbmserv.service.processing.processor",
        "message": f"inbound 1 from alice@example.org: signup: done in {ms} ms",
        "inbound_id": 1, "sender": "alice@example.org", "command": "signup", "outcome": "done",
    }
    assert PASSWORD not in result.stderr


MAILS = {  # Subject, body, what the line says of it
    "refused": (f"toy move 101 alice {PASSWORD} b2", "", "toy move: refused in"),  # no such board
    "misspelt": (f"toy mvoe 101 alice {PASSWORD} b2", "", "toy ?: refused (unknown command) in"),
    "unknown": (f"{PASSWORD} toy move 101 alice", "", "?: refused (unknown command) in"),
    "two words": (f"change password alice {PASSWORD} {PASSWORD}2", "", "change password: refused in"),  # no such user
    "empty": ("", "", "-: refused (empty command) in"),
    "multiple refused": (
        "multiple", f"help\ntoy show 101\nsignup bob {PASSWORD}\nnonsense {PASSWORD}",
        "multiple (4 commands): refused (2 of 4 commands) in",
    ),
    "multiple": ("multiple", "help\nlist", "multiple (2 commands): done in"),
    "game help": ("toy help", "", "toy help: done in"),
    "help": ("help", "", "help: done in"),
}


@pytest.mark.parametrize(("subject", "body", "says"), MAILS.values(), ids=MAILS.keys())
def test_what_a_mail_asked_for_and_how_it_went(
    database_url: str, tmp_path: Path, subject: str, body: str, says: str,
) -> None:
    result = pbmserv(tmp_path, database_url, "receive", "--wait", raw=make_mail("alice@example.org", subject, body))
    assert result.returncode == 0, result.stderr
    line = processing_line(result.stderr)
    assert re.search(rf"inbound 1 from alice@example\.org: {re.escape(says)} \d+ ms$", line), line
    assert PASSWORD not in result.stderr


def test_a_dropped_a_duplicate_and_an_unreadable_mail_say_so(database_url: str, tmp_path: Path) -> None:
    bounce = make_mail("MAILER-DAEMON@example.org", "Undelivered Mail", headers={"Auto-Submitted": "auto-replied"})
    result = pbmserv(tmp_path, database_url, "receive", "--wait", "--sender", "", raw=bounce)
    assert re.search(r"inbound 1 from <>: -: dropped \(.+\) in \d+ ms$", processing_line(result.stderr)), result.stderr

    mail = make_mail("alice@example.org", f"signup alice {PASSWORD}")
    pbmserv(tmp_path, database_url, "receive", "--wait", raw=mail)
    again = pbmserv(tmp_path, database_url, "receive", "--wait", raw=mail)
    assert again.returncode == 0, again.stderr
    assert re.search(r"inbound 2 from alice@example\.org: signup: duplicate in \d+ ms$", processing_line(again.stderr))
    assert PASSWORD not in again.stderr

    result = pbmserv(tmp_path, database_url, "receive", "--wait", raw=nested_multipart(1000))
    line = processing_line(result.stderr)
    unreadable = r"-: failed \(unreadable: it has more than 100 MIME parts\)"
    assert re.search(rf" WARNING .*: inbound 3 from mallory@example\.net: {unreadable} in \d+ ms$", line), line


def test_a_mail_given_up_unprocessed_is_logged_failed_with_why(runtime: Runtime, caplog: pytest.LogCaptureFixture) -> None:
    """`serve`'s watchdog gives up the mail its worker was stuck on, in its own process."""
    row_id, _ = runtime.intake.store(make_mail("alice@example.org", f"toy move 101 alice {PASSWORD} b2"))
    with runtime.sessions() as session:
        key = session.get(InboundMail, row_id).dedup_key
    with caplog.at_level(logging.INFO, logger="pbmserv"):
        assert runtime.processor.give_up(key, "not processed within 300s: given up")
    [record] = [record for record in caplog.records if record.name == "pbmserv.service.processing.processor"]
    assert (record.levelname, record.getMessage()) == (
        "WARNING", f"inbound {row_id} from alice@example.org: toy move: failed (not processed within 300s: given up)",
    )
    assert (vars(record)["outcome"], vars(record)["reason"]) == ("failed", "not processed within 300s: given up")
    assert not hasattr(record, "ms"), "it was not processed: no time is claimed for it"


def test_a_log_format_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'pbmserv.db'}"
    result = pbmserv(tmp_path, url, "process", PBMSERV_LOG_FORMAT="xml")
    assert result.returncode == 78 and result.stderr == "pbmserv: PBMSERV_LOG_FORMAT must be one of text, json, not 'xml'\n"
    result = pbmserv(tmp_path, url, "--log-format", "xml", "process")
    assert result.returncode == 2 and "'xml' is not one of 'text', 'json'" in result.stderr


# -- delivery ------------------------------------------------------------------

def deliver_through(tmp_path: Path, database_url: str, port: int, *args: str, **env: str) -> str:
    """`receive` a mail whose answer goes to the relay on `port`; its stderr."""
    result = pbmserv(
        tmp_path, database_url, *args, "receive", "--wait", raw=make_mail("alice@example.org", "help"),
        PBMSERV_MAIL_BACKEND="smtp", PBMSERV_RELAY=f"127.0.0.1:{port}", **env,
    )
    assert result.returncode == 0, result.stderr
    return result.stderr


def test_a_relay_that_refuses_connections_shows_at_the_first_attempt(database_url: str, tmp_path: Path) -> None:
    port = free_port()  # nothing listens there
    [line] = [line for line in own_lines(deliver_through(tmp_path, database_url, port)) if "delivery" in line]
    assert re.fullmatch(
        rf"{TIME} WARNING pbmserv\.service\.delivery\.sending: outbox 1 to alice@example\.org: attempt 1 failed: "
        rf"relay 127\.0\.0\.1:{port}: \[Errno 111\] Connection refused; next try at {TIME}",
        line,
    ), line


def test_a_failed_attempt_as_json(database_url: str, tmp_path: Path) -> None:
    port = free_port()
    stderr = deliver_through(tmp_path, database_url, port, "--log-format=json")
    [entry] = [entry for entry in map(json.loads, stderr.splitlines()) if entry["logger"] == "pbmserv.service.delivery.sending"]
    assert entry["level"] == "WARNING" and entry["outcome"] == "retry"
    assert (entry["outbox_id"], entry["recipient"], entry["attempt"]) == (1, "alice@example.org", 1)
    assert entry["error"] == f"relay 127.0.0.1:{port}: [Errno 111] Connection refused"
    assert datetime.fromisoformat(entry["next_try"]) > datetime.fromisoformat(entry["time"])


def test_a_451_is_a_temporary_failure_with_its_next_try(database_url: str, tmp_path: Path) -> None:
    sink = ScriptedSink(["451 4.3.0 greylisted, try again later"])
    with smtp_server(lambda: sink) as port:
        stderr = deliver_through(tmp_path, database_url, port)
    [line] = [line for line in own_lines(stderr) if "delivery" in line]
    assert re.search(
        rf" WARNING .*: outbox 1 to alice@example\.org: attempt 1 failed: 451 4\.3\.0 greylisted, try again later; "
        rf"next try at {TIME}$",
        line,
    ), line


def test_a_550_makes_a_dead_letter_and_says_so(database_url: str, tmp_path: Path) -> None:
    sink = ScriptedSink(["550 5.1.1 no such user"])
    with smtp_server(lambda: sink) as port:
        stderr = deliver_through(tmp_path, database_url, port)
    [line] = [line for line in own_lines(stderr) if "delivery" in line]
    assert re.search(
        r" ERROR .*: outbox 1 to alice@example\.org: attempt 1 failed: 550 5\.1\.1 no such user; "
        r"refused for good, it is a dead letter$",
        line,
    ), line


def test_the_last_attempt_makes_a_dead_letter_and_says_so(database_url: str, tmp_path: Path) -> None:
    port = free_port()
    stderr = deliver_through(tmp_path, database_url, port, PBMSERV_DELIVERY_MAX_ATTEMPTS="1")
    [line] = [line for line in own_lines(stderr) if "delivery" in line]
    assert re.search(r" ERROR .*: attempt 1 failed: relay .*; no attempt left, it is a dead letter$", line), line


# -- serve ---------------------------------------------------------------------

def with_a_password(database_url: str) -> str:
    """The URL with a password in it where the database takes one (the test
    PostgreSQL trusts loopback and ignores it); a SQLite URL has none."""
    url = make_url(database_url)
    if url.get_backend_name() == "sqlite":
        return database_url
    return url.set(password=PASSWORD).render_as_string(hide_password=False)


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_serve_logs_its_start_each_mail_from_its_worker_and_its_stop(
    database_url: str, tmp_path: Path, log_format: str,
) -> None:
    relay = free_port()  # refuses connections: the deliverer logs too
    server = ServeProcess(
        with_a_password(database_url), tmp_path, PBMSERV_LOG_FORMAT=log_format,
        PBMSERV_MAIL_BACKEND="smtp", PBMSERV_RELAY=f"127.0.0.1:{relay}",
    ).start()
    try:
        wait_until(lambda: "pbmserv listening" in server.log.read_text(), 30, server)
        assert server.process is not None
        children = set(server.children(3))
        server.send(make_mail("alice@example.org", f"signup alice {PASSWORD}"), "alice@example.org")
        wait_until(lambda: "outbox 1 to alice@example.org" in server.log.read_text(), 30, server)
    finally:
        server.stop()
    log = server.log.read_text()
    assert PASSWORD not in log
    assert count(database_url, InboundMail.id, InboundMail.status == "done") == 1
    lines = own_lines(log)
    database = make_url(with_a_password(database_url)).render_as_string(hide_password=True)
    pids = re.search(r"worker pid (\d+), deliverer pid (\d+), bots pid (\d+)", log)
    assert pids is not None, log
    worker, deliverer, bots = map(int, pids.groups())
    assert {worker, deliverer, bots} == children
    if log_format == "json":
        entries = [json.loads(line) for line in lines]
        lines = [f"{entry['logger']}[{entry.get('role', '')}]: {entry['message']}" for entry in entries]
        [start] = [entry for entry in entries if entry["message"].startswith("pbmserv listening")]
        assert start["listen"] == f"127.0.0.1:{server.port}" and start["database"] == database
        assert (start["worker_pid"], start["deliverer_pid"], start["bots_pid"]) == (worker, deliverer, bots)
    [start_line] = [line for line in lines if "pbmserv listening" in line]
    assert start_line.endswith(
        f"pbmserv.supervisor{'[]' if log_format == 'json' else ''}: pbmserv listening on 127.0.0.1:{server.port} "
        f"for pbmserv@localhost; database {database}; mail smtp to 127.0.0.1:{relay}; key file {tmp_path / 'pbmserv.key'}; "
        f"worker pid {worker}, deliverer pid {deliverer}, bots pid {bots}"
    ), start_line
    [processed] = [line for line in lines if "inbound 1" in line]
    assert re.search(r"processor\[worker\]: inbound 1 from alice@example\.org: signup: done in \d+ ms$", processed), processed
    [delivery] = [line for line in lines if "outbox 1" in line]
    assert re.search(rf"sending\[deliverer\]: outbox 1 .* attempt 1 failed: relay 127\.0\.0\.1:{relay}: ", delivery), delivery
    assert lines[-2].endswith("pbmserv stopping on SIGTERM"), lines
    stopped = f"pbmserv stopped; worker pid {worker} exit code 0, deliverer pid {deliverer} exit code 0, bots pid {bots} exit code 0"
    assert lines[-1].endswith(stopped), lines
