"""`pbmserv serve` for `bad_mail_flood.py`: its database (a SQLite file, or
a PostgreSQL database of its own), the process and its children sampled
(memory, restarts), and what the database says at the end."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import create_engine, func, select, text

from pbmserv.store.models import InboundMail, OutboxMail

PBMSERV = Path(sys.executable).parent / "pbmserv"
POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432"


def database_url(kind: str, workdir: Path) -> str:
    """A new, empty database: a file in `workdir`, or a PostgreSQL database named after this process."""
    if kind == "sqlite":
        return f"sqlite:///{workdir / 'flood.db'}"
    name = f"pbm_flood_{os.getpid()}"
    with create_engine(f"{POSTGRES}/postgres", isolation_level="AUTOCOMMIT").connect() as connection:
        connection.execute(text(f"CREATE DATABASE {name}"))
    return f"{POSTGRES}/{name}"


def drop_database(url: str) -> None:
    if url.startswith("postgresql"):
        name = url.rsplit("/", 1)[1]
        with create_engine(f"{POSTGRES}/postgres", isolation_level="AUTOCOMMIT").connect() as connection:
            connection.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))


def environment(url: str, workdir: Path, port: int, relay_port: int) -> dict[str, str]:
    """serve's settings: production defaults (argon2 cost, reply caps, limits), delivery to the proof's relay;
    but no intake rate per sender: the player moves at machine speed, and the flood is to reach the worker
    (proofs/storage_flood.py proves those rates)."""
    return dict(
        os.environ, PBMSERV_DATABASE_URL=url, PBMSERV_LISTEN=f"127.0.0.1:{port}", PBMSERV_WEB_LISTEN="", PBMSERV_MAIL_BACKEND="smtp",
        PBMSERV_RELAY=f"127.0.0.1:{relay_port}", PBMSERV_KEY_FILE=str(workdir / "key"),
        PBMSERV_SENDER_MAILS_PER_HOUR="0", PBMSERV_SENDER_MIB_PER_HOUR="0",
    )


def start(env: dict[str, str], log_path: Path, port: int) -> subprocess.Popen[bytes]:
    with open(log_path, "ab") as log:
        server = subprocess.Popen([PBMSERV, "serve"], env=env, stdout=log, stderr=subprocess.STDOUT)
    for _ in range(600):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server
        except OSError:
            if server.poll() is not None:
                raise AssertionError("serve exited at start:\n" + log_path.read_text()[-3000:]) from None
            time.sleep(0.1)
    raise AssertionError("serve did not listen")


def descendants(pid: int) -> list[int]:
    found = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            for child in Path(f"/proc/{pid}/task/{task}/children").read_text().split():
                found += [int(child), *descendants(int(child))]
    except OSError:
        pass
    return found


def rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


@dataclass
class Watch:
    """serve and its children, sampled: the peak memory of all of them together and of each, and every pid seen."""

    pid: int
    peak_total_kib: int = 0
    peak_each_kib: dict[int, int] = field(default_factory=dict)
    children_seen: set[int] = field(default_factory=set)

    def sample(self) -> None:
        children = descendants(self.pid)
        self.children_seen.update(children)
        sizes = {pid: rss_kib(pid) for pid in [self.pid, *children]}
        self.peak_total_kib = max(self.peak_total_kib, sum(sizes.values()))
        for pid, size in sizes.items():
            self.peak_each_kib[pid] = max(self.peak_each_kib.get(pid, 0), size)


@dataclass
class Tally:
    inbound: Counter[str]
    failed_reasons: Counter[str]
    outbox: Counter[str]
    created: dict[str, datetime]  # outbox Message-ID -> when the reply was written


def tally(url: str) -> Tally:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            inbound = Counter({status: count for status, count in connection.execute(
                select(InboundMail.status, func.count()).group_by(InboundMail.status))})
            failed = Counter(error.split(":")[0] for (error,) in connection.execute(
                select(InboundMail.error).where(InboundMail.status == "failed")))
            outbox = Counter({status: count for status, count in connection.execute(
                select(OutboxMail.status, func.count()).group_by(OutboxMail.status))})
            created = {message_id: moment for message_id, moment in connection.execute(
                select(OutboxMail.message_id, OutboxMail.created_at))}
    finally:
        engine.dispose()
    return Tally(inbound, failed, outbox, created)


def pending(url: str) -> tuple[int, int]:
    """Inbound mails pending, and outbox mails not yet sent."""
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            inbound = connection.scalar(select(func.count()).where(InboundMail.status == "pending")) or 0
            outbox = connection.scalar(select(func.count()).where(OutboxMail.status == "pending")) or 0
    finally:
        engine.dispose()
    return inbound, outbox


def epoch(moment: datetime) -> float:
    return (moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)).timestamp()
