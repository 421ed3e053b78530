"""Strangers and forgers flooding the costliest commands while two players
play, through a real `pbmserv serve` on loopback (issue 35, item 2,
findings F1, F2 and F4).

Before `serve` starts, the set-up (in this process, on the same database)
signs alice and bob up, each confirming by reply, and makes the boards the
attack aims at: Majorities on the size-7 board after its first move (bob
places two stones: 6,670 legal moves to list) and Move In Synch, In
Opposition on 26x26 with 3,691 moves. Then `--senders` senders (50) send
`--rate` mails a second (30) between them, each mail a `multiple` of the
repros' commands, with no password:

- strangers (each an address of its own): 20 x `majorities moves N` (F1),
  or 10 x `synch show N#k` for k from 3,000 on (F4);
- one in five forges alice, envelope sender and From: 20 x `majorities
  moves N` (F2), so the forgers also spend alice's share of mail at SMTP;
- one in ten forges bob's From (its envelope is its own), with 10 wrong
  passwords for bob on the players' board (`majority move N bob guess
  a1`, F2's guessing: each costs an argon2id check).

Meanwhile alice and bob play Majority (`-size=12 -stones=60`, a new board
when one ends), a random legal move each, `--player-pause` after the
other's move is answered: alice replies to her board mail's reply address
(no password), bob sends the full command with his password. Measured per
move: from the SMTP 250 (the first attempt, if a 451 made it try again) to
the mover's board mail delivered into serve's maildir.

    .venv/bin/python proofs/forged_flood.py [--short] [--database sqlite|postgresql] [--no-latency-goal]
        [--seconds S] [--senders N] [--rate R] [--player-pause S]

Goals: alice's reply-address moves p99 < 2 s and bob's password moves p99
< 5 s (unless `--no-latency-goal`); every move answered; every flood mail
that was taken processed, with no traceback in serve's log, no child
restarted, serve's exit 0 on SIGTERM. PostgreSQL is the server on
127.0.0.1:5432 (user postgres) unless `--postgres URL`, on a database made
for the run and dropped after it. A progress bar runs on stderr; the
figures come last on stdout. Exit status 0 only when every goal holds.
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import signal
import smtplib
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from email.parser import BytesHeaderParser
from pathlib import Path

from sqlalchemy import Engine, Row, create_engine, func, select

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pbmserv.config import Settings  # noqa: E402
from pbmserv.gamekit import get_game  # noqa: E402
from pbmserv.mail.backends import MemoryBackend  # noqa: E402
from pbmserv.runtime import Runtime  # noqa: E402
from pbmserv.service.play.reply_addresses import seat_address  # noqa: E402
from pbmserv.service.processing.catalog import Catalog  # noqa: E402
from pbmserv.store import records  # noqa: E402
from pbmserv.store.key import ServerKey  # noqa: E402
from pbmserv.store.models import Board, InboundMail  # noqa: E402
from proofs.databases import proof_workdir  # noqa: E402
from proofs.flood_serve import descendants, start  # noqa: E402
from proofs.report import percentile, progress, show_goals  # noqa: E402
from tests.long_boards import long_synch_board  # noqa: E402
from tests.mailtools import send, signup  # noqa: E402
from tests.smtp_helpers import free_port  # noqa: E402

POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432"
SERVER = "pbmserv@localhost"
PASSWORDS = {"alice": "alice-plays-by-reply", "bob": "bob-types-his-password"}
PLAYED = ("majority", "-size=12 -stones=60")
SYNCH_MOVES = 3691
GOALS = {"alice": 2.0, "bob": 5.0}  # p99 seconds: by reply address, by password


def address(userid: str) -> str:
    return f"{userid}@example.org"


@dataclass(frozen=True)
class Targets:
    majorities: int
    synch: int
    played: int  # the players' first board, whose moves the forgers of bob guess passwords for


def set_up(url: str, key_file: Path) -> Targets:
    """The accounts and the boards the attack aims at, made in this process before serve starts."""
    settings = Settings(database_url=url, mail_backend="memory", key_file=str(key_file))
    runtime = Runtime(settings, catalog=Catalog.installed(), backend=MemoryBackend())
    try:
        runtime.upgrade_schema()
        for userid, password in PASSWORDS.items():
            signup(runtime, userid, password)
        send(runtime, address("alice"), "majorities challenge -size=7 alice bob")
        with runtime.engine.connect() as connection:
            majorities = records.newest_board_number(connection, "majorities")
        assert majorities is not None, "the majorities board was made"
        send(runtime, address("alice"), f"majorities move {majorities} alice {PASSWORDS['alice']} a1")
        synch = long_synch_board(runtime, SYNCH_MOVES)
        send(runtime, address("bob"), f"{PLAYED[0]} challenge {PLAYED[1]} bob alice")
        with runtime.engine.connect() as connection:
            played = records.newest_board_number(connection, PLAYED[0])
        assert played is not None, "the players' board was made"
        return Targets(majorities, synch, played)
    finally:
        runtime.close()


class Serve:
    """`pbmserv serve` with the production settings (argon2id cost, caps, SMTP rates), delivering into a maildir."""

    def __init__(self, url: str, directory: Path, key_file: Path):
        self.port = free_port()
        self.log = directory / "serve.log"
        env = {key: value for key, value in os.environ.items() if not key.startswith("PBMSERV_")}
        env.update({
            "PBMSERV_DATABASE_URL": url, "PBMSERV_LISTEN": f"127.0.0.1:{self.port}", "PBMSERV_WEB_LISTEN": "", "PBMSERV_MAIL_BACKEND": "maildir",
            "PBMSERV_MAILDIR": str(directory / "outbox"), "PBMSERV_KEY_FILE": str(key_file),
        })
        self.process = start(env, self.log, self.port)

    def send(self, sender: str, recipient: str, raw: bytes) -> int:
        """One mail in a session of its own: the SMTP code it was answered with (250, or a refusal's)."""
        try:
            with smtplib.SMTP("127.0.0.1", self.port, timeout=60) as client:
                client.sendmail(sender, [recipient], raw)
            return 250
        except smtplib.SMTPRecipientsRefused as refused:
            return refused.recipients[recipient][0]
        except smtplib.SMTPResponseException as refused:
            return refused.smtp_code

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=60)


_serials = itertools.count(1)


def message_id(whose: str) -> str:
    """A Message-ID of the flood's (`whose` "flood") or of the players' ("players")."""
    return f"<{next(_serials)}.{os.getpid()}@{whose}.example>"


def mail(sender: str, subject: str, body: str, mid: str, to: str = SERVER) -> bytes:
    return (f"From: {sender}\r\nTo: {to}\r\nSubject: {subject}\r\nMessage-ID: {mid}\r\n\r\n{body}\r\n").encode()


@dataclass
class Flood:
    """The senders' mails, `rate` a second between them, until stopped: what SMTP answered, by the kind of sender."""

    serve: Serve
    targets: Targets
    senders: int
    rate: float
    answers: Counter[tuple[str, int]] = field(default_factory=Counter)
    stop: threading.Event = field(default_factory=threading.Event)

    def attack(self, number: int, serial: int) -> tuple[str, str, bytes]:
        """The kind of sender `number` is, its envelope sender, and its `serial`-th mail."""
        targets, mid = self.targets, message_id("flood")
        if number % 5 == 0:
            lines = [f"majorities moves {targets.majorities}"] * 20
            return "forging alice", address("alice"), mail(address("alice"), "multiple", "\n".join(lines), mid)
        if number % 10 == 1:
            lines = [f"{PLAYED[0]} move {targets.played} bob guess{serial}x{k} a1" for k in range(10)]
            return "forging bob", f"forger{number}@forgers.example", mail(address("bob"), "multiple", "\n".join(lines), mid)
        sender = f"stranger{number}@strangers.example"
        if number % 2:
            lines = [f"synch show {targets.synch}#{3000 + (serial * 10 + k) % (SYNCH_MOVES - 3000)}" for k in range(10)]
            return "stranger: show", sender, mail(sender, "multiple", "\n".join(lines), mid)
        lines = [f"majorities moves {targets.majorities}"] * 20
        return "stranger: moves", sender, mail(sender, "multiple", "\n".join(lines), mid)

    def run(self) -> None:
        for serial in itertools.count():
            for number in range(self.senders):
                if self.stop.wait(1 / self.rate):
                    return
                kind, sender, raw = self.attack(number, serial)
                threading.Thread(target=self._send, args=(kind, sender, raw), daemon=True).start()

    def _send(self, kind: str, sender: str, raw: bytes) -> None:
        self.answers[kind, self.serve.send(sender, SERVER, raw)] += 1


@dataclass
class Players:
    """alice and bob at their board: each move, then wait for its board mail, then `pause`."""

    serve: Serve
    engine: Engine
    key: ServerKey
    maildir: Maildir
    pause: float
    waits: dict[str, list[float]] = field(default_factory=lambda: {"alice": [], "bob": []})
    retried: Counter[str] = field(default_factory=Counter)
    unanswered: list[str] = field(default_factory=list)
    boards: int = 0
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        try:
            self._play()
        except Exception as error:  # the proof fails on it, rather than waiting out its time
            self.unanswered.append(f"the players stopped: {error!r}")
            raise

    def _play(self) -> None:
        while not self.stop.is_set():
            board = self._board()
            game = get_game(board.game_type)
            state = game.decode(board.state)
            [seat] = game.to_move(state)
            userid = board.seats[seat]
            move = random.choice(game.legal_moves(state, seat))
            mid = message_id("players")
            if userid == "alice":
                reply_address = self._reply_address(board, seat)
                raw = mail(address(userid), f"Re: {board.game_type} board {board.board}", f"{move}", mid, reply_address)
                sent = self._send_until_taken(userid, reply_address, raw)
            else:
                subject = f"{board.game_type} move {board.board} bob {PASSWORDS['bob']} {move}"
                sent = self._send_until_taken(userid, SERVER, mail(address(userid), subject, "", mid))
            answered = self._answer_to(mid)
            if answered is None:
                self.unanswered.append(f"{userid}'s {move} on board {board.board}")
            else:
                self.waits[userid].append(answered - sent)
            self.stop.wait(self.pause)

    def _board(self) -> Row:
        """The running board of the game played, bob's challenge of a new one if there is none."""
        for attempt in itertools.count():
            with self.engine.connect() as connection:
                board = connection.execute(
                    select(Board.game_type, Board.board, Board.seats, Board.state)
                    .where(Board.game_type == PLAYED[0], Board.status == "active").order_by(Board.id.desc())
                ).first()
            if board is not None:
                return board
            if attempt % 100 == 0:
                self.boards += 1
                challenge = f"{PLAYED[0]} challenge {PLAYED[1]} bob alice"
                self._send_until_taken("bob", SERVER, mail(address("bob"), challenge, "", message_id("players")))
            time.sleep(0.05)
        raise AssertionError("unreachable")

    def _reply_address(self, board: Row, seat: int) -> str:
        with self.engine.connect() as connection:
            account = records.find_account(connection, "alice")
        assert account is not None
        return seat_address(self.key, SERVER, board.game_type, board.board, seat, account)

    def _send_until_taken(self, userid: str, recipient: str, raw: bytes) -> float:
        """The time of the first attempt; a refused mail is sent again a second later, as an MTA would (sooner)."""
        first = time.time()
        while (code := self.serve.send(address(userid), recipient, raw)) != 250:
            assert 400 <= code < 500, f"{userid}'s mail refused for good: {code}"
            self.retried[userid] += 1
            time.sleep(1)
        return first

    def _answer_to(self, mid: str) -> float | None:
        """When the board mail answering the mail was delivered into the maildir (None: not within 120 s)."""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            delivered = self.maildir.answer_to(mid)
            if delivered is not None:
                return delivered
            time.sleep(0.02)
        return None


@dataclass
class Maildir:
    """The mails serve delivered (its maildir's new/), read as they come: when each answer to a mail came."""

    path: Path
    seen: set[str] = field(default_factory=set)
    answers: dict[str, float] = field(default_factory=dict)  # In-Reply-To -> the first answer's delivery time

    def answer_to(self, mid: str) -> float | None:
        new = self.path / "new"
        for name in set(os.listdir(new)) - self.seen if new.exists() else ():
            self.seen.add(name)
            file = new / name
            headers = BytesHeaderParser().parsebytes(file.read_bytes())
            replied = str(headers.get("In-Reply-To", ""))
            if replied and str(headers.get("Subject", "")).split(" ")[-1] != "Error":
                delivered = file.stat().st_mtime
                self.answers[replied] = min(delivered, self.answers.get(replied, delivered))
        return self.answers.get(mid)


def flood_outcomes(engine: Engine) -> Counter[str]:
    """The flood's mails taken, by what became of them (pending: not processed yet)."""
    with engine.connect() as connection:
        rows = connection.execute(
            select(InboundMail.status, func.count()).where(InboundMail.message_id.like("%@flood.example>"))
            .group_by(InboundMail.status)
        ).all()
    return Counter({status: count for status, count in rows})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--short", action="store_true", help="a 30 s run at a third of the rate (for CI)")
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--postgres", default=POSTGRES, help=f"the PostgreSQL server (default {POSTGRES})")
    parser.add_argument("--seconds", type=float, help="how long the flood lasts (default 180; 30 with --short)")
    parser.add_argument("--senders", type=int, default=50)
    parser.add_argument("--rate", type=float, help="flood mails a second, all senders together (default 30; 10 with --short)")
    parser.add_argument("--player-pause", type=float, default=1.0,
                        help="seconds a player waits after the other's move (default 1: bob stays within his 120 mails an hour at SMTP)")
    parser.add_argument("--seed", type=int, default=35)
    parser.add_argument("--keep", action="store_true", help="keep the work folder (serve's log, the outbox)")
    parser.add_argument("--no-latency-goal", action="store_true",
                        help="print the latency figures without judging them (the test suite: no timed assertions)")
    args = parser.parse_args()
    seconds = args.seconds if args.seconds is not None else 30.0 if args.short else 180.0
    args.rate = args.rate if args.rate is not None else 10.0 if args.short else 30.0
    random.seed(args.seed)
    with proof_workdir(args.database, args.postgres, "forged-flood", keep=args.keep) as (directory, url):
        return run(args, seconds, url, directory)


def run(args: argparse.Namespace, seconds: float, url: str, directory: Path) -> int:
    key_file = directory / "pbmserv.key"
    targets = set_up(url, key_file)
    serve = Serve(url, directory, key_file)
    engine = create_engine(url)
    print(f"serve on 127.0.0.1:{serve.port}, {args.database}, in {directory}; {args.senders} senders, {args.rate:g}"
          f" mails/s for {seconds:g} s at majorities board {targets.majorities} and synch board {targets.synch}", flush=True)
    try:
        children = set(descendants(serve.process.pid))
        flood = Flood(serve, targets, args.senders, args.rate)
        players = Players(serve, engine, ServerKey(key_file.read_bytes()), Maildir(directory / "outbox"), args.player_pause)
        threads = [threading.Thread(target=flood.run, daemon=True), threading.Thread(target=players.run, daemon=True)]
        for thread in threads:
            thread.start()
        began = time.monotonic()
        while time.monotonic() - began < seconds:
            waits = players.waits
            progress((time.monotonic() - began) / seconds, f"alice {len(waits['alice'])}, bob {len(waits['bob'])} moves"
                     f" answered; flood {sum(flood.answers.values())} mails")
            time.sleep(0.5)
        flood.stop.set()
        players.stop.set()
        for thread in threads:
            thread.join(180)
        sys.stderr.write("\n")
        drained = wait_for_backlog(engine, 300)
        outcomes = flood_outcomes(engine)
        restarted = children - set(descendants(serve.process.pid))  # a child that was there and is gone
    finally:
        exit_code = serve.stop()
        engine.dispose()
    log = serve.log.read_text(errors="replace")
    return report(args, seconds, flood, players, outcomes, drained, log, restarted, exit_code)


def wait_for_backlog(engine: Engine, seconds: float) -> float | None:
    """The seconds until no mail of the flood waits (None: still some after `seconds`)."""
    began = time.monotonic()
    while time.monotonic() - began < seconds:
        if not flood_outcomes(engine)["pending"]:
            return time.monotonic() - began
        time.sleep(0.5)
    return None


def report(args: argparse.Namespace, seconds: float, flood: Flood, players: Players, outcomes: Counter[str],
           drained: float | None, log: str, restarted: set[int], exit_code: int) -> int:
    sent = sum(flood.answers.values())
    by_kind: dict[str, Counter[int]] = {}
    for (kind, code), count in flood.answers.items():
        by_kind.setdefault(kind, Counter())[code] += count
    print("\nflood: " + "; ".join(
        f"{kind} {sum(codes.values())} sent ({', '.join(f'{count} x {code}' for code, count in sorted(codes.items()))})"
        for kind, codes in sorted(by_kind.items())
    ))
    print(f"flood taken: {sum(outcomes.values())} ({dict(outcomes)}); backlog gone "
          f"{'never' if drained is None else f'{drained:.1f} s'} after the flood stopped")
    goals = {}
    for userid, how in (("alice", "by reply address"), ("bob", "by password")):
        waits = players.waits[userid]
        p50, p99, worst = percentile(waits, 0.5), percentile(waits, 0.99), max(waits, default=float("nan"))
        print(f"{userid} ({how}): {len(waits)} moves answered, {players.retried[userid]} retried after a 4xx;"
              f" 250 to the board mail delivered p50 {p50:.2f} s, p99 {p99:.2f} s, max {worst:.2f} s")
        goals[f"{userid}'s p99 {how} {p99:.2f} s < {GOALS[userid]:g} s"] = p99 < GOALS[userid] or args.no_latency_goal
    tracebacks, died = log.count("Traceback"), log.count("died (exit code")
    goals.update({
        f"moves unanswered: {len(players.unanswered)} {players.unanswered[:3]}": not players.unanswered
        and all(players.waits.values()),
        f"the flood reached the worker: {sum(outcomes.values())} of {sent} mails taken": sum(outcomes.values()) > 0,
        f"every flood mail taken processed: {outcomes['pending']} still pending": drained is not None,
        f"tracebacks in serve's log {tracebacks}, children restarted {len(restarted) + died}, serve's exit {exit_code}":
            tracebacks == 0 and not restarted and died == 0 and exit_code == 0,
    })
    verdict = show_goals(goals)
    alice, bob = players.waits["alice"], players.waits["bob"]
    print(f"{args.database}: {args.senders} senders at {args.rate:g} mails/s for {seconds:g} s; alice (reply address)"
          f" p99 {percentile(alice, 0.99):.2f} s, bob (password) p99 {percentile(bob, 0.99):.2f} s; {verdict}")
    return 0 if all(goals.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
