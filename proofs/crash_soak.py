"""Crash soak against a real `pbmserv serve` (issue 21, items 1 and 8).

50 boards of majority (accounts signed up and boards challenged by mail),
then 5,000 legal moves (each drawn from the game's legal_moves on a mirror
of its board kept here) over SMTP from 10 clients that retry like an MTA
(the same bytes until a 250), while serve, its worker and its deliverer
are SIGKILLed at random, at least five times each (serve is restarted
here; serve restarts the others), and serve once more after the last move.
Goals: accepted mails lost 0, moves applied twice 0, replies never
delivered 0; every reply delivered within 10 s of the last restart.
Figures also: replies delivered more than once (and why), the longest a
reply waited in the outbox, moves/s.

With --pg-restart, instead: serve on a private throwaway PostgreSQL
cluster (never the shared one), stopped for some seconds and started again
under load. Goals: intake answers 451 while it is down, nothing lost or
applied twice, every reply delivered, processing resumes by itself.

    .venv/bin/python proofs/crash_soak.py [--short] [--database sqlite|postgresql] [--pg-restart]

A progress bar runs on stderr; the figures come last on stdout. Exit
status 0 only when every goal holds.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from proofs.report import progress, show_goals  # noqa: E402
from proofs.soak_parts import SHARED_POSTGRESQL, Database, Delivered, PrivateCluster, Serve  # noqa: E402
from proofs.soak_play import Soak  # noqa: E402

RESTART_GOAL_SECONDS = 10.0
SETTLE_SECONDS = 180.0
#: the longest the worker and the deliverer are given to catch up before the last act
DRAIN_SECONDS = 900.0



def killing(serve: Serve, kills: int, rng: random.Random, events: list[tuple[float, str]]) -> Callable[[Soak], None]:
    """SIGKILL serve, its worker and its deliverer `kills` times each, at random points of the moves."""
    plan = [role for role in ("serve", "worker", "deliverer") for _ in range(kills)]
    rng.shuffle(plan)
    points = sorted(rng.uniform(0.03, 0.97) for _ in plan)
    killed: dict[str, int | None] = {"worker": None, "deliverer": None}

    def disturb(soak: Soak) -> None:
        for point, role in zip(points, plan):
            while soak.accepted < point * soak.target and not soak.done.is_set():
                time.sleep(0.01)
            if role == "serve":
                serve.kill()
                events.append((time.monotonic(), "serve killed"))
                serve.start()
                events.append((time.monotonic(), "serve restarted"))
                killed.update(worker=None, deliverer=None)
                continue
            deadline = time.monotonic() + 30
            while (pid := serve.child_pid(role)) in (None, killed[role]) and time.monotonic() < deadline:
                time.sleep(0.05)  # serve has not started the one after the last killed yet
            if pid is None or pid == killed[role]:
                raise RuntimeError(f"serve did not restart its {role}")
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                raise RuntimeError(f"serve's {role} {pid} was gone before it was killed") from None
            killed[role] = pid
            events.append((time.monotonic(), f"{role} killed"))

    return disturb


def stop_deliverer(serve: Serve) -> None:
    """Stop the deliverer (SIGSTOP: a deliverer hung on a relay, say): the
    worker goes on writing replies claimed for it, which it never sends."""
    pid = serve.child_pid("deliverer")
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)


def restarting(cluster: PrivateCluster, down_seconds: float, events: list[tuple[float, str]]) -> Callable[[Soak], None]:
    def disturb(soak: Soak) -> None:
        while soak.accepted < 0.3 * soak.target:
            time.sleep(0.01)
        cluster.stop()
        events.append((time.monotonic(), "postgresql stopped"))
        time.sleep(down_seconds)
        cluster.start()
        events.append((time.monotonic(), "postgresql started"))
        done_then = soak.processed()
        while soak.processed() <= done_then and not soak.done.is_set():
            time.sleep(0.05)
        events.append((time.monotonic(), "processing resumed"))

    return disturb


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--short", action="store_true", help="6 boards, 240 moves, one kill of each kind (for CI)")
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--postgresql", default=SHARED_POSTGRESQL, metavar="URL",
                        help=f"the PostgreSQL server to make the proof's database in (default {SHARED_POSTGRESQL})")
    parser.add_argument("--pg-restart", action="store_true", help="stop and start a private PostgreSQL under load instead")
    parser.add_argument("--boards", type=int, help="boards (default 50; 6 with --short)")
    parser.add_argument("--moves", type=int, help="moves in all (default 5000; 240 with --short)")
    parser.add_argument("--kills", type=int, help="kills of each kind (default 5; 1 with --short)")
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--no-time-goal", action="store_true",
                        help="print the times after the last restart without judging them (the test suite: no timed assertions)")
    args = parser.parse_args()
    boards = args.boards or (6 if args.short else 50)
    moves = args.moves or (240 if args.short else 5000)
    kills = args.kills if args.kills is not None else (1 if args.short else 5)
    rng = random.Random(args.seed)
    workdir = Path(tempfile.mkdtemp(prefix="pbmserv-crash-soak-"))
    cluster = PrivateCluster() if args.pg_restart else None
    database: Database | None = None
    events: list[tuple[float, str]] = []
    try:
        if cluster is not None:
            cluster.start()
            database = Database("postgresql", workdir, cluster.url)
        else:
            database = Database(args.database, workdir, args.postgresql)
        serve = Serve(workdir, database.url)
        serve.start()
        what = "private PostgreSQL restarted" if cluster else f"{args.database}, {kills} kills of each kind"
        print(f"serve on 127.0.0.1:{serve.port} in {workdir}; {boards} boards, {moves} moves, {what}", flush=True)
        soak = Soak(serve.port, database, boards, moves, rng)
        began = time.monotonic()
        soak.set_up(lambda fraction, text: progress(fraction, f"setting up: {text}"), serve.maildir)
        print(f"set up {boards} boards and their {2 * boards} players by mail in {time.monotonic() - began:.1f} s", flush=True)
        disturb = restarting(cluster, 5.0, events) if cluster else killing(serve, kills, rng, events)
        delivered = Delivered(serve.maildir)
        recovered: float | None = None
        last_act = 0 if cluster else boards  # the last move on each board: sent while the deliverer is stopped
        played = soak.play(disturb, progress, moves - last_act)
        if cluster is None:  # the recovery the goal is about: serve killed while its deliverer holds claims
            soak.settle(delivered, DRAIN_SECONDS, lambda text: progress(1.0, f"catching up: {text}"))
            stop_deliverer(serve)
            soak.play(lambda soak: None, progress, moves)
            while not soak.all_processed():
                time.sleep(0.05)
            serve.kill()
            events.append((time.monotonic(), "serve killed"))
            soak.left = soak.replies() - set(delivered.scan())
            serve.start()
            events.append((time.monotonic(), "serve restarted"))
            recovered = soak.settle(delivered, SETTLE_SECONDS, lambda text: progress(1.0, text), soak.left)
            soak.recovery_cpu = serve.cpu_seconds()
        settled = soak.settle(delivered, SETTLE_SECONDS, lambda text: progress(1.0, text))
        sys.stderr.write("\n")
        serve_exit = serve.stop()
        return report(args, soak, serve, delivered, (moves - last_act, played), settled, recovered, events, serve_exit, kills)
    finally:
        if database is not None:
            database.drop()
        if cluster is not None:
            cluster.remove()
        shutil.rmtree(workdir, ignore_errors=True)


def report(
    args: argparse.Namespace, soak: Soak, serve: Serve, delivered: Delivered, played: tuple[int, float], settled: float | None,
    recovered: float | None, events: list[tuple[float, str]], serve_exit: int, kills: int,
) -> int:
    check = soak.check(delivered)
    last_restart = max(at for at, what in events if what.endswith(("restarted", "started")))
    last_kill = max((at for at, what in events if what.endswith(("killed", "stopped"))), default=last_restart)
    since_restart = settled - last_restart if settled is not None else None
    claims_back = recovered - last_restart if recovered is not None else None
    kinds = Counter(what for _, what in events)
    moves, seconds = played
    rate = moves / seconds
    print(f"\nmoves: {soak.total} on {len(soak.boards)} boards of {soak.game_name}; {moves} of them accepted in {seconds:.1f} s"
          f" with the {'restart' if args.pg_restart else 'kills and restarts'}: {rate:.1f} moves/s")
    if soak.processed_at is not None:
        processing = soak.processed_at - soak.began
        print(f"those processed {processing:.1f} s after the first was sent: {soak.processed_moves / processing:.1f} moves/s processed")
    print("events: " + ", ".join(f"{what} x{count}" for what, count in sorted(kinds.items())))
    print("SMTP answers to the clients' tries: " + ", ".join(f"{code} x{count}" for code, count in soak.answers.most_common()))
    print(f"mails accepted (250): {check.accepted}; processed: {check.processed}; failed: {check.failed}")
    print(f"moves applied: {check.applied} of {soak.total} sent; board moves unlike the mirror's: {check.unlike}")
    print(f"outbox: {check.replies} replies ({check.error_replies} error replies), {check.dead} dead letters;"
          f" delivered: {check.delivered_distinct} distinct, {check.duplicates} more than once")
    released = serve.logged(r"released \d+ claims")
    print(f"  claims released by a new worker: {released} times;"
          f" outcomes handed back again instead of sending again: {serve.logged('handing their outcomes back again')} times")
    waits = check.waits
    if waits:
        p99 = sorted(waits)[int(0.99 * len(waits))]
        print(f"outbox wait (created to sent; not the last act's): p50 {statistics.median(waits):.2f} s, p99 {p99:.2f} s,"
              f" longest {max(waits):.2f} s")
    settle_text = f"{since_restart:.1f} s" if since_restart is not None else f"not within {SETTLE_SECONDS:g} s"
    print(f"every reply delivered {settle_text} after the last restart"
          f" ({settled - last_kill:.1f} s after the last {'stop' if args.pg_restart else 'kill'})" if settled is not None else "")
    goals = {
        f"accepted mails lost: {check.accepted - check.processed}": check.accepted == check.processed,
        f"mails failed: {check.failed}": check.failed == 0,
        f"moves applied twice: {check.twice}; moves unlike the mirror's: {check.unlike}": check.twice == 0 and check.unlike == 0,
        f"moves applied {check.applied} = moves sent {soak.total}": check.applied == soak.total,
        f"replies never delivered: {check.undelivered}": check.undelivered == 0,
        f"every reply delivered{'' if args.pg_restart else f' within {RESTART_GOAL_SECONDS:g} s'} after the last restart: {settle_text}":
            since_restart is not None and (since_restart <= RESTART_GOAL_SECONDS or args.no_time_goal or args.pg_restart),
        f"serve stopped cleanly: exit code {serve_exit}": serve_exit == 0,
    }
    if args.pg_restart:
        goals[f"intake answered 451 while PostgreSQL was down: {soak.answers['451']} times"] = soak.answers["451"] > 0
        resumed = [at for at, what in events if what == "processing resumed"]
        started = [at for at, what in events if what == "postgresql started"]
        if resumed and started:
            print(f"processing resumed {resumed[0] - started[0]:.1f} s after PostgreSQL was back")
        goals["processing resumed by itself"] = bool(resumed)
    else:
        left = f"{claims_back:.1f} s" if claims_back is not None else f"not within {SETTLE_SECONDS:g} s"
        first = f"{soak.first_of_left - last_restart:.1f} s" if soak.first_of_left is not None else "never"
        print(f"replies to the last move on each board, claimed for a stopped deliverer when serve was killed: {len(soak.left)};"
              f" the first delivered {first}, all {left} after its restart; serve and its children used"
              f" {soak.recovery_cpu:.2f} s of CPU from their start until then")
        goals[f"those replies delivered within {RESTART_GOAL_SECONDS:g} s of the restart: {left}"] = (
            claims_back is not None and (claims_back <= RESTART_GOAL_SECONDS or args.no_time_goal)
        )
        for kind in ("serve", "worker", "deliverer"):
            goals[f"{kind} SIGKILLed {kinds[f'{kind} killed']} times >= {kills}"] = kinds[f"{kind} killed"] >= kills
    verdict = show_goals(goals)
    print(f"lost {check.accepted - check.processed}, applied twice {check.twice}, never delivered {check.undelivered},"
          f" delivered twice {check.duplicates}, all delivered {settle_text} after the last restart,"
          f" {rate:.1f} moves/s; {verdict}")
    return 0 if all(goals.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
