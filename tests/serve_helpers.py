"""`pbmserv serve` as a real process for tests: started with settings in
its environment, a maildir for its outgoing mail and the toy game, and the
waits and counts that tests on it need."""

from __future__ import annotations

import os
import signal
import smtplib
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import ColumnElement, create_engine, func, select
from sqlalchemy.engine import make_url
from sqlalchemy.orm import InstrumentedAttribute, Session

from tests.conftest import POSTGRES_URL
from tests.mailtools import make_mail, read_maildir
from tests.smtp_helpers import free_port

REPO = Path(__file__).resolve().parents[1]
PBMSERV = Path(sys.executable).parent / "pbmserv"


class ServeProcess:
    """One `pbmserv serve` on a free loopback port. The hourly reply caps
    are raised out of the way, and intake's rates per sender lifted, as
    tests send many mails from one address; `default_reply_caps=True`
    leaves the server's own caps in force."""

    def __init__(
        self, database_url: str, workdir: Path, name: str = "serve", *, default_reply_caps: bool = False,
        outbox: Path | None = None, **settings: str,
    ):
        self.port = free_port()
        self.maildir = outbox or workdir / f"{name}-outbox"
        self.log = workdir / f"{name}.log"
        self.env = dict(os.environ)
        self.env.update({
            "PBMSERV_DATABASE_URL": database_url,
            "PBMSERV_LISTEN": f"127.0.0.1:{self.port}",
            "PBMSERV_WEB_LISTEN": "",  # no site unless a test asks for one: no two serves on port 8080
            "PBMSERV_MAIL_BACKEND": "maildir",
            "PBMSERV_MAILDIR": str(self.maildir),
            "PBMSERV_KEY_FILE": str(workdir / "pbmserv.key"),  # required with PostgreSQL; shared by a workdir's servers
            "PBMSERV_EXTRA_GAMES": "tests.toygame:Toy",
            "PBMSERV_PASSWORD_TIME_COST": "1",
            "PBMSERV_PASSWORD_MEMORY_KIB": "1024",
            "PBMSERV_POLL_SECONDS": "0.2",
            "PBMSERV_SENDER_MAILS_PER_HOUR": "0",
            "PBMSERV_SENDER_MIB_PER_HOUR": "0",
            "PYTHONPATH": str(REPO),
        })
        for cap in ("PBMSERV_REPLIES_PER_HOUR", "PBMSERV_ERROR_REPLIES_PER_HOUR"):
            if default_reply_caps:
                self.env.pop(cap, None)
            else:
                self.env[cap] = "10000"
        self.env.update(settings)
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, *, verbose: bool = False) -> ServeProcess:
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [PBMSERV, *(["-v"] if verbose else []), "serve"], env=self.env, stdout=log, stderr=log,
                start_new_session=True,
            )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                assert self.process.poll() is None, self.log.read_text()
                time.sleep(0.1)
        raise AssertionError(f"pbmserv serve did not start:\n{self.log.read_text()}")

    def send(self, raw: bytes, sender: str = "player@example.org") -> None:
        with smtplib.SMTP("127.0.0.1", self.port, timeout=30) as client:
            client.sendmail(sender, ["pbmserv@localhost"], raw)

    def signup(self, userid: str, password: str) -> None:
        """Sign USERID@example.org up, and confirm the address by replying to the welcome."""
        address = f"{userid}@example.org"
        self.send(make_mail(address, f"signup {userid} {password}"), address)
        prefix = f"Subject: confirm {userid} ".encode()

        def welcome() -> bytes | None:
            return next((line for mail in self.mails() for line in mail.splitlines() if line.startswith(prefix)), None)

        wait_until(lambda: welcome() is not None, 30.0, self)
        subject = welcome()
        assert subject is not None
        self.send(make_mail(address, f"Re: {subject.decode().removeprefix('Subject: ')}"), address)

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        """SIGTERM, as an operator would; a server that does not stop in
        time is killed with its children (so that it cannot take over a later
        test's mail) and the test fails."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)
            raise AssertionError(f"pbmserv serve did not stop on SIGTERM:\n{self.log.read_text()}") from None
        assert "did not stop in time" not in self.log.read_text(), self.log.read_text()

    def mails(self) -> list[bytes]:
        return read_maildir(self.maildir)

    def children(self, expected: int) -> list[int]:
        """The pids of the `expected` children, once all have started: a
        child only shows as one once its spawn has run the new interpreter."""
        assert self.process is not None
        pid = self.process.pid
        wait_until(lambda: len(child_pids(pid)) == expected, 30.0, self)
        return child_pids(pid)


def wait_until(condition: Callable[[], bool], timeout: float = 30.0, *servers: ServeProcess) -> None:
    """Poll `condition`; on a timeout, fail with the logs of `servers`, to tell a slow machine from a stuck server."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    logs = "".join(f"\n--- {server.log.name}:\n{server.log.read_text()}" for server in servers)
    raise AssertionError(f"timed out after {timeout:g}s{logs}")


def count(database_url: str, column: InstrumentedAttribute[int], *where: ColumnElement[bool]) -> int:
    engine = create_engine(database_url)
    try:
        with Session(engine) as session:
            return session.scalar(select(func.count(column)).where(*where)) or 0
    finally:
        engine.dispose()


def child_pids(parent_pid: int) -> list[int]:
    """The worker and delivery processes of a `pbmserv serve`."""
    children = Path(f"/proc/{parent_pid}/task/{parent_pid}/children").read_text().split()
    return [int(pid) for pid in children if "spawn_main" in Path(f"/proc/{pid}/cmdline").read_text()]


def proof_postgres_server() -> str:
    """The PostgreSQL server of the test database, as a proof's `--postgres` takes it (it makes its own database)."""
    assert POSTGRES_URL, "a PostgreSQL test needs PBMSERV_TEST_DATABASE_URL"
    return make_url(POSTGRES_URL).set(database="postgres").render_as_string(hide_password=False)


def run_proof(script: str, *options: str, timeout: float) -> str:
    """Run proofs/`script` with `options` and return its report (standard
    output), asserting that it exited 0 with every goal held. Past
    `timeout` it is stopped with SIGTERM, on which a proof stops its
    servers and removes its databases."""
    proof = subprocess.Popen(
        [sys.executable, REPO / "proofs" / script, *options], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO,
    )
    try:
        out, err = proof.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proof.terminate()
        out, err = proof.communicate(timeout=90)
    report = out.decode(errors="replace")
    assert proof.returncode == 0, report + err.decode(errors="replace")[-2000:]
    assert report.splitlines()[-1].endswith("every goal holds")
    return report
