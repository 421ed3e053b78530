"""Two `pbmserv serve` processes on one PostgreSQL database (issue 21,
item 2), each on its own loopback port with its own data dir.

1. Races: on every board the player to move sends two different legal
   moves for the same move number (`#n`) at once, one to each server.
   Goals: exactly one applied per move number, the other refused with an
   error mail that says why, no mail lost, every board's moves replaying
   to its stored state (`pbmserv-admin games replay --all`).
2. A kill: in the middle of one round of races, serve A is SIGKILLed with
   every process it started (as when its machine dies); the clients, which
   deliver like an MTA with two MX hosts (the same bytes until a 250, the
   next host after a failure), go on with B. Figure: seconds from the kill
   until every mail pending in the database at the kill is processed and
   every reply A had claimed and not yet sent is delivered (goal <= 5 s);
   0 lost.
3. How far one worker carries: moves/s and CPU per move of one serve's
   worker working a backlog of moves, on PostgreSQL and SQLite; without
   --short also two serves sharing such a backlog on PostgreSQL.

    .venv/bin/python proofs/two_serves.py [--short] [--database sqlite|postgresql|both]

Parts 1 and 2 run on PostgreSQL (a new database on --postgres, dropped
at the end); `--database` chooses where part 3 runs. A progress bar runs
on stderr; the figures come last on stdout. Exit status 0 only when every
goal holds.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import signal
import smtplib
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path

from sqlalchemy import Engine, create_engine, text

from pbmserv.store.urls import normalise_url

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from proofs.report import show_goals  # noqa: E402
from proofs.two_serves_kit import (  # noqa: E402
    BIN,
    GAME,
    SERVER,
    Delivered,
    Mirror,
    RelaySink,
    Serve,
    cpu_seconds,
    deliver,
    make_mail,
    open_boards,
    password,
    progress,
    statuses,
    wait_for,
)

RECOVERY_GOAL_SECONDS = 5.0


@dataclass
class Race:
    board: int
    number: int  # the move number both mails guard
    moves: tuple[str, str]  # sent to A, to B
    message_ids: tuple[str, str]


@dataclass
class Recovery:
    """What was waiting at the kill, and when the survivor had done it all."""

    killed_at: float = 0.0
    pending_mails: int = 0
    claimed_by_the_killed: int = 0
    seconds: float | None = None
    #: seconds until its mails were processed and its claims taken over (then sent in turn with the survivor's own)
    taken_up: float | None = None
    left: str = ""


def main() -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # the servers started are stopped, the databases dropped
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--short", action="store_true", help="few boards and moves (for CI)")
    parser.add_argument("--database", choices=("sqlite", "postgresql", "both"), default="both", help="where part 3 runs")
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432", help="the PostgreSQL server")
    parser.add_argument("--boards", type=int, help="boards raced on (default 100; 8 with --short)")
    parser.add_argument("--rounds", type=int, help="races on each board (default 10; 4 with --short)")
    parser.add_argument("--rate-moves", type=int, help="moves in part 3 on each database (default 2000; 100 with --short)")
    parser.add_argument("--recovery-wait", type=float, default=60.0, help="seconds the proof waits for the survivor at most")
    parser.add_argument("--relay-delay", type=float, default=0.02, help="seconds the relay takes to accept a mail")
    parser.add_argument("--no-latency-goal", action="store_true", help="print the recovery time without judging it (CI)")
    args = parser.parse_args()
    boards = args.boards or (8 if args.short else 100)
    rounds = args.rounds or (4 if args.short else 10)
    rate_moves = args.rate_moves or (100 if args.short else 2000)
    workdir = Path(tempfile.mkdtemp(prefix="pbmserv-two-serves-"))
    databases: list[str] = []
    try:
        url = new_postgres_database(args.postgres, databases)
        print(f"two serves on {url.rpartition('/')[2]}, data dirs in {workdir}; {boards} boards, {rounds} races each", flush=True)
        goals, figures, recovery = race_and_kill(url, workdir, boards, rounds, args.recovery_wait, args.relay_delay)
        rates = []
        for kind in ("postgresql", "sqlite") if args.database == "both" else (args.database,):
            rate_url = new_postgres_database(args.postgres, databases) if kind == "postgresql" else f"sqlite:///{workdir / 'rate.db'}"
            rates.append(worker_rate(kind, rate_url, workdir, rate_moves))
            if kind == "postgresql" and not args.short:  # more serves give availability, not throughput (see the docs)
                rates.append(worker_rate(kind, new_postgres_database(args.postgres, databases), workdir, rate_moves, servers=2))
    finally:
        for name in databases:
            drop_postgres_database(args.postgres, name)
        shutil.rmtree(workdir, ignore_errors=True)
    sys.stderr.write("\n")
    print("\n".join(figures))
    print("how far one worker carries (a backlog of moves sent at once, one serve):")
    for line in rates:
        print(f"  {line}")
    recovered = recovery.left if recovery.seconds is None else f"in {recovery.seconds:.2f} s"
    goals[f"every mail and reply waiting at the kill done by the survivor within {RECOVERY_GOAL_SECONDS:g} s: {recovered}"] = (
        recovery.seconds is not None and (args.no_latency_goal or recovery.seconds <= RECOVERY_GOAL_SECONDS)
    )
    verdict = show_goals(goals)
    print(f"two serves: recovery after the kill {recovered}; {verdict}")
    return 0 if all(goals.values()) else 1


def race_and_kill(
    url: str, workdir: Path, boards: int, rounds: int, recovery_wait: float, relay_delay: float,
) -> tuple[dict[str, bool], list[str], Recovery]:
    relay = RelaySink(relay_delay).start()
    first, second = Serve("a", url, workdir, relay.port), Serve("b", url, workdir, relay.port)
    first.start()
    second.start()
    engine = create_engine(url)
    chance = random.Random(21)
    races: list[Race] = []
    tries: Counter[int] = Counter()
    recovery = Recovery()
    kill_round = max(1, rounds // 2)
    try:
        progress(0, "signing up and challenging")
        mirrors = open_boards(boards, [[first, second], [second, first]], engine, "p")
        for round_number in range(1, rounds + 1):
            progress((round_number - 1) / rounds, f"round {round_number} of races{' (A is killed in it)' if round_number == kill_round else ''}")
            playing = [mirror for mirror in mirrors if not mirror.over()]
            round_races = [race_for(mirror, chance) for mirror in playing]
            jobs = [(race, side) for race in round_races for side in (0, 1)]
            with ThreadPoolExecutor(32) as pool:
                futures = [pool.submit(send_side, race, side, mirrors_by_board(mirrors), first, second) for race, side in jobs]
                if round_number == kill_round:
                    kill_midway(futures, first, engine, recovery, recovery_wait)
                for future in futures:
                    tries[future.result()] += 1
            races += round_races
            message_ids = [message_id for race in round_races for message_id in race.message_ids]
            if not wait_for(partial(all_processed, engine, message_ids), 120, 0.1):
                break
            applied = moves_at(engine, [(race.board, race.number) for race in round_races])
            for race, mirror in zip(round_races, playing):
                if len(applied[(race.board, race.number)]) == 1 and applied[(race.board, race.number)][0] in race.moves:
                    mirror.play(applied[(race.board, race.number)][0])
        progress(1, "waiting for every reply to be delivered")
        wait_for(lambda: outbox_pending(engine) == 0, 600, 0.2)
        second_exit = second.stop()
    finally:
        first.stop()
        second.stop()
    replay = subprocess.run([BIN / "pbmserv-admin", "games", "replay", "--all", GAME], env=second.env, capture_output=True, text=True)
    relay.stop()
    goals, figures = judge(engine, races, relay.mails, boards * rounds)
    engine.dispose()
    replayed = replay.stdout.strip().splitlines()[-1] if replay.stdout.strip() else replay.stderr.strip()[-200:]
    goals[f"every board replays to its stored state: {replayed}"] = replay.returncode == 0
    goals[f"the survivor stopped cleanly on SIGTERM: exit code {second_exit}"] = second_exit == 0
    taken_over = sum(int(count) for count in re.findall(r"took over (\d+) outbox claims", second.log.read_text()))
    figures.append(f"claims of A taken over by B: {taken_over}")
    figures.insert(0, f"clients' tries until a 250: {dict(sorted(tries.items()))} (after the kill, A's tries fail and go to B)")
    figures.append(
        f"kill: A killed with all its processes in round {kill_round}; waiting then: {recovery.pending_mails} mails in the"
        f" database not yet processed (stored by A or B), {recovery.claimed_by_the_killed} replies claimed by A and not yet delivered;"
        f" B had processed those mails and taken over those claims after {recovery.taken_up or float('nan'):.2f} s"
    )
    return goals, figures, recovery


def mirrors_by_board(mirrors: list[Mirror]) -> dict[int, Mirror]:
    return {mirror.number: mirror for mirror in mirrors}


def race_for(mirror: Mirror, chance: random.Random) -> Race:
    number = mirror.played + 1
    moves = mirror.two_moves(chance)
    return Race(mirror.number, number, (moves[0], moves[1]),
                (f"<race-{mirror.number}-{number}-a@proof>", f"<race-{mirror.number}-{number}-b@proof>"))


def send_side(race: Race, side: int, mirrors: dict[int, Mirror], first: Serve, second: Serve) -> int:
    """One of the two racing mails, to A (side 0) or B (side 1) first; how many tries it took."""
    _, userid = mirrors[race.board].mover()
    subject = f"{GAME} move {race.board} {userid} {password(userid)} {race.moves[side]} #{race.number}"
    raw = make_mail(f"{userid}@example.org", subject, race.message_ids[side])
    routes = [first, second] if side == 0 else [second, first]
    return deliver(raw, f"{userid}@example.org", race.message_ids[side], routes).tries


def kill_midway(futures: list[Future[int]], victim: Serve, engine: Engine, recovery: Recovery, wait: float) -> None:
    """Once half the round's mails have their 250, SIGKILL the victim with
    its processes, note what waits in the database, and watch (in a
    thread) until the survivor has done all of it."""
    wait_for(lambda: sum(future.done() for future in futures) >= len(futures) // 2, 120, 0.005)
    victim.kill_all()
    recovery.killed_at = time.monotonic()
    with engine.connect() as connection:
        mails = connection.execute(text("SELECT id FROM inbound_mails WHERE status = 'pending'")).scalars().all()
        replies = connection.execute(text("SELECT id FROM outbox WHERE status = 'pending' AND claimed_by = :owner"),
                                     {"owner": victim.claim_owner()}).scalars().all()
    recovery.pending_mails, recovery.claimed_by_the_killed = len(mails), len(replies)

    def left() -> tuple[int, int]:
        with engine.connect() as connection:
            unprocessed = connection.execute(text("SELECT count(*) FROM inbound_mails WHERE status = 'pending' AND id = ANY(:ids)"),
                                             {"ids": list(mails)}).scalar_one()
            undelivered = connection.execute(text("SELECT count(*) FROM outbox WHERE status = 'pending' AND id = ANY(:ids)"),
                                             {"ids": list(replies)}).scalar_one()
            still_claimed = connection.execute(text("SELECT count(*) FROM outbox WHERE claimed_by = :owner AND id = ANY(:ids)"),
                                               {"owner": victim.claim_owner(), "ids": list(replies)}).scalar_one()
        if unprocessed == 0 and still_claimed == 0 and recovery.taken_up is None:
            recovery.taken_up = time.monotonic() - recovery.killed_at
        return unprocessed, undelivered

    def watch() -> None:
        if wait_for(lambda: left() == (0, 0), wait, 0.02):
            recovery.seconds = time.monotonic() - recovery.killed_at
        else:
            unprocessed, undelivered = left()
            recovery.left = f"after {wait:g} s still {unprocessed} mails unprocessed, {undelivered} replies undelivered"

    watcher = threading.Thread(target=watch)
    watcher.start()
    WATCHERS.append(watcher)


WATCHERS: list[threading.Thread] = []


def moves_at(engine: Engine, wanted: list[tuple[int, int]]) -> dict[tuple[int, int], list[str]]:
    """The move texts stored at each (board, move number)."""
    found: dict[tuple[int, int], list[str]] = defaultdict(list)
    with engine.connect() as connection:
        rows = connection.execute(text(
            "SELECT b.board, m.number, m.text FROM moves m JOIN boards b ON b.id = m.board_id WHERE b.game_type = :game"
        ), {"game": GAME}).all()
    keys = set(wanted)
    for row in rows:
        if (row.board, row.number) in keys:
            found[(row.board, row.number)].append(row.text)
    return found


def all_processed(engine: Engine, message_ids: list[str]) -> bool:
    found = statuses(engine, message_ids)
    return len(found) == len(message_ids) and all(status != "pending" for _, status in found.values())


def outbox_pending(engine: Engine) -> int:
    with engine.connect() as connection:
        return int(connection.execute(text("SELECT count(*) FROM outbox WHERE status = 'pending'")).scalar_one())


def judge(engine: Engine, races: list[Race], mails: list[Delivered], planned: int) -> tuple[dict[str, bool], list[str]]:
    """The goals of parts 1 and 2, and their figures."""
    for watcher in WATCHERS:
        watcher.join()
    message_ids = [message_id for race in races for message_id in race.message_ids]
    stored = statuses(engine, message_ids)
    applied = moves_at(engine, [(race.board, race.number) for race in races])
    answers: dict[str, list[Delivered]] = defaultdict(list)
    for mail in mails:
        answers[mail.answering].append(mail)
    with engine.connect() as connection:
        outbox = connection.execute(text("SELECT message_id, status FROM outbox")).all()
    one_applied = wrong_text = refused_clearly = 0
    for race in races:
        texts = applied.get((race.board, race.number), [])
        if len(texts) == 1:
            one_applied += 1
            if texts[0] not in race.moves:
                wrong_text += 1
            loser = race.message_ids[1 - race.moves.index(texts[0])] if texts[0] in race.moves else ""
            reason = f"The guard #{race.number} does not match"
            if any(mail.subject.endswith(f"Board {race.board} Error") and reason in mail.text for mail in answers.get(loser, [])):
                refused_clearly += 1
    status_count = Counter(status for _, status in stored.values())
    copies = Counter(mail.message_id for mail in mails)
    sent = [message_id for message_id, status in outbox if status == "sent"]
    never = [message_id for message_id in sent if copies[message_id] == 0]
    twice = sum(1 for message_id in sent if copies[message_id] > 1)
    goals = {
        f"races run {len(races)} of {planned} planned": len(races) == planned,
        f"exactly one move applied at each raced move number: {one_applied} of {len(races)}": one_applied == len(races),
        f"the move applied is one of the two sent: {one_applied - wrong_text} of {one_applied}": wrong_text == 0,
        f"the other refused with an error mail naming the guard: {refused_clearly} of {len(races)}": refused_clearly == len(races),
        f"raced mails stored and processed: {status_count.get('done', 0)} of {len(message_ids)} done"
        f" ({dict(status_count)})": status_count.get("done", 0) == len(message_ids),
        f"replies never delivered: {len(never)}; left unsent in the outbox: {len(outbox) - len(sent)}":
            not never and len(sent) == len(outbox),
    }
    figures = [f"races: {len(races)} move numbers raced on {len({race.board for race in races})} boards, {len(message_ids)} mails;"
               f" replies {len(outbox)}, delivered {sum(copies.values())} times ({twice} delivered more than once)"]
    return goals, figures


def worker_rate(kind: str, url: str, workdir: Path, moves: int, servers: int = 1) -> str:
    """Part 3: `servers` serves, boards opened, then `moves` move mails
    sent as fast as intake takes them (a board's mails to one server, in
    one session, in order); the moves/s over the middle 80% of the backlog,
    and the workers' CPU seconds per move."""
    label = kind if servers == 1 else f"{kind}, {servers} serves"
    serves = [Serve(f"rate-{kind}-{servers}-{number}", url, workdir).start() for number in range(servers)]
    engine = create_engine(url)
    chance = random.Random(3)
    boards = max(4, moves // 20)
    try:
        progress(0, f"part 3 on {label}: opening {boards} boards")
        mirrors = open_boards(boards, [serves], engine, f"r{servers}")
        mails: list[list[tuple[str, bytes, str]]] = [[] for _ in serves]
        while sum(len(each) for each in mails) < moves:
            for number, mirror in enumerate(mirrors):
                _, userid = mirror.mover()
                move = chance.choice(mirror.legal())
                message_id = f"<rate-{kind}-{servers}-{mirror.number}-{mirror.played + 1}@proof>"
                subject = f"{GAME} move {mirror.number} {userid} {password(userid)} {move} #{mirror.played + 1}"
                mails[number % servers].append((f"{userid}@example.org", make_mail(f"{userid}@example.org", subject, message_id), message_id))
                mirror.play(move)
        workers = [server.worker_pid() for server in serves]
        cpu_before = sum(cpu_seconds(worker) for worker in workers)
        progress(0.5, f"part 3 on {label}: {moves} moves")
        with ThreadPoolExecutor(servers) as pool:
            list(pool.map(send_in_one_session, serves, mails))
        message_ids = [message_id for each in mails for _, _, message_id in each]
        wait_for(partial(all_processed, engine, message_ids), 600, 0.2)
        cpu = sum(cpu_seconds(worker) for worker in workers) - cpu_before
        with engine.connect() as connection:
            times = sorted(as_time(row.processed_at) for row in connection.execute(text(
                "SELECT processed_at FROM inbound_mails WHERE message_id LIKE :like AND status = 'done'"
            ), {"like": f"<rate-{kind}-{servers}-%"}))
            applied = connection.execute(text("SELECT count(*) FROM moves")).scalar_one()
    finally:
        for server in serves:
            server.stop()
        engine.dispose()
    span = (times[len(times) * 9 // 10] - times[len(times) // 10]).total_seconds()
    rate = (len(times) * 8 // 10) / span if span > 0 else float("nan")
    return (f"{label}: {len(times)} of {len(message_ids)} moves done, {applied} applied; {rate:.0f} moves/s (middle 80%),"
            f" worker CPU {cpu / len(message_ids) * 1000:.1f} ms a move; at 20 moves per player a day: {rate * 86400 / 20:,.0f}"
            f" players (load average {os.getloadavg()[0]:.2f})")


def send_in_one_session(server: Serve, mails: list[tuple[str, bytes, str]]) -> None:
    with smtplib.SMTP("127.0.0.1", server.port, timeout=60) as client:
        for sender, raw, _ in mails:
            client.sendmail(sender, [SERVER], raw)


def as_time(value: datetime | str) -> datetime:
    """A time as the database gives it (SQLite, through plain SQL: text)."""
    return datetime.fromisoformat(value) if isinstance(value, str) else value


def new_postgres_database(server: str, made: list[str]) -> str:
    name = f"pbm_twoserves_{os.getpid()}_{len(made)}"
    admin = create_engine(normalise_url(f"{server}/postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    made.append(name)
    return normalise_url(f"{server}/{name}")


def drop_postgres_database(server: str, name: str) -> None:
    admin = create_engine(normalise_url(f"{server}/postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


if __name__ == "__main__":
    sys.exit(main())
