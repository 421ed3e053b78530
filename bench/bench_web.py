"""What the web site answers while mail moves flow (issue 37, item 5: "the
board page p99 < 20 ms with 50 concurrent clients on SQLite while mail
moves flow at 200/s").

    .venv/bin/python bench/bench_web.py [--clients 50] [--think 1.0] [--rate 200] [--seconds 10] [--games 80]

`pbmserv serve` runs as in production, its SMTP listener, worker,
delivery and web processes on one SQLite file, with the boards, players
and mails of bench_smtp (majority 14x14, 20 players, production argon2id
cost; a warm-up of two moves on every board first). While real move mails
are sent to its SMTP listener at RATE a second (spread over the boards and
8 sessions, as bench_smtp's fixed-rate phase), CLIENTS clients ask the
site for board pages, each for a board of those in play, at random, over
a connection of its own kept alive, with no If-None-Match: every answer
is a 200 with the whole body (a 304 costs less). Four phases of SECONDS
each: the board page `/majority/N`, then its PNG `/majority/N.png`, each
with the two meanings of "50 concurrent clients":
- closed loop: each client sends its next request as soon as it has the
  answer, so the site is never idle. Little's law holds the figures
  together: latency = clients / throughput, so a 20 ms latency for 50
  such clients takes 2,500 answers a second.
- think time: each client waits THINK seconds after each answer (as a
  person reading the page; from 0.5 to 1.5 times THINK, and the first
  request after up to THINK), so 50 clients ask for at most about 50 /
  THINK a second, and the latency is that of a site that is not saturated.
The clients are asyncio streams in a process of their own (a few tens of
microseconds of CPU a request), on the same 2 cores as the server. Each
phase prints requests a second, the latency's median, p99 and slowest
(from sending a request to having the whole answer), and the moves sent a
second (lower than RATE when intake is slow) and how long after the phase
the worker took to have applied every one of them.

The machine's other load being what it is, figures drift: run it twice.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_smtp import drive, free_port, move_scripts, prepare, split, wait_applied, wait_listening  # noqa: E402

SESSIONS = 8


async def ask(port: int, addresses: list[str], until: float, think: float, seed: int) -> list[float]:
    """One client: GET a random address of `addresses` on a kept-alive connection until `until`; each latency in ms."""
    rng = random.Random(seed)
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    latencies = []
    await asyncio.sleep(think * rng.random())  # people do not all click at once
    while time.monotonic() < until:
        started = time.perf_counter()
        writer.write(f"GET {rng.choice(addresses)} HTTP/1.1\r\nHost: bench\r\n\r\n".encode())
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(head.lower().split(b"content-length: ", 1)[1].split(b"\r\n", 1)[0])
        body = await reader.readexactly(length)
        assert head.startswith(b"HTTP/1.1 200 "), head + body
        latencies.append((time.perf_counter() - started) * 1000)
        if think:
            await asyncio.sleep(think * rng.uniform(0.5, 1.5))
    writer.close()
    return latencies


def clients(port: int, addresses: list[str], count: int, seconds: float, think: float, results: Any) -> None:
    """`count` clients in this process for `seconds`; every latency goes to `results`."""
    async def run() -> list[float]:
        until = time.monotonic() + seconds
        found = await asyncio.gather(*(ask(port, addresses, until, think, seed) for seed in range(count)))
        return [latency for mine in found for latency in mine]

    results.put(asyncio.run(run()))


def phase(
    web_port: int, smtp_port: int, database_url: str, addresses: list[str], jobs: list[list[tuple[str, bytes]]],
    options: argparse.Namespace, think: float, applied_before: int,
) -> str:
    """One phase: the clients in a process of their own while `jobs` are mailed in at the rate; its line."""
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    load = context.Process(target=clients, args=(web_port, addresses, options.clients, options.seconds, think, results))
    load.start()
    moves = sum(len(job) for job in jobs)
    sending: dict[str, float] = {}
    mailing = threading.Thread(target=lambda: sending.update(seconds=drive(smtp_port, jobs, options.rate, {})))
    mailing.start()
    ms = sorted(results.get(timeout=options.seconds + 120))
    load.join()
    mailing.join()
    sent = time.monotonic()
    wait_applied(database_url, applied_before + moves)
    p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
    return (
        f"{len(ms) / options.seconds:7.1f} requests/s, median {statistics.median(ms):7.1f} ms, p99 {p99:7.1f} ms,"
        f" slowest {ms[-1]:7.1f} ms; moves {moves / sending['seconds']:5.1f}/s sent, all applied"
        f" {time.monotonic() - sent:4.1f} s after the last"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--think", type=float, default=1.0, help="seconds a client with think time waits after each answer")
    parser.add_argument("--rate", type=float, default=200.0, help="move mails a second")
    parser.add_argument("--seconds", type=float, default=10.0, help="of each phase")
    parser.add_argument("--games", type=int, default=80)
    options = parser.parse_args()
    per_phase = int(options.rate * options.seconds / options.games) + 1
    with tempfile.TemporaryDirectory(prefix="pbmserv-bench-") as directory:
        workdir = Path(directory)
        database_url = f"sqlite:///{workdir / 'bench.db'}"
        print(f"preparing {options.games} majority boards in {workdir}", flush=True)
        prepare(database_url, options.games, 0)
        scripts = move_scripts(options.games)
        assert 2 + 4 * per_phase <= min(len(script) for script in scripts), "not enough moves per board: more --games"
        smtp_port, web_port = free_port(), free_port()
        env = dict(
            os.environ, PBMSERV_DATABASE_URL=database_url, PBMSERV_LISTEN=f"127.0.0.1:{smtp_port}",
            PBMSERV_WEB_LISTEN=f"127.0.0.1:{web_port}", PBMSERV_MAIL_BACKEND="maildir", PBMSERV_MAILDIR=str(workdir / "outbox"),
            PBMSERV_REPLIES_PER_HOUR="1000000", PBMSERV_ERROR_REPLIES_PER_HOUR="1000000",
            PBMSERV_BOARD_MAILS_PER_HOUR="1000000", PBMSERV_BOARD_BYTES_PER_HOUR="100000000000",
            PBMSERV_SENDER_MAILS_PER_HOUR="0", PBMSERV_SENDER_MIB_PER_HOUR="0",
        )
        server = subprocess.Popen([Path(sys.executable).parent / "pbmserv", "serve"], env=env,
                                  stdout=open(workdir / "serve.log", "wb"), stderr=subprocess.STDOUT)
        try:
            wait_listening(smtp_port)
            wait_listening(web_port)
            warm_up = split(scripts, SESSIONS, slice(0, 2))
            drive(smtp_port, warm_up, None, {})
            applied = wait_applied_count(database_url)
            boards = range(101, 101 + options.games)
            for address in ("/majority/101", "/majority/101.png"):  # the site has loaded the game and its modules
                urllib.request.urlopen(f"http://127.0.0.1:{web_port}{address}", timeout=60).read()
            print(f"{options.clients} clients, {options.seconds:.0f} s a phase, moves mailed at {options.rate:.0f}/s:", flush=True)
            first = 2
            for name, suffix in (("board page", ""), ("PNG", ".png")):
                for mode, think in (("closed loop", 0.0), (f"think {options.think:g} s", options.think)):
                    jobs = split(scripts, SESSIONS, slice(first, first + per_phase))
                    first += per_phase
                    line = phase(web_port, smtp_port, database_url, [f"/majority/{board}{suffix}" for board in boards],
                                 jobs, options, think, applied)
                    applied += sum(len(job) for job in jobs)
                    print(f"  {name:10} {mode:12} {line}", flush=True)
        finally:
            server.terminate()
            server.wait(timeout=60)


def wait_applied_count(database_url: str) -> int:
    """Once no mail is pending: how many mails the database holds."""
    wait_applied(database_url, 0)
    connection = sqlite3.connect(database_url.removeprefix("sqlite:///"))
    try:
        return int(connection.execute("SELECT max(id) FROM inbound_mails").fetchone()[0])
    finally:
        connection.close()


if __name__ == "__main__":
    main()
