"""Bad mail at volume against a real `pbmserv serve` (issue 21, items 3
and 8): generated hostile mails (random bytes, truncated and nested MIME,
absurd charsets, huge headers and bodies, NUL bytes, `multiple` with
hundreds of lines, wrong passwords for the real accounts, header
injection in every field, automatic mail and the hostile corpus) sent
through SMTP as fast as serve takes them, and a share through `pbmserv
receive`, while an ordinary player sends a legal move every half second
on a real board. serve relays every mail it sends to this script, which
notes when each arrives.

    .venv/bin/python proofs/bad_mail_flood.py [--short] [--database sqlite|postgresql]

Goals: no unhandled exception in serve's log, no mail failed but for the
documented bounds on reading a mail ("unreadable"), serve and its
children never exit or restart (and serve stops with 0 on SIGTERM), no
reply to automatic mail, no mail to an address an injection named, no
"database is locked" in the log, every move answered, and the player's
p99 from a move's 250 to its reply relayed under 1 s. Printed besides:
peak memory, mails/s, and the longest wait of any reply in the outbox.
A progress bar runs on stderr; the figures come last on stdout.
"""

from __future__ import annotations

import argparse
import multiprocessing
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from proofs import flood_serve  # noqa: E402
from proofs.flood_mails import PLAYERS, VICTIM_DOMAIN, FloodMails  # noqa: E402
from proofs.flood_traffic import Answers, Player, Relayed, flood, relay, relayed  # noqa: E402
from proofs.report import percentile, progress, show_goals  # noqa: E402
from tests.smtp_helpers import free_port  # noqa: E402

P99_GOAL_SECONDS = 1.0
#: the address the hostile corpus's header injections name
INJECTED_IN_CORPUS = "victim-inject@outside.example"
PASSWORDS = {userid: f"{userid}-plays-on" for userid in PLAYERS}





class Receives:
    """A share of the bad mail piped into `pbmserv receive`, one after another, in a thread."""

    def __init__(self, count: int, env: dict[str, str], seed: int, max_bytes: int):
        self.count, self.env = count, env
        self.mails = FloodMails(seed, max_bytes)
        self.exits: Counter[int] = Counter()
        self.seconds: list[float] = []
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        for _ in range(self.count):
            mail = self.mails.next()
            while "\0" in mail.envelope_sender:  # no MTA passes a NUL in an argument; SMTP intake refuses it
                mail = self.mails.next()
            began = time.monotonic()
            done = subprocess.run([flood_serve.PBMSERV, "receive", "--sender", mail.envelope_sender], input=mail.raw,
                                  env=self.env, capture_output=True, timeout=600)
            self.seconds.append(time.monotonic() - began)
            self.exits[done.returncode] += 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--short", action="store_true", help="600 mails, 3 more through receive (for CI)")
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--mails", type=int, help="bad mails through SMTP (default 100,000; 600 with --short)")
    parser.add_argument("--receive", type=int, help="bad mails through `pbmserv receive` (default 2,000; 3 with --short)")
    parser.add_argument("--sessions", type=int, default=8, help="the flood's SMTP sessions at once (default 8)")
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--keep", action="store_true", help="keep the work folder (serve's log, the relayed mails' log)")
    parser.add_argument("--no-latency-goal", action="store_true",
                        help="print the latency figures without judging them (the test suite: no timed assertions beside other work)")
    args = parser.parse_args()
    mails = args.mails if args.mails is not None else 600 if args.short else 100_000
    receives = args.receive if args.receive is not None else 3 if args.short else 2000
    max_bytes = 256 * 1024

    workdir = Path(tempfile.mkdtemp(prefix="pbmserv-flood-"))
    context = multiprocessing.get_context("spawn")
    relay_port = context.Value("i", 0)
    relay_log = workdir / "relayed.tsv"
    relay_process = context.Process(target=relay, args=(relay_port, relay_log), daemon=True)
    relay_process.start()
    while relay_port.value == 0:
        time.sleep(0.05)
    url = flood_serve.database_url(args.database, workdir)
    port = free_port()
    env = flood_serve.environment(url, workdir, port, relay_port.value)
    log_path = workdir / "serve.log"
    print(f"serve on 127.0.0.1:{port}, {args.database}, in {workdir}; {mails} bad mails over {args.sessions} SMTP sessions,"
          f" {receives} through receive; production settings (argon2, reply caps, limits)", flush=True)
    server = flood_serve.start(env, log_path, port)
    try:
        return run(args, mails, receives, max_bytes, workdir, url, env, port, server, log_path, relay_log)
    finally:
        if server.poll() is None:
            server.kill()
        relay_process.kill()
        flood_serve.drop_database(url)
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


def run(args: argparse.Namespace, mails: int, receives: int, max_bytes: int, workdir: Path, url: str, env: dict[str, str],
        port: int, server: subprocess.Popen[bytes], log_path: Path, relay_log: Path) -> int:
    player = Player(port, PASSWORDS)
    for userid, password in PASSWORDS.items():
        player.send(userid, f"signup {userid} {password}", f"signup-{userid}@player.example")
    deadline = time.monotonic() + 120
    welcomes: dict[str, str] = {}
    while len(welcomes) < len(PASSWORDS):  # each player confirms the address by replying to the welcome
        assert time.monotonic() < deadline, "the signups were never answered:\n" + log_path.read_text()[-3000:]
        time.sleep(0.2)
        welcomes = {one.subject.split()[1]: one.subject for one in relayed(relay_log) if one.subject.startswith("confirm ")}
    for userid, subject in welcomes.items():
        player.send(userid, f"Re: {subject}", f"confirm-{userid}@player.example")
    player.challenge()
    while not any(one.subject == "Majorities Board 101" for one in relayed(relay_log)):
        assert time.monotonic() < deadline, "the board was never made:\n" + log_path.read_text()[-3000:]
        time.sleep(0.2)
    for _ in range(4):  # warm: the players' passwords checked once, the board's code paths run
        player.next_move()
        time.sleep(player.every)
    warm = set(player.moves)
    watch = flood_serve.Watch(server.pid)
    watch.sample()
    children_at_start = set(flood_serve.descendants(server.pid))

    context = multiprocessing.get_context("spawn")
    sent, results = context.Value("i", 0), context.Queue()
    flooding = context.Process(target=flood, args=(port, mails, args.sessions, args.seed, max_bytes, sent, results))
    piped = Receives(receives, env, args.seed + 1, max_bytes)
    began = time.monotonic()
    flooding.start()
    piped.thread.start()
    next_move = time.monotonic()
    while flooding.is_alive() and results.empty() or piped.thread.is_alive():
        if time.monotonic() >= next_move and (flooding.is_alive() and results.empty()):
            next_move += player.every
            player.next_move()
        watch.sample()
        progress(sent.value / mails, f"flood {sent.value}/{mails}, receive {len(piped.seconds)}/{receives},"
                 f" moves {len(player.moves) - len(warm)}")
        time.sleep(max(0.0, min(0.1, next_move - time.monotonic())))
    answers: Answers = results.get(timeout=60)
    flooding.join(30)
    flood_seconds = time.monotonic() - began
    during = [mid for mid in player.moves if mid not in warm]

    sys.stderr.write("\n")
    drain_deadline = time.monotonic() + (3600 if not args.short else 300)
    inbound_left, outbox_left = flood_serve.pending(url)
    quiet = 0  # checks in a row with nothing pending (on SQLite, the spool is admitted at every batch)
    while time.monotonic() < drain_deadline and quiet < 3:
        watch.sample()
        inbound_left, outbox_left = flood_serve.pending(url)
        quiet = quiet + 1 if inbound_left == outbox_left == 0 else 0
        progress(1.0, f"draining: inbound pending {inbound_left}, outbox pending {outbox_left}")
        time.sleep(1.0)
    processed_seconds = time.monotonic() - began
    sys.stderr.write("\n")
    children_at_end = set(flood_serve.descendants(server.pid))
    server.terminate()
    serve_exit = server.wait(timeout=60)
    return report(args, mails, receives, url, log_path, relay_log, answers, piped, player, during, watch,
                  children_at_start, children_at_end, serve_exit, flood_seconds, processed_seconds, inbound_left, outbox_left)


def report(args: argparse.Namespace, mails: int, receives: int, url: str, log_path: Path, relay_log: Path, answers: Answers,
           piped: Receives, player: Player, during: list[str], watch: flood_serve.Watch, children_at_start: set[int],
           children_at_end: set[int], serve_exit: int, flood_seconds: float, processed_seconds: float,
           inbound_left: int, outbox_left: int) -> int:
    tally = flood_serve.tally(url)
    log = log_path.read_text(errors="replace")
    mails_out = relayed(relay_log)
    by_reply_to: dict[str, list[Relayed]] = {}
    for one in mails_out:
        by_reply_to.setdefault(one.in_reply_to, []).append(one)
    latencies, processing, sending, unanswered = [], [], [], 0
    for message_id in during:
        mover, at = player.moves[message_id]
        answer = [one for one in by_reply_to.get(message_id, []) if mover in one.recipients]
        if answer:
            latencies.append(answer[0].at - at)
            if answer[0].message_id in tally.created:  # the reply was written then: the move's wait splits there
                written = flood_serve.epoch(tally.created[answer[0].message_id])
                processing.append(written - at)
                sending.append(answer[0].at - written)
        else:
            unanswered += 1
    player_errors = [one.subject for one in mails_out
                     if set(one.recipients) & set(PLAYERS.values()) and "Error" in one.subject and one.in_reply_to.startswith("<move-")]
    to_automatic = sum(1 for one in mails_out if one.in_reply_to.startswith("<auto-"))
    injected = sum(1 for one in mails_out if any(r.endswith(VICTIM_DOMAIN) or r == INJECTED_IN_CORPUS for r in one.recipients) or one.copies)
    arrived = {one.message_id: one.at for one in mails_out}
    waits = [arrived[mid] - flood_serve.epoch(made) if mid in arrived else time.time() - flood_serve.epoch(made)
             for mid, made in tally.created.items()]
    failed_bugs = sum(count for reason, count in tally.failed_reasons.items() if reason != "unreadable")
    restarts = len(children_at_end - children_at_start) + log.count("died (exit code")
    tracebacks, locked = log.count("Traceback"), log.count("database is locked")
    stored = sum(tally.inbound.values())

    print(f"\nflood: {mails} bad mails over SMTP in {flood_seconds:.0f} s ({mails / flood_seconds:.0f} mails/s sent);"
          f" answers {dict(answers.codes.most_common())}; {answers.reconnects} connections ended by the server")
    for kind, codes in sorted(answers.by_kind.items()):
        print(f"  {kind:<28} {sum(codes.values()):6d}  {dict(codes.most_common())}")
    receive_mean = statistics.mean(piped.seconds) if piped.seconds else float("nan")
    print(f"receive: {len(piped.seconds)} of {receives} bad mails piped in, exits {dict(piped.exits)},"
          f" {receive_mean:.2f} s each (mean), {max(piped.seconds, default=0):.2f} s at most")
    print(f"inbound mails stored: {stored}, {dict(tally.inbound)}; failed by reason: {dict(tally.failed_reasons)}")
    print(f"processed in {processed_seconds:.0f} s from the flood's start: {stored / processed_seconds:.0f} mails/s stored and"
          f" processed; left at the end: {inbound_left} inbound, {outbox_left} outbox pending")
    print(f"outbox: {dict(tally.outbox)}; relayed {len(mails_out)} mails; longest wait of a reply in the outbox"
          f" {max(waits, default=0):.1f} s, p99 {percentile(waits, 0.99):.1f} s")
    print(f"serve's peak memory: {watch.peak_total_kib / 1024:.0f} MiB for serve and its children together; each: "
          + ", ".join(f"{kib / 1024:.0f} MiB" for kib in sorted(watch.peak_each_kib.values(), reverse=True)))
    print(f"serve's log: {tracebacks} tracebacks, {locked} 'database is locked', {log.count(' ERROR ')} ERROR lines;"
          f" children restarted {restarts}; serve's exit {serve_exit}")
    p50, p99 = percentile(latencies, 0.5), percentile(latencies, 0.99)
    print(f"player: {len(during)} moves during the flood, one each {player.every:g} s; 250 to reply relayed p50 {p50:.2f} s,"
          f" p99 {p99:.2f} s, max {max(latencies, default=float('nan')):.2f} s; SMTP refusals {len(player.refused)}")
    print(f"  of which 250 to reply written p50 {percentile(processing, 0.5):.2f} s, p99 {percentile(processing, 0.99):.2f} s;"
          f" written to relayed p50 {percentile(sending, 0.5):.2f} s, p99 {percentile(sending, 0.99):.2f} s")
    goals = {
        f"unhandled exceptions (tracebacks) in serve's log: {tracebacks}": tracebacks == 0,
        f"mails failed but for the bounds on reading a mail: {failed_bugs}": failed_bugs == 0,
        f"serve's children restarted: {restarts}; serve's exit on SIGTERM {serve_exit}": restarts == 0 and serve_exit == 0,
        f"replies to automatic mail: {to_automatic}": to_automatic == 0,
        f"mails to an address an injection named, or with Cc/Bcc: {injected}": injected == 0,
        f"'database is locked' in serve's log: {locked}": locked == 0,
        f"everything processed and delivered: {inbound_left} inbound, {outbox_left} outbox left": inbound_left == outbox_left == 0,
        f"player's moves unanswered {unanswered}, refused {len(player.refused)}, answered with an error {len(player_errors)}":
            unanswered == 0 and not player.refused and not player_errors,
        f"player's p99 {p99:.2f} s < {P99_GOAL_SECONDS:g} s": p99 < P99_GOAL_SECONDS or args.no_latency_goal,
    }
    verdict = show_goals(goals)
    print(f"{args.database}: {stored / processed_seconds:.0f} mails/s; player p50 {p50:.2f} s, p99 {p99:.2f} s;"
          f" peak RSS {watch.peak_total_kib / 1024:.0f} MiB; longest outbox wait {max(waits, default=0):.1f} s;"
          f" {verdict}")
    return 0 if all(goals.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
