"""Wall time of `pbmserv receive` per mail, as Postfix's pipe transport runs it:
one process per mail, the mail on standard input, the settings in a TOML file
passed with `--config` (README, "Pipe transport"), and how many mails a
second such an install gets processed and answered.

    .venv/bin/python bench/bench_receive.py [-n 50] [--kind move|help] [--burst] [--postgres URL]

A fresh server is set up in a temporary directory (SQLite: its database,
spool and key there; with `--postgres URL`, a new database made on that
server for the run and dropped after it). Alice and bob sign up and alice
challenges bob to a game of majority on the largest board, untimed. Then N
mails are piped in, each a `pbmserv receive` process timed from start to
exit: with `--kind move` (the default) each is the next player's move
on that board (a new board when one ends), which loads the game, checks
the password at the production argon2id cost and mails the board to both
players; with `--kind help` each asks for the server's help, which needs
no game. One after the other by default; with `--burst`, all N at once (a
move each on N boards challenged first, or help from N senders), as an
MTA delivers a queue. Every mail must exit 0; then the bench waits until
every mail is processed and every reply handed to the maildir, and checks
that every move was applied once. Prints p50 and p95 wall (and CPU) per
`receive` process, and mails per second from the first mail piped in
until the last reply was delivered, last.

A `receive` that only stores the mail and leaves its processing to a
drainer in the background (this branch) exits before its mail is
processed; one that processes it itself (main before it) after. The
mails per second count both the same way.

Python keeps the modules' compiled bytecode (as an installed pbmserv has it:
pip compiles it at install) unless `--no-bytecode-cache`, which runs each
`receive` with PYTHONDONTWRITEBYTECODE=1, as an editable install under that
setting runs: every pbmserv module is then compiled anew in each process.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from email.utils import formatdate
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from pbmserv.gamekit import get_game
from pbmserv.store.database import upgrade
from pbmserv.store.urls import normalise_url

PBMSERV = str(Path(sys.executable).with_name("pbmserv"))
PLAYERS = (("alice", "secret-a1"), ("bob", "secret-b2"))
GAME = "majority"
OPTIONS = {"size": "14", "stones": "98"}


def config_text(directory: Path, database_url: str) -> str:
    return f"""\
[database]
url = "{database_url}"
key_file = "{directory / 'pbmserv.key'}"

[mail]
address = "games@example.test"
backend = "maildir"
maildir = "{directory / 'mail' / 'outbox'}"

[limits]
replies_per_hour = 1000000
error_replies_per_hour = 1000000
challenges_per_hour = 1000000
"""


class Server:
    def __init__(self, config: Path, bytecode_cache: bool):
        self.config = config
        self.serial = 0
        self.environment = {key: value for key, value in os.environ.items() if not key.startswith("PBMSERV_")}
        if bytecode_cache:
            self.environment.pop("PYTHONDONTWRITEBYTECODE", None)
        else:
            self.environment["PYTHONDONTWRITEBYTECODE"] = "1"

    def mail(self, sender: str, subject: str) -> bytes:
        self.serial += 1
        return (
            f"From: {sender}@example.org\r\nTo: games@example.test\r\nDate: {formatdate()}\r\n"
            f"Message-ID: <bench-{os.getpid()}-{self.serial}@example.org>\r\nSubject: {subject}\r\n\r\nbench\r\n"
        ).encode()

    def receive(self, sender: str, subject: str) -> tuple[float, float]:
        """Runs one `pbmserv receive`; its wall time and CPU time (user and system) in seconds."""
        raw = self.mail(sender, subject)
        command = [PBMSERV, "--config", str(self.config), "receive", "--sender", f"{sender}@example.org",
                   "--recipient", "games@example.test"]
        with tempfile.TemporaryFile() as errors:
            started = time.perf_counter()
            process = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=errors, env=self.environment,
            )
            assert process.stdin is not None
            process.stdin.write(raw)
            process.stdin.close()
            _, status, usage = os.wait4(process.pid, 0)  # this process's own CPU, also among many at once
            wall = time.perf_counter() - started
            process.returncode = os.waitstatus_to_exitcode(status)
            if process.returncode != 0:
                errors.seek(0)
                sys.exit(f"receive exited {process.returncode} for {subject!r}:\n{errors.read().decode()}")
        return wall, usage.ru_utime + usage.ru_stime


class Board:
    """The bench's own copy of the board it plays on, to pick legal moves."""

    def __init__(self, server: Server, number: int):
        self.game = get_game(GAME)
        self.number = number
        self.state = self.game.new(OPTIONS, [name for name, _ in PLAYERS])
        self.moves = 0
        options = " ".join(f"-{key}={value}" for key, value in OPTIONS.items())
        server.receive("alice", f"{GAME} challenge {options} alice bob")

    def next_move(self, rng: random.Random) -> tuple[str, str] | None:
        """(sender, subject) of the next move, None once the game is over."""
        if self.game.outcome(self.state) is not None:
            return None
        seat = min(self.game.to_move(self.state))
        move = rng.choice(self.game.legal_moves(self.state, seat))
        self.state = self.game.play(self.state, seat, move)
        self.moves += 1
        name, password = PLAYERS[seat]
        return name, f"{GAME} move {self.number} {name} {password} {move} #{self.moves}"


def progress(done: int, total: int) -> None:
    filled = round(30 * done / total)
    print(f"\r[{'#' * filled}{'.' * (30 - filled)}] {done}/{total}", end="", file=sys.stderr, flush=True)
    if done == total:
        print(file=sys.stderr)


def sign_up(server: Server) -> None:
    """Each player signs up and confirms the address by replying to the welcome."""
    for name, password in PLAYERS:
        server.receive(name, f"signup {name} {password}")
    outbox = server.config.parent / "mail" / "outbox" / "new"
    deadline = time.monotonic() + 60
    welcomes: list[str] = []
    while len(welcomes) < len(PLAYERS) and time.monotonic() < deadline:
        time.sleep(0.1)
        mails = [path.read_text() for path in outbox.iterdir()] if outbox.exists() else []
        welcomes = [line.removeprefix("Subject: ") for mail in mails for line in mail.splitlines() if line.startswith("Subject: confirm ")]
    for subject in welcomes:
        server.receive(subject.split()[1], f"Re: {subject}")


def timed_mails(server: Server, kind: str, count: int) -> tuple[list[tuple[float, float]], int]:
    """The (wall, CPU) times of `count` mails piped one after the other, and how many moves they made."""
    rng = random.Random(21)
    board = Board(server, 101) if kind == "move" else None
    times: list[tuple[float, float]] = []
    moves = 0
    for _ in range(count):
        if board is None:
            times.append(server.receive("alice", "help"))
        else:
            step = board.next_move(rng)
            if step is None:
                board = Board(server, board.number + 1)
                step = board.next_move(rng)
                assert step is not None, "a new board has a move"
            times.append(server.receive(*step))
            moves += 1
        progress(len(times), count)
    return times, moves


def burst_of(server: Server, kind: str, count: int) -> list[tuple[str, str]]:
    """The (sender, subject) of `count` mails to pipe in at once: a first
    move on each of `count` boards, challenged now, or help from `count` senders."""
    if kind == "help":
        return [(f"sender{number}", "help") for number in range(count)]
    rng = random.Random(21)
    steps = [Board(server, 101 + number).next_move(rng) for number in range(count)]
    return [step for step in steps if step is not None]


def burst_mails(server: Server, mails: list[tuple[str, str]]) -> list[tuple[float, float]]:
    """The mails piped in at once, each its own process; their (wall, CPU) times."""
    with ThreadPoolExecutor(max_workers=len(mails)) as pool:
        times = list(pool.map(lambda mail: server.receive(*mail), mails))
    progress(len(mails), len(mails))
    return times


@contextmanager
def fresh_postgres(url: str) -> Iterator[str]:
    """A new database on the server at `url` for the run, dropped after it."""
    name = f"pbm_bench_receive_{os.getpid()}"
    admin = create_engine(normalise_url(url), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f"CREATE DATABASE {name}"))
    try:
        yield normalise_url(make_url(url).set(database=name).render_as_string(hide_password=False))
    finally:
        with admin.connect() as connection:
            connection.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        admin.dispose()


def applied_moves(database_url: str) -> int:
    engine = create_engine(database_url)
    try:
        with engine.connect() as connection:
            return int(connection.execute(text("SELECT count(*) FROM moves")).scalar_one())
    finally:
        engine.dispose()


def wait_until_answered(database_url: str, mails: int, seconds: float = 600.0) -> None:
    """Until `mails` mails are processed and no reply waits in the outbox."""
    engine = create_engine(database_url)
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            with engine.connect() as connection:
                done = connection.execute(text("SELECT count(*) FROM inbound_mails WHERE status = 'done'")).scalar_one()
                waiting = connection.execute(text("SELECT count(*) FROM outbox WHERE status = 'pending'")).scalar_one()
            if done >= mails and waiting == 0:
                return
            time.sleep(0.05)
    finally:
        engine.dispose()
    sys.exit(f"not every mail was processed and answered within {seconds:.0f} s")


def drainers_cpu(directory: Path, skip: dict[Path, int]) -> tuple[float, int]:
    """The CPU seconds of the drainers that `receive` started (each logs
    it when it ends, into `*-drain.log` here), past the first `skip` bytes
    of each log, and how many there were."""
    used = [
        float(line.split(" used ")[1].split(" s of CPU")[0])
        for path in directory.glob("*-drain.log")
        for line in path.read_text()[skip.get(path, 0):].splitlines() if " s of CPU" in line
    ]
    return sum(used), len(used)


def run(directory: Path, database_url: str, arguments: argparse.Namespace) -> tuple[list[tuple[float, float]], float]:
    """The (wall, CPU) times of the mails, and mails per second until all were answered."""
    config = directory / "pbmserv.toml"
    config.write_text(config_text(directory, database_url))
    upgrade(database_url)  # as the operator makes it before the MTA's first mail: `receive` makes none
    kind, count = arguments.kind, arguments.n
    server = Server(config, arguments.bytecode_cache)
    sign_up(server)
    burst = burst_of(server, kind, count) if arguments.burst else []
    wait_until_answered(database_url, server.serial)
    time.sleep(1)  # the drainer of the set-up logs its CPU when it ends
    logged = {path: len(path.read_text()) for path in directory.glob("*-drain.log")}
    started = time.perf_counter()
    if arguments.burst:
        times, moves = burst_mails(server, burst), len(burst) if kind == "move" else 0
    else:
        times, moves = timed_mails(server, kind, count)
    wait_until_answered(database_url, server.serial)
    per_second = count / (time.perf_counter() - started)
    time.sleep(3)  # a drainer waits 2 s for more mail, then logs its CPU
    drained, drainers = drainers_cpu(directory, logged)
    receives = sum(cpu for _, cpu in times)
    print(f"CPU per mail, receive and drainers together: {(receives + drained) / count:.3f} s "
          f"({drainers} drainers used {drained:.2f} s in all), so at most "
          f"{(os.cpu_count() or 1) * count / (receives + drained):.1f} mails/s on {os.cpu_count()} cores")
    stored = applied_moves(database_url)
    if stored != moves:
        sys.exit(f"{moves} moves mailed, {stored} applied")
    replies = len(list((directory / "mail" / "outbox" / "new").iterdir()))
    print(f"{count} mails ({kind}), {moves} moves applied, {replies} replies in the maildir")
    return times, per_second


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=50, help="mails timed (default 50)")
    parser.add_argument("--kind", choices=("move", "help"), default="move")
    parser.add_argument("--no-bytecode-cache", dest="bytecode_cache", action="store_false",
                        help="compile every module anew in each process (PYTHONDONTWRITEBYTECODE=1)")
    parser.add_argument("--burst", action="store_true", help="pipe the N mails in at once")
    parser.add_argument("--postgres", metavar="URL", help="PostgreSQL server to make the run's database on")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-receive-") as name:
        directory = Path(name)
        if arguments.postgres:
            with fresh_postgres(arguments.postgres) as url:
                times, per_second = run(directory, url, arguments)
            database = "PostgreSQL"
        else:
            times, per_second = run(directory, f"sqlite:///{directory / 'pbmserv.db'}", arguments)
            database = "SQLite"
    cpus = [cpu for _, cpu in times]
    walls = [wall for wall, _ in times]
    cuts = statistics.quantiles(walls, n=20, method="inclusive")
    print(f"CPU (user + system) per receive p50 {statistics.median(cpus):.3f} s, p95 "
          f"{statistics.quantiles(cpus, n=20, method='inclusive')[18]:.3f} s; the machine's load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    how = ("at once" if arguments.burst else "one by one") + ("" if arguments.bytecode_cache else ", no bytecode cache")
    print(f"all {len(walls)} processed and answered: {per_second:.1f} mails/s")
    print(f"receive on {database}, {arguments.kind} mails {how}: wall per receive p50 {statistics.median(walls):.3f} s, "
          f"p95 {cuts[18]:.3f} s (n={len(walls)}, min {min(walls):.3f} s, max {max(walls):.3f} s)")


if __name__ == "__main__":
    main()
