"""What proofs/two_serves.py drives: real `pbmserv serve` processes on one
database, clients that deliver like an MTA with two MX hosts, the players'
own copy of each board (played through the game engine), and what the
proof reads back from the database and the maildirs."""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import signal
import smtplib
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email import policy
from email.message import EmailMessage
from email.parser import BytesHeaderParser, BytesParser
from pathlib import Path
from typing import Any

from aiosmtpd.smtp import SMTP
from sqlalchemy import Engine, create_engine, text

from pbmserv.gamekit import get_game
from proofs import report
from tests.smtp_helpers import free_port

SERVER = "pbmserv@localhost"
GAME = "majority"
BIN = Path(sys.executable).parent



STARTED = time.monotonic()


def progress(fraction: float, text: str) -> None:
    report.progress(fraction, f"{text} ({time.monotonic() - STARTED:.0f} s)")


def wait_for(condition: Callable[[], bool], timeout: float, every: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(every)
    return condition()


def server_env(database_url: str, workdir: Path, name: str, port: int, relay: int | None) -> dict[str, str]:
    """A serve's settings: its own port and data dir (its maildir, when it
    has no relay); the database and the server's key (which opens mail
    another server sealed) shared."""
    return dict(
        os.environ, PBMSERV_DATABASE_URL=database_url, PBMSERV_LISTEN=f"127.0.0.1:{port}", PBMSERV_WEB_LISTEN="",
        PBMSERV_MAIL_BACKEND="maildir" if relay is None else "smtp", PBMSERV_RELAY="" if relay is None else f"127.0.0.1:{relay}",
        PBMSERV_MAILDIR=str(workdir / name / "outbox"), PBMSERV_KEY_FILE=str(workdir / "key"),
        PBMSERV_REPLIES_PER_HOUR="1000000", PBMSERV_ERROR_REPLIES_PER_HOUR="1000000",
        PBMSERV_SENDER_MAILS_PER_HOUR="0", PBMSERV_SENDER_MIB_PER_HOUR="0",  # players at machine speed
    )


@dataclass(frozen=True)
class Delivered:
    message_id: str
    answering: str  # the Message-ID of the mail it answers
    subject: str
    text: str  # the body of an error mail, else ""


class RelaySink:
    """The relay both servers deliver to, on loopback: it takes every mail
    after `delay` seconds (a relay's own work and the network) and keeps
    what the proof looks at."""

    def __init__(self, delay: float):
        self.delay = delay
        self.mails: list[Delivered] = []
        self.port = 0
        self._loop = asyncio.new_event_loop()

    def start(self) -> RelaySink:
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(self._loop)
            server = self._loop.run_until_complete(
                self._loop.create_server(lambda: SMTP(self, hostname="relay.proof"), "127.0.0.1", 0),
            )
            self.port = int(server.sockets[0].getsockname()[1])
            ready.set()
            self._loop.run_forever()

        threading.Thread(target=run, name="relay", daemon=True).start()
        assert ready.wait(10), "the relay did not start"
        return self

    async def handle_DATA(self, server: SMTP, session: Any, envelope: Any) -> str:
        await asyncio.sleep(self.delay)
        mail = BytesParser(policy=policy.default).parsebytes(envelope.content)
        subject = str(mail["Subject"])
        body = mail.get_body(("plain",)) if subject.endswith("Error") else None
        text = body.get_content() if isinstance(body, EmailMessage) else ""
        self.mails.append(Delivered(str(mail["Message-ID"]), str(mail["In-Reply-To"] or ""), subject, " ".join(text.split())))
        return "250 OK"

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)


@dataclass
class Serve:
    """One `pbmserv serve` in a session of its own (so that it can be
    killed with every process it started, as when its machine dies)."""

    name: str
    database_url: str
    workdir: Path
    relay: int | None = None  # the relay's port; None: a maildir in its data dir
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def env(self) -> dict[str, str]:
        return server_env(self.database_url, self.workdir, self.name, self.port, self.relay)

    @property
    def log(self) -> Path:
        return self.workdir / self.name / "serve.log"

    def start(self) -> Serve:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen([BIN / "pbmserv", "serve"], env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                            start_new_session=True)
        for _ in range(600):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                if self.process.poll() is not None:
                    raise AssertionError(f"serve {self.name} exited at start:\n{self.log.read_text()}") from None
                time.sleep(0.1)
        raise AssertionError(f"serve {self.name} did not listen")

    def worker_pid(self) -> int:
        """The pid of its worker, as its log names it last."""
        wait_for(lambda: "worker pid" in self.log.read_text(), 30)
        pids = re.findall(r"worker pid (\d+)", self.log.read_text())
        assert pids, f"no worker pid in {self.log}"
        return int(pids[-1])

    def claim_owner(self) -> str:
        """The name this serve's outbox claims go under."""
        match = re.search(r"outbox claims of this serve go under the name (\S+)", self.log.read_text())
        assert match is not None, f"no claim owner in {self.log}"
        return match.group(1)

    def kill_all(self) -> None:
        """SIGKILL to serve and every process of its session at once."""
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> int | None:
        if self.process is None or self.process.poll() is not None:
            return self.process.returncode if self.process is not None else None
        self.process.terminate()
        try:
            return self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            return self.process.wait(timeout=10)


def make_mail(sender: str, subject: str, message_id: str) -> bytes:
    message = EmailMessage(policy=policy.SMTP)
    message["From"] = sender
    message["To"] = SERVER
    message["Subject"] = subject
    message["Message-ID"] = message_id
    message.set_content("\n")
    return message.as_bytes()


@dataclass
class Sent:
    """A mail as its client delivered it: where it got its 250, and after how many tries."""

    message_id: str
    server: str
    tries: int


def deliver(raw: bytes, sender: str, message_id: str, routes: list[Serve], give_up_after: float = 120.0) -> Sent:
    """Like an MTA with two MX hosts: the same bytes until a 250, each try
    on the next host after one failed (refused connection, 4xx, cut off)."""
    tries, began = 0, time.monotonic()
    while time.monotonic() - began < give_up_after:
        route = routes[tries % len(routes)]
        tries += 1
        try:
            with smtplib.SMTP("127.0.0.1", route.port, timeout=30) as client:
                client.sendmail(sender, [SERVER], raw)
            return Sent(message_id, route.name, tries)
        except (OSError, smtplib.SMTPException):
            time.sleep(0.05 if tries % len(routes) else 0.2)
    raise AssertionError(f"{message_id} never got a 250 in {give_up_after:g} s")


@dataclass
class Mirror:
    """A board as its players keep it: their own state, played through the game engine."""

    number: int
    seats: list[str]
    state: Any
    played: int = 0

    def mover(self) -> tuple[int, str]:
        seat = min(get_game(GAME).to_move(self.state))
        return seat, self.seats[seat]

    def over(self) -> bool:
        return get_game(GAME).outcome(self.state) is not None

    def legal(self) -> list[str]:
        seat, _ = self.mover()
        return get_game(GAME).legal_moves(self.state, seat)

    def two_moves(self, chance: random.Random) -> list[str]:
        """Two different legal moves for the seat to move."""
        seat, _ = self.mover()
        return chance.sample(get_game(GAME).legal_moves(self.state, seat), 2)

    def play(self, move: str) -> None:
        seat, _ = self.mover()
        self.state = get_game(GAME).play(self.state, seat, move)
        self.played += 1


def password(userid: str) -> str:
    return f"pw-{userid}"


def open_boards(boards: int, routes: list[list[Serve]], engine: Engine, prefix: str) -> list[Mirror]:
    """Two accounts a board, signed up and challenged by mail through the
    servers in turn; each board's mirror as its players begin it."""
    game = get_game(GAME)
    for number in range(boards):
        for userid in (f"{prefix}w{number}", f"{prefix}b{number}"):
            raw = make_mail(f"{userid}@example.org", f"signup {userid} {password(userid)}", f"<signup-{userid}@proof>")
            deliver(raw, f"{userid}@example.org", "", routes[number % len(routes)])
    if not wait_for(lambda: len(welcomes(engine, prefix)) == 2 * boards, 300, 0.2):
        raise AssertionError(f"only {len(welcomes(engine, prefix))} of {2 * boards} signups welcomed")
    for number, (address, subject) in enumerate(sorted(welcomes(engine, prefix).items())):  # a reply confirms
        userid = address.partition("@")[0]
        deliver(make_mail(address, f"Re: {subject}", f"<confirm-{userid}@proof>"), address, "", routes[number % len(routes)])
    for number in range(boards):
        userid, other = f"{prefix}w{number}", f"{prefix}b{number}"
        raw = make_mail(f"{userid}@example.org", f"{GAME} challenge {userid} {other}", f"<challenge-{userid}@proof>")
        deliver(raw, f"{userid}@example.org", "", routes[number % len(routes)])
    names = {f"{prefix}w{number}" for number in range(boards)}

    def opened() -> list[tuple[int, list[str]]]:
        with engine.connect() as connection:
            rows = connection.execute(text("SELECT board, seats FROM boards WHERE game_type = :game"), {"game": GAME}).all()
        found = [(row.board, json.loads(row.seats) if isinstance(row.seats, str) else row.seats) for row in rows]  # SQLite: text
        return [(board, seats) for board, seats in found if names & set(seats)]

    if not wait_for(lambda: len(opened()) == boards, 300, 0.2):
        raise AssertionError(f"only {len(opened())} of {boards} boards opened")
    return sorted((Mirror(board, seats, game.new({}, seats)) for board, seats in opened()), key=lambda m: m.number)


def welcomes(engine: Engine, prefix: str) -> dict[str, str]:
    """The Subject of the welcome each account of the proof was sent (the
    request to confirm its address), by address, as the outbox holds it."""
    with engine.connect() as connection:
        rows = connection.execute(text("SELECT recipient, raw FROM outbox WHERE kind = 'confirm'")).all()
    parser = BytesHeaderParser(policy=policy.default)
    found = {row.recipient: str(parser.parsebytes(bytes(row.raw))["Subject"]) for row in rows}
    return {address: subject for address, subject in found.items() if address.startswith(prefix)}


def database_engine(url: str) -> Engine:
    return create_engine(url)


def statuses(engine: Engine, message_ids: list[str]) -> dict[str, tuple[int, str]]:
    """Each stored mail's (id, status), by Message-ID."""
    with engine.connect() as connection:
        rows = connection.execute(text("SELECT message_id, id, status FROM inbound_mails")).all()
    wanted = set(message_ids)
    return {row.message_id: (row.id, row.status) for row in rows if row.message_id in wanted}


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
