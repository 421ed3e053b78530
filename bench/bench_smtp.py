"""End-to-end mail throughput and latency of `pbmserv serve` (SQLite), next
to a bare aiosmtpd handler that only parses and discards, driven by the same
client.

    .venv/bin/python bench/bench_smtp.py [--sessions 8] [--games 40] [--rate 200] [--seconds 10] [--rounds 3]
                                         [--bot-boards 0]

Warm-up: two moves on every board, so that what follows measures a server
that has been running (modules imported, every player's password check
remembered; see pbmserv/service/processing/passwords.py).
Phase 1 (saturation), in ROUNDS rounds: SESSIONS concurrent SMTP sessions
send real move mails as fast as they can; end-to-end moves/s counts moves
accepted, applied and with their replies in the outbox. The same client
then drives the bare handler, in a process of its own as `serve`'s
listener is, on the same mails, for raw intake msg/s. Each round prints
both and their ratio; the medians follow. The machine's speed drifts, and
rounds that alternate the two keep the drift out of the ratio as far as
they can. Over all rounds, the CPU time each process spent is printed per
move (until every reply is delivered, a little later), with the
throughput that CPU would allow if it kept every core busy, and the share
of the end-to-end time each process spent on a CPU and waiting for one
(the worker applies the mails one after another: time it waits for a
core is lost throughput).
Phase 2 (fixed rate): moves at RATE per second for SECONDS. A session
waits for each 250 before it sends its next mail, so when intake is slow
fewer than RATE moves a second are sent: the line says how many. Latency is
from the client starting to send a mail to three points: its 250 (SMTP
intake); its replies and outcome written to the database with its batch
(`processed_at`, taken just before the batch commits); and its first reply
written into the maildir (delivered, as a player would see it).
Players use the production argon2id cost. With `--bot-boards N`, N more
boards have the strong bot to move (about 4.5 s of thinking each), so
that `serve`'s bots process thinks all through the run: compare with 0 for
what the bots cost the players' mail.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import random
import smtplib
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import UTC
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from itertools import count
from pathlib import Path
from typing import Any

from aiosmtpd.smtp import SMTP
from sqlalchemy import create_engine, func, select
from sqlalchemy.orm import Session

from games.majority import Majority
from pbmserv.config import Settings
from pbmserv.mail.backends import MemoryBackend
from pbmserv.runtime import Runtime
from pbmserv.service.processing.catalog import Catalog
from pbmserv.store.models import InboundMail

GAME = Majority()
OPTIONS = {"size": "14", "stones": "98"}
PLAYERS = 20
ids = count(1)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def mail(sender: str, subject: str) -> bytes:
    message = EmailMessage(policy=policy.SMTP)
    message["From"] = sender
    message["To"] = "pbmserv@localhost"
    message["Subject"] = subject
    message["Message-ID"] = f"<bench-{next(ids)}@example.org>"
    message.set_content("Your move.\n")
    return message.as_bytes()


def move_scripts(games: int) -> list[list[tuple[str, bytes]]]:
    """For each board, its moves as (sender, mail), legal and in order."""
    rng = random.Random(2026)
    scripts = []
    for board in range(101, 101 + games):
        players = [f"p{(board * 2) % PLAYERS}", f"p{(board * 2 + 1) % PLAYERS}"]
        state = GAME.new(OPTIONS, players)
        script = []
        while GAME.outcome(state) is None:
            seat = min(GAME.to_move(state))
            move = rng.choice(GAME.legal_moves(state, seat))
            state = GAME.play(state, seat, move)
            userid = players[seat]
            script.append((f"{userid}@example.org", mail(f"{userid}@example.org", f"majority move {board} {userid} pw-{userid} {move}")))
        scripts.append(script)
    return scripts


def prepare(database_url: str, games: int, bot_boards: int) -> None:
    runtime = Runtime(Settings(database_url=database_url, mail_backend="memory"), catalog=Catalog([GAME]), backend=MemoryBackend())
    runtime.upgrade_schema()
    for number in range(PLAYERS):
        runtime.intake.store(mail(f"p{number}@example.org", f"signup p{number} pw-p{number}"))
    runtime.processor.process_pending()
    runtime.delivery.deliver_due()
    assert isinstance(runtime.backend, MemoryBackend)
    for recipient, raw in runtime.backend.sent:  # each player confirms the address by replying to the welcome
        subject = raw.split(b"\nSubject: ", 1)[1].split(b"\n", 1)[0].decode().strip()
        runtime.intake.store(mail(recipient, f"Re: {subject}"))
    flags = " ".join(f"-{k}={v}" for k, v in OPTIONS.items())
    for board in range(101, 101 + games):
        players = [f"p{(board * 2) % PLAYERS}", f"p{(board * 2 + 1) % PLAYERS}"]
        runtime.intake.store(mail("setup@example.org", f"majority challenge {flags} {' '.join(players)}"))
    for number in range(bot_boards):  # after the players' boards: their numbers stay 101..
        runtime.intake.store(mail("setup@example.org", f"majority challenge {flags} -bot=strong bot p{number % PLAYERS}"))
    runtime.processor.process_pending()
    runtime.close()


def drive(
    port: int, jobs: list[list[tuple[str, bytes]]], rate: float | None, sent_at: dict[str, float],
    acknowledged: list[float] | None = None,
) -> float:
    """Send every job list on its own SMTP session; returns the seconds
    taken. With `acknowledged`, collects how long each mail took to get its 250."""
    interval = len(jobs) / rate if rate else 0.0

    def session(job: list[tuple[str, bytes]], offset: float) -> None:
        with smtplib.SMTP("127.0.0.1", port, timeout=60) as client:
            start = time.monotonic() + offset
            for index, (sender, raw) in enumerate(job):
                if interval:
                    delay = start + index * interval - time.monotonic()
                    if delay > 0:
                        time.sleep(delay)
                message_id = raw.split(b"Message-ID: ", 1)[1].split(b"\r\n", 1)[0].decode()
                sent_at[message_id] = time.time()
                client.sendmail(sender, ["pbmserv@localhost"], raw)
                if acknowledged is not None:
                    acknowledged.append((time.time() - sent_at[message_id]) * 1000)

    began = time.monotonic()
    threads = [threading.Thread(target=session, args=(job, i * interval / max(1, len(jobs)))) for i, job in enumerate(jobs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.monotonic() - began


def split(scripts: list[list[tuple[str, bytes]]], sessions: int, per_board: slice) -> list[list[tuple[str, bytes]]]:
    """Boards dealt to sessions; each session sends its boards' moves in order."""
    jobs: list[list[tuple[str, bytes]]] = [[] for _ in range(sessions)]
    for index, script in enumerate(scripts):
        jobs[index % sessions].extend(script[per_board])
    return jobs


def serve_processes(pid: int) -> list[tuple[str, int]]:
    """`pbmserv serve` (SMTP intake) and its worker, delivery and bots processes (spawned in that order)."""
    children = sorted(int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split())
    spawned = [child for child in children if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes()]
    return [("intake", pid), *zip(("worker", "delivery", "bots"), spawned)]


def cpu_seconds(pid: int) -> dict[str, float]:
    """CPU seconds used so far by each process of `serve`."""
    ticks = os.sysconf("SC_CLK_TCK")
    used = {}
    for name, process in serve_processes(pid):
        fields = Path(f"/proc/{process}/stat").read_text().rsplit(")", 1)[1].split()
        used[name] = (int(fields[11]) + int(fields[12])) / ticks
    return used


def scheduling(pid: int) -> dict[str, tuple[float, float]]:
    """Seconds each process of `serve` has spent on a CPU and waiting for one, so far."""
    found = {}
    for name, process in serve_processes(pid):
        running, waiting = 0.0, 0.0
        for task in Path(f"/proc/{process}/task").iterdir():
            on_cpu, queued, _ = (task / "schedstat").read_text().split()
            running += int(on_cpu) / 1e9
            waiting += int(queued) / 1e9
        found[name] = (running, waiting)
    return found


def wait_applied(database_url: str, expected: int) -> float:
    """Poll (cheaply: the server shares these cores) until `expected` mails are stored and none is pending."""
    connection = sqlite3.connect(database_url.removeprefix("sqlite:///"))
    try:
        while True:
            pending, newest = connection.execute(
                "SELECT (SELECT count(*) FROM inbound_mails WHERE status = 'pending'), (SELECT max(id) FROM inbound_mails)"
            ).fetchone()
            if not pending and (newest or 0) >= expected:
                return time.monotonic()
            time.sleep(0.02)
    finally:
        connection.close()


def latencies(database_url: str, sent_at: dict[str, float]) -> list[float]:
    engine = create_engine(database_url)
    with Session(engine) as session:
        rows = session.execute(select(InboundMail.message_id, InboundMail.processed_at, InboundMail.status)).all()
    engine.dispose()
    found = []
    for message_id, processed_at, status in rows:
        if message_id in sent_at:
            assert status == "done", (message_id, status)
            done = processed_at.replace(tzinfo=UTC).timestamp()
            found.append((done - sent_at[message_id]) * 1000)
    return found


def delivered(maildir: Path, sent_at: dict[str, float]) -> list[float]:
    """Milliseconds from sending each mail to its first reply landing in the
    maildir (the file's modification time), read after the run."""
    first: dict[str, float] = {}
    for path in (maildir / "new").iterdir():
        with open(path, "rb") as handle:
            head = handle.read(4096)
        if b"In-Reply-To: " not in head:  # a board mail after a bot's move answers no player's mail
            continue
        answered = head.split(b"In-Reply-To: ", 1)[1].split(b"\n", 1)[0].decode().rstrip("\r")  # a maildir's lines end in LF
        if answered in sent_at:
            first[answered] = min(first.get(answered, float("inf")), path.stat().st_mtime)
    return [(first[message_id] - sent_at[message_id]) * 1000 for message_id in first]


def wait_delivered(database_url: str) -> None:
    """Poll until the outbox has nothing left to send."""
    connection = sqlite3.connect(database_url.removeprefix("sqlite:///"))
    try:
        while connection.execute("SELECT count(*) FROM outbox WHERE status = 'pending'").fetchone()[0]:
            time.sleep(0.05)
    finally:
        connection.close()


def percentiles(milliseconds: list[float]) -> tuple[float, float, float]:
    ordered = sorted(milliseconds)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))], ordered[-1]


class Discard:
    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        BytesParser(policy=policy.default).parsebytes(envelope.original_content)
        return "250 OK"


def serve_bare(port: int) -> None:
    """The bare handler as a server process of its own, as `pbmserv serve` is."""
    async def run() -> None:
        server = await asyncio.get_running_loop().create_server(lambda: SMTP(Discard(), hostname="bench"), "127.0.0.1", port)
        async with server:
            await server.serve_forever()

    asyncio.run(run())


def bare_intake(jobs: list[list[tuple[str, bytes]]]) -> float:
    port = free_port()
    server = multiprocessing.get_context("spawn").Process(target=serve_bare, args=(port,), daemon=True)
    server.start()
    try:
        wait_listening(port)
        seconds = drive(port, jobs, None, {})
    finally:
        server.terminate()
        server.join(10)
    return sum(len(job) for job in jobs) / seconds


def wait_listening(port: int) -> None:
    for _ in range(300):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)


@dataclass
class Round:
    """One saturation round: `serve` end to end, then the bare handler on the same mails."""

    moves: int
    seconds: float  # until every mail was applied
    end_to_end: float
    delivered: float
    raw: float
    cpu: dict[str, float]  # seconds per process (and the client), until every reply was delivered
    scheduled: dict[str, tuple[float, float]]  # seconds on a CPU and waiting for one, until applied


def saturation_round(pid: int, port: int, database_url: str, jobs: list[list[tuple[str, bytes]]], stored_before: int) -> Round:
    total = sum(len(job) for job in jobs)
    cpu_before, client_before = cpu_seconds(pid), time.process_time()
    scheduled_before = scheduling(pid)
    began = time.monotonic()
    drive(port, jobs, None, {})
    finished = wait_applied(database_url, stored_before + total)
    scheduled_after = scheduling(pid)
    wait_delivered(database_url)
    all_delivered = time.monotonic()
    cpu_after, client_after = cpu_seconds(pid), time.process_time()
    spent = {"client": client_after - client_before}
    spent.update({name: seconds - cpu_before.get(name, 0.0) for name, seconds in cpu_after.items()})
    return Round(
        moves=total, seconds=finished - began, end_to_end=total / (finished - began),
        delivered=total / (all_delivered - began), raw=bare_intake(jobs), cpu=spent,
        scheduled={name: (after[0] - scheduled_before[name][0], after[1] - scheduled_before[name][1])
                   for name, after in scheduled_after.items()},
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--rate", type=float, default=200.0)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--bot-boards", type=int, default=0,
                        help="boards on which the strong bot is to move: serve's bots process thinks all along")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="pbmserv-bench-"))
    database_url = f"sqlite:///{workdir / 'bench.db'}"
    print(f"preparing {args.games} boards of majority {OPTIONS} for {PLAYERS} players"
          f" and {args.bot_boards} with the strong bot to move, in {workdir}")
    prepare(database_url, args.games, args.bot_boards)
    scripts = move_scripts(args.games)
    warm_up_moves, saturation_moves = 2, 40  # per board
    fixed_moves = int(args.rate * args.seconds / args.games) + 1
    needed = warm_up_moves + args.rounds * saturation_moves + fixed_moves
    assert needed <= min(len(s) for s in scripts), "not enough moves per board"

    port = free_port()
    env = dict(os.environ, PBMSERV_DATABASE_URL=database_url, PBMSERV_LISTEN=f"127.0.0.1:{port}", PBMSERV_WEB_LISTEN="",
               PBMSERV_MAIL_BACKEND="maildir", PBMSERV_MAILDIR=str(workdir / "outbox"),
               PBMSERV_REPLIES_PER_HOUR="1000000", PBMSERV_ERROR_REPLIES_PER_HOUR="1000000",
               # far above what the run sends one player (some 700 board mails): the cost of the
               # board mails' cap as real play pays it, the tally standing for the count
               PBMSERV_BOARD_MAILS_PER_HOUR="1000000", PBMSERV_BOARD_BYTES_PER_HOUR="100000000000",
               PBMSERV_SENDER_MAILS_PER_HOUR="0", PBMSERV_SENDER_MIB_PER_HOUR="0")  # players at machine speed
    server = subprocess.Popen([Path(sys.executable).parent / "pbmserv", "serve"], env=env,
                              stdout=open(workdir / "serve.log", "wb"), stderr=subprocess.STDOUT)
    try:
        wait_listening(port)
        engine = create_engine(database_url)
        with Session(engine) as session:
            stored_before = session.scalar(select(func.count(InboundMail.id))) or 0
        engine.dispose()

        # a server that has run a while: its processes have imported what
        # they use and remember every player's password check
        warm_up = split(scripts, args.sessions, slice(0, warm_up_moves))
        drive(port, warm_up, None, {})
        stored_before += sum(len(job) for job in warm_up)
        wait_applied(database_url, stored_before)

        print(f"saturation: {args.rounds} rounds of {args.games * saturation_moves} moves over {args.sessions} sessions,"
              " each followed by the bare handler on the same mails")
        rounds = []
        for number in range(args.rounds):
            first = warm_up_moves + number * saturation_moves
            jobs = split(scripts, args.sessions, slice(first, first + saturation_moves))
            rounds.append(saturation_round(server.pid, port, database_url, jobs, stored_before))
            stored_before += rounds[-1].moves
            line = rounds[-1]
            print(f"  round {number + 1}: end-to-end {line.end_to_end:6.1f} moves/s, raw intake {line.raw:6.1f} msg/s,"
                  f" ratio {line.end_to_end / line.raw:.2f}; delivered {line.delivered:6.1f} moves/s")
        ratios = [line.end_to_end / line.raw for line in rounds]
        print(f"  end-to-end  {statistics.median(line.end_to_end for line in rounds):8.1f} moves/s (median;"
              " accepted -> applied -> replies in the outbox)")
        print(f"  raw intake  {statistics.median(line.raw for line in rounds):8.1f} msg/s (median; bare aiosmtpd handler, parse and discard)")
        print(f"  ratio       {statistics.median(ratios):8.2f} (median of the rounds' ratios)")
        moves = sum(line.moves for line in rounds)
        spent = {name: sum(line.cpu[name] for line in rounds) for name in rounds[0].cpu}
        print("  CPU per move, until every reply was delivered: "
              + ", ".join(f"{name} {1000 * seconds / moves:.2f} ms" for name, seconds in spent.items()))
        busy = sum(line.seconds for line in rounds)
        print("  share of the end-to-end time each process spent on a CPU / waiting for one: " + ", ".join(
            f"{name} {sum(line.scheduled[name][0] for line in rounds) / busy:.0%}"
            f" / {sum(line.scheduled[name][1] for line in rounds) / busy:.0%}" for name in rounds[0].scheduled))
        cores = len(os.sched_getaffinity(0))
        ceiling = cores * moves / sum(spent.values())
        print(f"  ceiling     {ceiling:8.1f} moves/s (that CPU spread evenly over {cores} cores;"
              f" ratio at most {ceiling / statistics.median(line.raw for line in rounds):.2f})")

        first = warm_up_moves + args.rounds * saturation_moves
        jobs = split(scripts, args.sessions, slice(first, first + fixed_moves))
        total = sum(len(job) for job in jobs)
        sent_at: dict[str, float] = {}
        acknowledged: list[float] = []
        seconds = drive(port, jobs, args.rate, sent_at, acknowledged)
        wait_applied(database_url, stored_before + total)
        print(f"fixed rate: {total} moves at {args.rate:.0f}/s offered, {total / seconds:.1f}/s sent")
        wait_delivered(database_url)
        replied = delivered(workdir / "outbox", sent_at)
        assert len(replied) == total, f"{total - len(replied)} moves without a reply in the maildir"
        row = "p50 {:6.1f} ms   p99 {:6.1f} ms   max {:6.1f} ms"
        print("  latency until the 250:         " + row.format(*percentiles(acknowledged)))
        print("  latency until processed:       " + row.format(*percentiles(latencies(database_url, sent_at))))
        print("  latency until reply delivered: " + row.format(*percentiles(replied)))
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
