"""The pieces of proofs/crash_soak.py: a `pbmserv serve` it starts, kills
and restarts; a client that sends a mail like an MTA (the same bytes until
a 250); the proof's own database (a SQLite file, or a database of its own
on the shared PostgreSQL); a private throwaway PostgreSQL cluster, to stop
and start under load; and what serve delivered into its maildir."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import smtplib
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from email.parser import BytesHeaderParser
from pathlib import Path

from sqlalchemy import Connection, Engine, create_engine, text

from tests.smtp_helpers import free_port

PBMSERV = Path(sys.executable).parent / "pbmserv"
SERVER = "pbmserv@localhost"
SHARED_POSTGRESQL = "postgresql+psycopg://postgres@127.0.0.1:5432"
POSTGRESQL_BIN = Path("/usr/lib/postgresql/15/bin")



class Serve:
    """One `pbmserv serve` on a fixed port, its output in a log of its own for each start."""

    def __init__(self, workdir: Path, database_url: str):
        self.workdir = workdir
        self.port = free_port()
        self.maildir = workdir / "outbox"
        self.env = dict(
            os.environ, PBMSERV_DATABASE_URL=database_url, PBMSERV_LISTEN=f"127.0.0.1:{self.port}", PBMSERV_WEB_LISTEN="",
            PBMSERV_MAIL_BACKEND="maildir", PBMSERV_MAILDIR=str(self.maildir), PBMSERV_KEY_FILE=str(workdir / "key"),
            PBMSERV_REPLIES_PER_HOUR="1000000", PBMSERV_ERROR_REPLIES_PER_HOUR="1000000",
            PBMSERV_CHALLENGES_PER_HOUR="1000000",
            PBMSERV_SENDER_MAILS_PER_HOUR="0", PBMSERV_SENDER_MIB_PER_HOUR="0",  # players at machine speed
        )
        self.starts = 0
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def log(self) -> Path:
        return self.workdir / f"serve-{self.starts}.log"

    def start(self) -> None:
        self.starts += 1
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen([PBMSERV, "serve"], env=self.env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError(f"serve exited at start:\n{self.log.read_text()[-3000:]}") from None
                time.sleep(0.05)
        raise RuntimeError("serve did not listen within 120 s")

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> int:
        assert self.process is not None
        self.process.terminate()
        return self.process.wait(timeout=120)

    def child_pid(self, role: str) -> int | None:
        """The pid of serve's `role` process (worker, deliverer) now, as its log names it last."""
        started = re.findall(rf"{role} pid (\d+)|the {role} process died .*?pid (\d+)", self.log.read_text())
        return int("".join(started[-1])) if started else None

    def cpu_seconds(self) -> float:
        """The CPU time serve and its children (worker, deliverer, bots) have used since they started."""
        assert self.process is not None
        pids = [self.process.pid]
        with contextlib.suppress(FileNotFoundError):
            pids += map(int, Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children").read_text().split())
        ticks = 0
        for pid in pids:
            with contextlib.suppress(FileNotFoundError):
                fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
                ticks += int(fields[11]) + int(fields[12])  # utime, stime
        return ticks / os.sysconf("SC_CLK_TCK")

    def logged(self, pattern: str) -> int:
        return sum(len(re.findall(pattern, log.read_text())) for log in self.workdir.glob("serve-*.log"))


def send_until_taken(port: int, sender: str, raw: bytes, answers: Counter[str]) -> None:
    """Send the mail, the same bytes again and again, until it is answered 250 (as an MTA would, only sooner)."""
    while True:
        try:
            with smtplib.SMTP("127.0.0.1", port, timeout=60, local_hostname="client.example.org") as client:
                client.sendmail(sender, [SERVER], raw)
            answers["250"] += 1
            return
        except smtplib.SMTPRecipientsRefused as refused:
            answers[str(next(iter(refused.recipients.values()))[0])] += 1
        except smtplib.SMTPResponseException as error:
            answers[str(error.smtp_code)] += 1
        except (OSError, smtplib.SMTPException) as error:
            answers[type(error).__name__] += 1
        time.sleep(0.2)


class Database:
    """The proof's database: a SQLite file in the work folder, or a PostgreSQL database of its own, dropped at the end."""

    def __init__(self, kind: str, workdir: Path, server: str = SHARED_POSTGRESQL):
        self.kind = kind
        self.server = server
        self.name = f"pbm_crashsoak_{os.getpid()}"
        if kind == "sqlite":
            self.url = f"sqlite:///{workdir / 'soak.db'}"
        else:
            self.url = f"{server}/{self.name}"
            with self._admin() as connection:
                connection.execute(text(f'CREATE DATABASE "{self.name}"'))
        self.engine: Engine = create_engine(self.url, pool_pre_ping=True)  # its connections outlive a restart of PostgreSQL

    def _admin(self) -> Connection:
        return create_engine(f"{self.server}/postgres", isolation_level="AUTOCOMMIT").connect()

    def rows(self, sql: str) -> list[tuple[object, ...]]:
        with self.engine.connect() as connection:
            return [tuple(row) for row in connection.execute(text(sql))]

    def drop(self) -> None:
        self.engine.dispose()
        if self.kind == "postgresql":
            with self._admin() as connection:
                connection.execute(text(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)'))


class PrivateCluster:
    """A throwaway PostgreSQL cluster in a temporary folder on a free port,
    run as the user postgres (PostgreSQL refuses root): never the shared one."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="pbmserv-soak-pg-"))
        shutil.chown(self.folder, "postgres", "postgres")
        self.port = free_port()
        self.data = self.folder / "data"
        self._as_postgres(POSTGRESQL_BIN / "initdb", "-D", self.data, "-A", "trust", "-U", "postgres", "--no-sync")
        self.url = f"postgresql+psycopg://postgres@127.0.0.1:{self.port}"

    def _as_postgres(self, *command: object) -> None:
        subprocess.run(["runuser", "-u", "postgres", "--", *map(str, command)], check=True, capture_output=True)

    def start(self) -> None:
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._as_postgres(POSTGRESQL_BIN / "pg_ctl", "-D", self.data, "-o", options, "-l", self.folder / "log", "-w", "start")

    def stop(self) -> None:
        self._as_postgres(POSTGRESQL_BIN / "pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop")

    def remove(self) -> None:
        try:
            self.stop()
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(self.folder, ignore_errors=True)


class Delivered:
    """The mails serve delivered into its maildir, counted by Message-ID, read as they come."""

    def __init__(self, maildir: Path):
        self.new = maildir / "new"
        self.seen: set[str] = set()
        self.count: Counter[str] = Counter()

    def scan(self) -> Counter[str]:
        if not self.new.exists():
            return self.count
        parser = BytesHeaderParser()
        for name in os.listdir(self.new):
            if name not in self.seen:
                self.seen.add(name)
                with open(self.new / name, "rb") as mail:
                    self.count[str(parser.parse(mail)["Message-ID"])] += 1
        return self.count
