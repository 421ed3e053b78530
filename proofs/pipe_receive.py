"""`pbmserv receive` for MTA pipes (issue 21, item 7): one process per mail,
as Postfix's pipe transport runs it. Mails are piped in one by one, then a
burst all at once (help from many senders, a first move on many boards,
and some mails twice at the same moment, as an MTA retrying would).
Goals: every receive exits 0; every mail is stored and processed exactly
once (a copy piped twice is not applied twice) and gets exactly one
answer (a move two: one to each player); the drainers log no error; and,
unless `--no-latency-goal`, a receive takes at most 0.3 s wall at p50.

    .venv/bin/python proofs/pipe_receive.py [--short] [--database sqlite|postgresql] [--no-latency-goal]

PostgreSQL is the server on 127.0.0.1:5432 (user postgres) unless
`--postgres URL`, on a database made for the run and dropped after it. A progress bar runs on stderr; the
figures come last on stdout. Exit status 0 only when every goal holds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from email.utils import formatdate
from pathlib import Path

from sqlalchemy import create_engine, text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pbmserv.gamekit import get_game  # noqa: E402
from pbmserv.store.database import upgrade  # noqa: E402
from proofs.databases import proof_database  # noqa: E402

PBMSERV = str(Path(sys.executable).with_name("pbmserv"))
POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432"
P50_GOAL_SECONDS = 0.3
GAME, OPTIONS = "majorities", {"size": "3"}


class Pipe:
    """`pbmserv receive` as an MTA's pipe runs it, with the settings in a file."""

    def __init__(self, directory: Path, database_url: str):
        self.directory = directory
        self.config = directory / "pbmserv.toml"
        self.config.write_text(
            f'[database]\nurl = "{database_url}"\nkey_file = "{directory / "pbmserv.key"}"\n'
            f'[mail]\naddress = "games@example.test"\nbackend = "maildir"\nmaildir = "{directory / "outbox"}"\n'
            "[limits]\nreplies_per_hour = 1000000\nerror_replies_per_hour = 1000000\nchallenges_per_hour = 1000000\n"
        )
        self.environment = {key: value for key, value in os.environ.items() if not key.startswith("PBMSERV_")}
        self.environment.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: pip compiles the bytecode
        self.serial = 0

    def mail(self, sender: str, subject: str) -> bytes:
        self.serial += 1
        return (
            f"From: {sender}\r\nTo: games@example.test\r\nDate: {formatdate()}\r\n"
            f"Message-ID: <proof-{os.getpid()}-{self.serial}@example.org>\r\nSubject: {subject}\r\n\r\nproof\r\n"
        ).encode()

    def welcomes_answered(self) -> list[tuple[str, str]]:
        """(sender, Subject) of a reply to each welcome in the outbox, which confirms the address it came to."""
        replies = []
        for path in (self.directory / "outbox" / "new").iterdir():
            headers = dict(line.split(": ", 1) for line in path.read_text().split("\n\n")[0].splitlines() if ": " in line)
            if headers.get("Subject", "").startswith("confirm "):
                replies.append((headers["To"], f"Re: {headers['Subject']}"))
        return replies

    def receive(self, sender: str, raw: bytes) -> tuple[float, float, int]:
        """One `pbmserv receive`: its wall and CPU seconds, and its exit status."""
        command = [PBMSERV, "--config", str(self.config), "receive", "--sender", sender]
        started = time.perf_counter()
        process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=self.environment,
        )
        assert process.stdin is not None
        process.stdin.write(raw)
        process.stdin.close()
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        return time.perf_counter() - started, usage.ru_utime + usage.ru_stime, process.returncode


def progress(done: int, total: int, what: str) -> None:
    filled = round(30 * done / total)
    print(f"\r{what:<10} [{'#' * filled}{'.' * (30 - filled)}] {done}/{total}", end="", file=sys.stderr, flush=True)
    if done == total:
        print(file=sys.stderr)


def wait_until_answered(database_url: str, mails: int, seconds: float) -> float:
    """Seconds until `mails` mails are processed and no reply waits in the outbox (inf: not within `seconds`)."""
    engine = create_engine(database_url)
    started = time.perf_counter()
    try:
        while time.perf_counter() - started < seconds:
            with engine.connect() as connection:
                done = connection.execute(text("SELECT count(*) FROM inbound_mails WHERE status <> 'pending'")).scalar_one()
                waiting = connection.execute(text("SELECT count(*) FROM outbox WHERE status = 'pending'")).scalar_one()
            if done >= mails and waiting == 0:
                return time.perf_counter() - started
            time.sleep(0.05)
    finally:
        engine.dispose()
    return float("inf")


def first_moves(boards: int) -> list[str]:
    """A legal first move of alice on each of `boards` new boards."""
    game = get_game(GAME)
    state = game.new(OPTIONS, ["alice", "bob"])
    seat = min(game.to_move(state))
    assert seat == 0, "the challenger moves first"
    return [game.legal_moves(state, seat)[number % len(game.legal_moves(state, seat))] for number in range(boards)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--short", action="store_true", help="the version the test suite runs")
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--postgres", metavar="URL", default=POSTGRES, help=f"the PostgreSQL server (default {POSTGRES})")
    parser.add_argument("--no-latency-goal", dest="latency_goal", action="store_false")
    arguments = parser.parse_args()
    one_by_one, helps, boards, twice = (6, 10, 4, 4) if arguments.short else (100, 150, 50, 20)
    with (
        tempfile.TemporaryDirectory(prefix="proof-pipe-receive-") as name,
        proof_database(arguments.database, arguments.postgres, Path(name), "pbm_pipe_receive") as url,
    ):
        upgrade(url)  # as the operator makes it before the MTA's first mail: `receive` makes no database
        figures, failures = prove(Pipe(Path(name), url), url, one_by_one, helps, boards, twice)
    for line in figures:
        print(line)
    if not arguments.latency_goal:
        failures = [failure for failure in failures if not failure.startswith("latency")]
    for failure in failures:
        print(f"goal missed: {failure}")
    print(f"receive on {arguments.database}: " + ("every goal holds" if not failures else f"{len(failures)} goal(s) missed"))
    sys.exit(0 if not failures else 1)


def prove(pipe: Pipe, url: str, one_by_one: int, helps: int, boards: int, twice: int) -> tuple[list[str], list[str]]:
    codes: Counter[int] = Counter()
    signups = [("alice@example.org", "signup alice secret-a1"), ("bob@example.org", "signup bob secret-b2")]
    for sender, subject in signups:
        codes[pipe.receive(sender, pipe.mail(sender, subject))[2]] += 1
    wait_until_answered(url, len(signups), 300)
    setup = signups + pipe.welcomes_answered()  # each player confirms the address by replying to the welcome
    setup += [("alice@example.org", f"{GAME} challenge -size=3 alice bob")] * boards
    for number, (sender, subject) in enumerate(setup[len(signups):], len(signups) + 1):
        codes[pipe.receive(sender, pipe.mail(sender, subject))[2]] += 1
        progress(number, len(setup), "set-up")
    wait_until_answered(url, len(setup), 300)

    timed = []
    for number in range(one_by_one):
        sender = f"player{number}@example.org"
        *times, code = pipe.receive(sender, pipe.mail(sender, "help"))
        codes[code] += 1
        timed.append(times)
        progress(number + 1, one_by_one, "one by one")
    wait_until_answered(url, len(setup) + one_by_one, 300)

    burst = [(f"crowd{number}@example.org", "help") for number in range(helps)]
    burst += [("alice@example.org", f"{GAME} move {101 + number} alice secret-a1 {move}") for number, move in enumerate(first_moves(boards))]
    mails = [(sender, pipe.mail(sender, subject)) for sender, subject in burst]
    mails += mails[:twice // 2] + mails[-(twice - twice // 2):]  # the same bytes piped twice, at the same moment
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=len(mails)) as pool:
        results = list(pool.map(lambda mail: pipe.receive(*mail), mails))
    progress(len(mails), len(mails), "burst")
    codes.update(code for *_, code in results)
    answered = wait_until_answered(url, len(setup) + one_by_one + len(burst), 600)
    burst_seconds = time.perf_counter() - started
    return check(pipe, url, codes, timed, results, burst, burst_seconds if answered != float("inf") else answered)


def check(
    pipe: Pipe, url: str, codes: Counter[int], timed: list[list[float]], results: list[tuple[float, float, int]],
    burst: list[tuple[str, str]], burst_seconds: float,
) -> tuple[list[str], list[str]]:
    engine = create_engine(url)
    with engine.connect() as connection:
        stored = Counter(connection.execute(text("SELECT status FROM inbound_mails")).scalars())
        moves = connection.execute(text("SELECT count(*) FROM moves")).scalar_one()
    engine.dispose()
    replies: Counter[str] = Counter()
    for path in (pipe.directory / "outbox" / "new").iterdir():
        recipient = next(line for line in path.read_text().splitlines() if line.startswith("To: "))
        replies[recipient.removeprefix("To: ")] += 1
    crowd = Counter(sender for sender, subject in burst if subject == "help")
    board_moves = len(burst) - sum(crowd.values())
    errors = sum(path.read_text().count("Traceback") for path in pipe.directory.glob("*-drain.log"))
    walls = sorted(wall for wall, _ in timed)
    burst_walls = sorted(wall for wall, _, _ in results)
    failures = []
    if set(codes) != {0}:
        failures.append(f"receive exit statuses {dict(codes)}, not all 0")
    if stored != Counter({"done": pipe.serial}):
        failures.append(f"inbound mails {dict(stored)}: not each stored and processed once")
    if moves != board_moves:
        failures.append(f"{moves} moves applied of {board_moves}")
    if any(replies[sender] != 1 for sender in crowd) or any(replies[f"player{n}@example.org"] != 1 for n in range(len(timed))):
        failures.append("a help mail got no answer or more than one")
    if errors:
        failures.append(f"{errors} tracebacks in the drainers' log")
    if burst_seconds == float("inf"):
        failures.append("the burst was not all answered within 600 s")
    if statistics.median(walls) > P50_GOAL_SECONDS:
        failures.append(f"latency: receive one by one p50 {statistics.median(walls):.3f} s > {P50_GOAL_SECONDS} s")
    load = os.getloadavg()[0]
    figures = [
        f"one by one: {len(walls)} receives, wall p50 {statistics.median(walls):.3f} s, p95 {walls[int(0.95 * (len(walls) - 1))]:.3f} s, "
        f"CPU p50 {statistics.median(cpu for _, cpu in timed):.3f} s",
        f"burst: {len(results)} receives at once ({len(results) - len(burst)} of them a second copy), wall p50 "
        f"{statistics.median(burst_walls):.3f} s, p95 {burst_walls[int(0.95 * (len(burst_walls) - 1))]:.3f} s; "
        f"all {len(burst)} processed and answered after {burst_seconds:.1f} s: {len(burst) / burst_seconds:.1f} mails/s",
        f"stored {dict(stored)}, {moves} moves applied, {sum(replies.values())} replies, {errors} drainer errors; "
        f"load average {load:.1f} on {os.cpu_count()} cores",
    ]
    return figures, failures


if __name__ == "__main__":
    main()
