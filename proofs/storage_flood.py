"""The F6 flood (issue 35, item 4) against a real `pbmserv serve`: mail
sent at full speed, as one SMTP session sends it (and opens again when the
server closes it), in four phases:

  A. 200 mails of 250 KB from one sender, through the trusted relay (the
     loopback address 127.0.0.1: only the rates per sender apply);
  B. 200 mails of 1 KB from one sender, the same way;
  C. 300 mails of 250 KB, each from a sender of its own, from one client
     that is no trusted relay (127.0.1.1: the rates per client apply);
  D. once A to C are processed, serve restarted with a database size limit
     (`max_database_mib`) 40 MiB (10 with --short) above the size then:
     mails of 250 KB from four such clients and a sender each, until the
     server has answered 452 twenty times.

The mails are random text (nothing for PostgreSQL's TOAST to compress).
It measures the database's growth (SQLite: its files and the spool's, as
intake counts them; PostgreSQL: pg_database_size, and the two mail
tables' pg_total_relation_size) at its peak during each phase and once
everything is processed and delivered; then stops serve and runs the
timer pass with its clock moved past the retention (15 days), and
measures again (on PostgreSQL after VACUUM, which autovacuum does in its
own time).

Goals: what each of A to C took is within what the rates let through (a
burst of an hour's worth, and the refill while the phase ran), and the
rest was answered 451 4.7.1, D's 452 4.3.1, never a 5xx; the growth once
processed within the stated bound: twice the bytes the rates let in (the
spool's copy, the database's while it is processed), twice what D took,
ANSWER_ALLOWANCE an answer, and on SQLite the two write-ahead logs at
their kept size; D's peak within the limit, plus twice what D took (the
limit stops intake; what was taken is still processed), the logs and
SLACK_MIB; every mail taken stored and processed; after the retention
pass the database back within SLACK_MIB of where it began.

    .venv/bin/python proofs/storage_flood.py [--short] [--database sqlite|postgresql] [--postgres URL]

`--short` (for CI) sends fewer mails against scaled-down rates (the same
mechanisms, a tenth of the bytes). PostgreSQL is the server on
127.0.0.1:5432 unless `--postgres`, on a database made for the run and
dropped after it. A progress bar runs on stderr; the figures come last.
"""

from __future__ import annotations

import argparse
import base64
import math
import os
import shutil
import signal
import smtplib
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pbmserv.config import MIB, load_settings  # noqa: E402
from pbmserv.runtime import Runtime  # noqa: E402
from pbmserv.service.intake.arrival import utc_now  # noqa: E402
from pbmserv.service.processing.catalog import Catalog  # noqa: E402
from pbmserv.store.database import upgrade  # noqa: E402
from pbmserv.store.room import sqlite_room  # noqa: E402
from pbmserv.store.sqlite import WAL_KEPT_BYTES  # noqa: E402
from pbmserv.store.urls import normalise_url, sqlite_file  # noqa: E402
from proofs.report import progress, show_goals  # noqa: E402
from tests.smtp_helpers import free_port  # noqa: E402

PBMSERV = str(Path(sys.executable).with_name("pbmserv"))
SERVER = "pbmserv@localhost"
LARGE, SMALL = 250_000, 1_000  # bytes of a mail
#: what one answer may take in the database (an error quotes 40 lines of the mail; rows and indexes)
ANSWER_ALLOWANCE = 16 * 1024
#: how far the database may be past its limit, or past where it began after the retention: mails under way
#: when the limit was reached (the room is measured once a second), and the free pages kept for later rows
SLACK_MIB = 8
#: days the clock is moved on for the retention pass: past the default 14 of both retentions
RETENTION_PASS_DAYS = 15


@dataclass(frozen=True)
class Phase:
    name: str
    mails: int
    size: int
    client: str
    sender_each: bool  # a sender of its own for each mail, else one for the phase
    clients: int = 1
    #: stop once the server has answered 452 so many times (the size limit holds); `mails` is then the most sent
    until_refused: int = 0


@dataclass
class Outcome:
    phase: Phase
    codes: Counter[str] = field(default_factory=Counter)
    taken_bytes: int = 0
    reconnects: int = 0
    seconds: float = 0.0
    peak_bytes: int = 0


def phases(short: bool) -> list[Phase]:
    scale = 10 if short else 1
    return [
        Phase("A: one sender, 250 KB, via the relay", 200 // scale, LARGE, "127.0.0.1", False),
        Phase("B: one sender, 1 KB, via the relay", 200 if not short else 60, SMALL, "127.0.0.1", False),
        Phase("C: a sender each, 250 KB, one client", 300 // scale, LARGE, "127.0.1.1", True),
        Phase("D: four clients against the size limit", 2000 // scale, LARGE, "127.0.2.", True, clients=4, until_refused=20),
    ]


def rates(short: bool) -> dict[str, int]:
    """The intake rates serve runs with: the defaults, or a tenth of them (--short)."""
    if short:
        return {"sender_mails_per_hour": 40, "sender_mib_per_hour": 1, "client_mails_per_hour": 50, "client_mib_per_hour": 5}
    return {"sender_mails_per_hour": 120, "sender_mib_per_hour": 10, "client_mails_per_hour": 500, "client_mib_per_hour": 50}


def mail(sender: str, number: int, size: int) -> bytes:
    """A mail of `size` bytes of random text (nothing for PostgreSQL's TOAST to compress), each of its own."""
    head = f"From: {sender}\r\nTo: {SERVER}\r\nSubject: flood {number}\r\nMessage-ID: <flood-{number}-{sender}>\r\n\r\n"
    lines = (base64.b64encode(os.urandom(57)).decode() + "\r\n" for _ in range((size - len(head)) // 78 + 1))
    return (head + "".join(lines))[:size].encode()


class Flooder:
    """Mails at full speed over one SMTP session, opened again whenever the server closes it."""

    def __init__(self, port: int, client: str):
        self.port, self.client = port, client
        self.session: smtplib.SMTP | None = None
        self.reconnects = 0

    def send(self, sender: str, raw: bytes) -> str:
        for _ in range(3):
            try:
                if self.session is None:
                    self.session = smtplib.SMTP("127.0.0.1", self.port, timeout=60, source_address=(self.client, 0))
                    self.session.ehlo("flood.example")
                code, _ = self.session.mail(sender)
                if code == 250:
                    code, _ = self.session.rcpt(SERVER)
                if code == 250:
                    code, _ = self.session.data(raw)
                if code != 250:
                    self.session.rset()
                return str(code)
            except (smtplib.SMTPServerDisconnected, ConnectionError):
                self.session, self.reconnects = None, self.reconnects + 1
        return "closed"

    def close(self) -> None:
        if self.session is not None:
            try:
                self.session.quit()
            except (smtplib.SMTPException, OSError):
                pass


class Sizes:
    """The database's size as the run measures it, and its peak, sampled ten times a second in a thread."""

    def __init__(self, url: str):
        self.url = url
        self.database = sqlite_file(url)
        self.engine = None if self.database is not None else create_engine(normalise_url(url))
        self.peak = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def now(self) -> int:
        if self.database is not None:
            return sqlite_room(self.database).used_bytes
        assert self.engine is not None
        with self.engine.connect() as connection:
            return int(connection.execute(text("SELECT pg_database_size(current_database())")).scalar_one())

    def files(self) -> str:
        """SQLite: each file's size ("" on PostgreSQL)."""
        if self.database is None:
            return ""
        spool = f"{self.database}-spool"
        named = {"database": str(self.database), "its log": f"{self.database}-wal", "spool": spool, "the spool's log": f"{spool}-wal"}
        return ", ".join(f"{name} {Path(path).stat().st_size / MIB:.1f}" for name, path in named.items() if Path(path).exists())

    def mail_tables(self) -> int:
        """PostgreSQL: the two mail tables with their TOAST and indexes (0 on SQLite)."""
        if self.engine is None:
            return 0
        with self.engine.connect() as connection:
            return int(connection.execute(text(
                "SELECT pg_total_relation_size('inbound_mails') + pg_total_relation_size('outbox')"
            )).scalar_one())

    def watch(self) -> None:
        self.peak = self.now()
        self._stop.clear()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def stop(self) -> int:
        self._stop.set()
        assert self._thread is not None
        self._thread.join()
        return self.peak

    def _sample(self) -> None:
        while not self._stop.wait(0.1):
            self.peak = max(self.peak, self.now())

    def close(self) -> None:
        if self.engine is not None:
            self.engine.dispose()


def flood(phase: Phase, port: int, sizes: Sizes, done: int, total: int) -> Outcome:
    outcome = Outcome(phase)
    clients = [Flooder(port, phase.client + (str(number + 1) if phase.clients > 1 else "")) for number in range(phase.clients)]
    sizes.watch()
    began = time.monotonic()
    for number in range(phase.mails):
        sender = f"flood{number}-{phase.name[0].lower()}@example.org" if phase.sender_each else f"flood-{phase.name[0].lower()}@example.org"
        raw = mail(sender, number, phase.size)
        code = clients[number % len(clients)].send(sender, raw)
        outcome.codes[code] += 1
        outcome.taken_bytes += len(raw) if code == "250" else 0
        if number % 10 == 0:
            progress((done + number) / total, f"{phase.name}: {dict(outcome.codes)}")
        if phase.until_refused and outcome.codes["452"] >= phase.until_refused:
            break
    outcome.seconds = time.monotonic() - began
    for one in clients:
        one.close()
        outcome.reconnects += one.reconnects
    outcome.peak_bytes = sizes.stop()
    return outcome


def allowance(phase: Phase, seconds: float, limits: dict[str, int]) -> tuple[float, float]:
    """The mails and bytes the rates let a phase in at most: a burst of an hour's worth for each sender (or
    client) it writes as, and the refill while it ran; a phase under the size limit only."""
    refill = 1 + seconds / 3600
    if phase.client == "127.0.0.1":  # the trusted relay: one sender's limits
        return limits["sender_mails_per_hour"] * refill, limits["sender_mib_per_hour"] * MIB * refill
    return limits["client_mails_per_hour"] * refill * phase.clients, limits["client_mib_per_hour"] * MIB * refill * phase.clients


def settle(url: str, timeout: float = 600) -> tuple[int, int]:
    """Wait until no inbound mail is pending and no reply waits to be sent; (inbound processed, outbox sent)."""
    engine = create_engine(normalise_url(url))
    deadline = time.monotonic() + timeout
    spool = sqlite_file(url)
    try:
        while time.monotonic() < deadline:
            with engine.connect() as connection:
                pending = connection.execute(text(
                    "SELECT (SELECT count(*) FROM inbound_mails WHERE status = 'pending'),"
                    " (SELECT count(*) FROM outbox WHERE status = 'pending'),"
                    " (SELECT count(*) FROM inbound_mails), (SELECT count(*) FROM outbox)"
                )).one()
            spooled = spool is not None and _spooled(spool)
            if pending[0] == pending[1] == 0 and not spooled:
                return int(pending[2]), int(pending[3])
            time.sleep(0.5)
    finally:
        engine.dispose()
    raise AssertionError("serve did not process and deliver everything in time")


def _spooled(database: Path) -> bool:
    """Whether the spool still holds mail the worker has not admitted (read with connections of their own).
    An admitted mail stays in the spool until a batch's commit has synced the database, which an idle
    worker may not make for a while: it counts as admitted once the database has it."""
    import sqlite3

    spool = Path(f"{database}-spool")
    if not spool.exists():
        return False
    with sqlite3.connect(f"file:{spool}?mode=ro", uri=True, timeout=30) as connection:
        keys = {row[0] for row in connection.execute("SELECT dedup_key FROM arrivals")}
    connection.close()
    if not keys:
        return False
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=30) as connection:
        admitted = {row[0] for row in connection.execute("SELECT dedup_key FROM inbound_mails")}
    connection.close()
    return bool(keys - admitted)


def retention_pass(env: dict[str, str], url: str) -> int:
    """The timer pass, in this process, with its clock moved past the retention (as serve's worker runs it);
    on PostgreSQL then VACUUM, as autovacuum does in its own time, until the mail tables have given their
    room back (an ANALYZE under way holds the deleted rows' room a while): how many VACUUMs that took."""
    settings = load_settings(environ={key: value for key, value in env.items() if key.startswith("PBMSERV_")})
    moved = utc_now() + timedelta(days=RETENTION_PASS_DAYS)
    runtime = Runtime(replace(settings, mail_backend="memory"), catalog=Catalog.installed(), clock=lambda: moved)
    try:
        runtime.processor.run_timers()
    finally:
        runtime.close()  # the last connection checkpoints SQLite's write-ahead log into the file
    if sqlite_file(url) is not None:
        return 0
    engine = create_engine(normalise_url(url), isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as connection:
            vacuums, left = 0, SLACK_MIB * MIB
            while vacuums < 30 and left >= SLACK_MIB * MIB:
                if vacuums:
                    time.sleep(1)
                connection.execute(text("VACUUM inbound_mails, outbox"))
                vacuums += 1
                left = connection.execute(text(
                    "SELECT pg_total_relation_size('inbound_mails') + pg_total_relation_size('outbox')"
                )).scalar_one()
        return vacuums
    finally:
        engine.dispose()


def database_url(kind: str, server: str, workdir: Path) -> str:
    if kind == "sqlite":
        return f"sqlite:///{workdir / 'flood.db'}"
    name = f"pbm_storage_flood_{os.getpid()}"
    admin = create_engine(make_url(normalise_url(server)).set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f"CREATE DATABASE {name}"))
    admin.dispose()
    return make_url(normalise_url(server)).set(database=name).render_as_string(hide_password=False)


def drop_database(url: str, server: str) -> None:
    if url.startswith("postgresql"):
        admin = create_engine(make_url(normalise_url(server)).set(database="postgres"), isolation_level="AUTOCOMMIT")
        with admin.connect() as connection:
            connection.execute(text(f"DROP DATABASE IF EXISTS {make_url(url).database} WITH (FORCE)"))
        admin.dispose()


def start_serve(env: dict[str, str], log_path: Path) -> tuple[subprocess.Popen[bytes], int]:
    """serve on a free loopback port (with the settings in `env`), and that port, once it listens."""
    port = free_port()
    with open(log_path, "ab") as log:
        server = subprocess.Popen([PBMSERV, "serve"], env=dict(env, PBMSERV_LISTEN=f"127.0.0.1:{port}", PBMSERV_WEB_LISTEN=""), stdout=log,
                                  stderr=subprocess.STDOUT)
    for _ in range(600):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server, port
        except OSError:
            if server.poll() is not None:
                raise AssertionError("serve exited at start:\n" + log_path.read_text()[-3000:]) from None
            time.sleep(0.1)
    raise AssertionError("serve did not listen")


def stop_serve(server: subprocess.Popen[bytes]) -> int:
    """SIGTERM, as an operator stops it; its exit code."""
    server.send_signal(signal.SIGTERM)
    return server.wait(timeout=60)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--short", action="store_true", help="a tenth of the mails against a tenth of the rates (for CI)")
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/postgres", help="the PostgreSQL server")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (serve's log, the database)")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))  # serve and the database go too
    workdir = Path(tempfile.mkdtemp(prefix="pbmserv-storage-"))
    url = database_url(args.database, args.postgres, workdir)
    server: subprocess.Popen[bytes] | None = None
    try:
        upgrade(url)
        sizes = Sizes(url)
        began_bytes, began_tables = sizes.now(), sizes.mail_tables()
        limits = rates(args.short)
        planned = phases(args.short)
        env = dict(
            os.environ, PBMSERV_DATABASE_URL=url, PBMSERV_MAIL_BACKEND="maildir",
            PBMSERV_MAILDIR=str(workdir / "outbox"), PBMSERV_KEY_FILE=str(workdir / "key"), PBMSERV_TRUSTED_CLIENTS="127.0.0.1",
            **{f"PBMSERV_{name.upper()}": str(value) for name, value in limits.items()},
        )
        print(f"serve on {args.database}, in {workdir}; rates {limits}; trusted relay 127.0.0.1;"
              f" the database begins at {began_bytes / MIB:.1f} MiB", flush=True)
        server, port = start_serve(env, workdir / "serve.log")
        total, outcomes = sum(phase.mails for phase in planned), list[Outcome]()
        for phase in planned[:3]:
            outcomes.append(flood(phase, port, sizes, sum(o.phase.mails for o in outcomes), total))
        settle(url)  # so that D's limit is set above what A to C come to once processed
        stop_serve(server)
        cap_mib = math.ceil(sizes.now() / MIB) + (10 if args.short else 40)
        server, port = start_serve(dict(env, PBMSERV_MAX_DATABASE_MIB=str(cap_mib)), workdir / "serve.log")
        outcomes.append(flood(planned[3], port, sizes, sum(o.phase.mails for o in outcomes), total))
        sys.stderr.write("\n")
        inbound_rows, outbox_rows = settle(url)
        processed_bytes, processed_tables = sizes.now(), sizes.mail_tables()
        processed_files = sizes.files()
        serve_exit = stop_serve(server)
        vacuums = retention_pass(env, url)
        after_bytes, after_tables = sizes.now(), sizes.mail_tables()
        sizes.close()
        log = (workdir / "serve.log").read_text(errors="replace")
        return report(args, limits, cap_mib, outcomes, began_bytes, began_tables, processed_bytes, processed_tables,
                      processed_files, after_bytes, after_tables, vacuums, inbound_rows, outbox_rows, serve_exit, log)
    finally:
        if server is not None and server.poll() is None:
            server.kill()
        drop_database(url, args.postgres)
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


def report(args: argparse.Namespace, limits: dict[str, int], cap_mib: int, outcomes: list[Outcome], began: int, began_tables: int,
           processed: int, processed_tables: int, processed_files: str, after: int, after_tables: int, vacuums: int,
           inbound_rows: int, outbox_rows: int, serve_exit: int, log: str) -> int:
    print(f"\n{'phase':<42} {'sent':>5} {'taken':>6} {'MiB taken':>10} {'allowed':>8} {'peak MiB':>9} {'s':>5}  answers")
    within, refused_right = True, True
    for outcome in outcomes[:3]:
        mails, sizes = allowance(outcome.phase, outcome.seconds, limits)
        taken = outcome.codes["250"]
        within &= taken <= mails and outcome.taken_bytes <= sizes
        refused_right &= set(outcome.codes) <= {"250", "451"}
        print(f"{outcome.phase.name:<42} {outcome.phase.mails:5d} {taken:6d} {outcome.taken_bytes / MIB:10.1f}"
              f" {sizes / MIB:8.1f} {outcome.peak_bytes / MIB:9.1f} {outcome.seconds:5.1f}  {dict(outcome.codes)}"
              f" ({outcome.reconnects} sessions closed by the server)")
    capped = outcomes[3]
    refused_right &= set(capped.codes) <= {"250", "451", "452"} and capped.codes["452"] > 0
    print(f"{capped.phase.name:<42} {capped.phase.mails:5d} {capped.codes['250']:6d} {capped.taken_bytes / MIB:10.1f}"
          f" {'-':>8} {capped.peak_bytes / MIB:9.1f} {capped.seconds:5.1f}  {dict(capped.codes)}"
          f" ({capped.reconnects} sessions closed by the server)")
    taken_a_to_c = sum(outcome.codes["250"] for outcome in outcomes[:3])
    bytes_a_to_c = sum(outcome.taken_bytes for outcome in outcomes[:3])
    bound = sum(2 * allowance(outcome.phase, outcome.seconds, limits)[1] for outcome in outcomes[:3])
    bound += (taken_a_to_c + sum(outcome.codes["250"] for outcome in outcomes[3:])) * ANSWER_ALLOWANCE
    bound += capped.taken_bytes * 2
    logs = 2 * WAL_KEPT_BYTES if args.database == "sqlite" else 0  # the database's and the spool's, each cut back to this
    bound += logs
    growth = processed - began
    taken_all = sum(outcome.codes["250"] for outcome in outcomes)
    print(f"\ndatabase ({args.database}{'' if args.database == 'sqlite' else ', pg_database_size'}): {began / MIB:.1f} MiB at the start,"
          f" {max(o.peak_bytes for o in outcomes) / MIB:.1f} at the peak, {processed / MIB:.1f} once all was processed and delivered"
          f" (growth {growth / MIB:.1f} MiB for {bytes_a_to_c / MIB:.1f} + {capped.taken_bytes / MIB:.1f} MiB taken;"
          f" bound {bound / MIB:.1f} MiB), {after / MIB:.1f} after the retention pass ({RETENTION_PASS_DAYS} days on)")
    if processed_files:
        print(f"  once processed, in MiB: {processed_files}")
    if args.database == "postgresql":
        print(f"inbound_mails + outbox (pg_total_relation_size): {began_tables / MIB:.1f} MiB at the start,"
              f" {processed_tables / MIB:.1f} processed, {after_tables / MIB:.1f} after the retention pass and {vacuums} VACUUM(s)")
    print(f"rows once processed: {inbound_rows} inbound (of {taken_all} mails taken), {outbox_rows} outbox")
    tracebacks = log.count("Traceback")
    goals = {
        f"each phase took no more than the rates let through: {within}": within,
        f"every mail not taken was told to try again later (451 4.7.1, or 452 in D): {refused_right}": refused_right,
        f"growth once processed {growth / MIB:.1f} MiB <= bound {bound / MIB:.1f} MiB": growth <= bound,
        f"peak during D {capped.peak_bytes / MIB:.1f} MiB <= limit {cap_mib} + twice what D took {capped.taken_bytes / MIB:.1f}"
        f" + the logs {logs / MIB:.0f} + {SLACK_MIB} MiB": capped.peak_bytes <= (cap_mib + SLACK_MIB) * MIB + 2 * capped.taken_bytes + logs,
        f"every mail taken was stored and processed: {inbound_rows} of {taken_all}": inbound_rows == taken_all,
        f"after the retention pass {after / MIB:.1f} MiB <= {began / MIB:.1f} + {SLACK_MIB} MiB": after <= began + SLACK_MIB * MIB,
        f"tracebacks in serve's log: {tracebacks}; serve's exit on SIGTERM {serve_exit}": tracebacks == 0 and serve_exit == 0,
    }
    verdict = show_goals(goals)
    print(f"{args.database}: growth {growth / MIB:.1f} MiB (bound {bound / MIB:.1f}), peak under the limit"
          f" {capped.peak_bytes / MIB:.1f} of {cap_mib} MiB, after the retention {after / MIB:.1f} MiB"
          f" (began {began / MIB:.1f}); {verdict}")
    return 0 if all(goals.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
