"""One account's strong-bot boards against another player's easy-bot game,
through a real `pbmserv serve` on loopback (issue 35, item 5, finding F7).

The hoarder challenges the strong bot on the largest boards of the games
(19x19 plurality, 26x26 synch, 14x14 majority, size-7 majorities, both
chambers of parliament, then round again) as often as `--attack-boards`
says (8, as in F7): the server makes as many as its limit allows, and
refuses the rest. Then the hoarder answers every move of the bot at once,
a legal move read from the board as the server stores it, so that its
strong turns are due all the time. Meanwhile a player plays easy-bot games
of majority (10x10), answering each bot move after `--player-pause`
seconds. Measured: the player's wait from the SMTP 250 of a move to the
bot's answer, the board mail to the player, in the outbox.

    .venv/bin/python proofs/bot_fairness.py [--short] [--database sqlite|postgresql] [--no-latency-goal]
        [--seconds S] [--attack-boards N] [--server-code DIR] [--setting PBMSERV_NAME=VALUE]

Goals: the hoarder gets no more running strong-bot boards than the limit,
and each challenge past it an error mail naming the limit; every move of
the player answered by the bot; the hoarder's boards answered by the bot
too (the strong bot thinks on, it only waits less for others); no
traceback in serve's log, no child restarted, serve's exit 0 on SIGTERM;
and, unless `--no-latency-goal`, the player's p95 under 3 s. `--server-code
DIR` runs serve from another checkout (e.g. main's, for the figures
before: `git archive main | tar -x -C DIR`). PostgreSQL is the server on
127.0.0.1:5432 (user postgres) unless `--postgres URL`, on a database made
for the run and dropped after it. A progress bar runs on stderr; the
figures come last on stdout. Exit status 0 only when every goal holds.
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import re
import signal
import smtplib
import sys
import threading
import time
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.parser import BytesParser
from email.policy import default
from functools import cached_property
from pathlib import Path
from typing import Any, cast

from sqlalchemy import Engine, create_engine, select

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pbmserv.gamekit import get_game  # noqa: E402
from pbmserv.store.key import ServerKey, is_sealed  # noqa: E402
from pbmserv.store.models import Address, Board, InboundMail, Move, OutboxMail, User  # noqa: E402
from proofs.databases import proof_workdir  # noqa: E402
from proofs.flood_serve import descendants, epoch, start  # noqa: E402
from proofs.report import percentile, progress, show_goals  # noqa: E402
from tests.smtp_helpers import free_port  # noqa: E402

POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432"
SERVER = "pbmserv@localhost"
P95_GOAL_SECONDS = 3.0
HOARDER, PLAYER = "hoarder", "player"
PASSWORDS = {HOARDER: "hoards-the-bots", PLAYER: "plays-the-bot"}
ADDRESSES = {HOARDER: "hoarder@attack.example", PLAYER: "player@people.example"}
#: the largest board of each game, in the order the hoarder challenges them
LARGEST = [
    ("plurality", "-size=19"), ("synch", "-size=26"), ("majority", "-size=14"), ("majorities", "-size=7"),
    ("parliament", "-boards=both"),
]
PLAYER_GAME = ("majority", "-size=10")
#: a move sent that changed nothing on its board after this long is sent again (another legal move)
RESEND_SECONDS = 20.0


class Serve:
    """`pbmserv serve` with the production settings but the hourly challenges (the player starts game after game)."""

    def __init__(self, url: str, directory: Path, server_code: str | None, settings: list[str]):
        self.port = free_port()
        self.log = directory / "serve.log"
        self.env = {key: value for key, value in os.environ.items() if not key.startswith("PBMSERV_")}
        self.env.update({
            "PBMSERV_DATABASE_URL": url, "PBMSERV_LISTEN": f"127.0.0.1:{self.port}", "PBMSERV_WEB_LISTEN": "", "PBMSERV_MAIL_BACKEND": "maildir",
            "PBMSERV_MAILDIR": str(directory / "outbox"), "PBMSERV_KEY_FILE": str(directory / "pbmserv.key"),
            "PBMSERV_CHALLENGES_PER_HOUR": "1000",
        })
        self.env.update(setting.partition("=")[::2] for setting in settings)
        if server_code:
            self.env["PYTHONPATH"] = server_code
        self.process = start(self.env, self.log, self.port)

    @cached_property
    def key(self) -> ServerKey:
        """The server's key (made by serve at its start), to read the mails it sealed."""
        return ServerKey(Path(self.env["PBMSERV_KEY_FILE"]).read_bytes())

    def send(self, userid: str, subject: str) -> float:
        """A mail from the account's address; the time of its 250."""
        address = ADDRESSES[userid]
        raw = (f"From: {address}\r\nTo: {SERVER}\r\nSubject: {subject}\r\n"
               f"Message-ID: <{next(_serials)}.{os.getpid()}@proof.example>\r\n\r\nproof\r\n").encode()
        with smtplib.SMTP("127.0.0.1", self.port, timeout=60) as client:
            client.sendmail(address, [SERVER], raw)
            return time.time()

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=60)


_serials = itertools.count(1)


@dataclass
class BoardSeen:
    id: int
    game: str
    number: int
    seats: list[str]
    state: Any
    move_count: int
    version: int
    active: bool


def boards_of(engine: Engine, userid: str) -> list[BoardSeen]:
    with engine.connect() as connection:
        rows = connection.execute(select(
            Board.id, Board.game_type, Board.board, Board.seats, Board.state, Board.move_count, Board.version, Board.status,
        ).order_by(Board.id)).all()
    return [BoardSeen(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7] == "active") for row in rows if userid in row[3]]


def to_move(board: BoardSeen, userid: str) -> str | None:
    """A legal move for `userid` if it is their turn on the board, else None."""
    game = get_game(board.game)
    state = game.decode(board.state)
    seat = board.seats.index(userid)
    if not board.active or seat not in game.to_move(state):
        return None
    return random.choice(game.legal_moves(state, seat))


def bot_answers(engine: Engine, userid: str, after: int) -> list[tuple[int, float]]:
    """The board mails to `userid`'s address that a bot's mail made, after outbox id `after`: (id, written at)."""
    with engine.connect() as connection:
        rows = connection.execute(
            select(OutboxMail.id, OutboxMail.created_at).join(InboundMail, InboundMail.id == OutboxMail.inbound_id)
            .where(OutboxMail.recipient == ADDRESSES[userid], OutboxMail.id > after, InboundMail.envelope_sender.like("bot%@bots.invalid"))
            .order_by(OutboxMail.id)
        ).all()
    return [(row[0], epoch(row[1])) for row in rows]


def mails_to(serve: Serve, engine: Engine, userid: str) -> list[EmailMessage]:
    """The mails the server wrote to the account's address (those with a reply address in them are sealed in the outbox)."""
    with engine.connect() as connection:
        raws = connection.scalars(select(OutboxMail.raw).where(OutboxMail.recipient == ADDRESSES[userid]).order_by(OutboxMail.id)).all()
    parser = BytesParser(policy=default)
    return [parser.parsebytes(serve.key.unseal(raw) if is_sealed(raw) else raw) for raw in raws]


def subjects_to(serve: Serve, engine: Engine, userid: str) -> list[str]:
    return [str(mail["Subject"]) for mail in mails_to(serve, engine, userid)]


def error_texts_to(serve: Serve, engine: Engine, userid: str) -> list[str]:
    """The text of each error mail to the account, on one line."""
    return [
        " ".join(cast(EmailMessage, mail.get_body()).get_content().split())
        for mail in mails_to(serve, engine, userid) if str(mail["Subject"]).endswith(" Error")
    ]


def sign_up(serve: Serve, engine: Engine, userid: str) -> None:
    """Sign up; confirm the address if the server asks (a mail whose Subject is `confirm USERID CODE`)."""
    serve.send(userid, f"signup {userid} {PASSWORDS[userid]}")
    deadline = time.monotonic() + 30
    while not subjects_to(serve, engine, userid):
        assert time.monotonic() < deadline, "no answer to the signup"
        time.sleep(0.1)
    for subject in subjects_to(serve, engine, userid):
        if subject.startswith(f"confirm {userid} "):
            serve.send(userid, f"Re: {subject}")
            while not confirmed(engine, userid):
                assert time.monotonic() < deadline + 30, "the address was never confirmed"
                time.sleep(0.1)


def confirmed(engine: Engine, userid: str) -> bool:
    with engine.connect() as connection:
        return connection.scalar(
            select(Address.confirmed_at).join(User, User.id == Address.user_id).where(User.userid == userid)
        ) is not None


@dataclass
class Player:
    """The player of easy-bot games: a move, then wait for the bot's answer, then `pause` seconds, and so on;
    a new game when one ends."""

    serve: Serve
    engine: Engine
    pause: float
    waits: list[float] = field(default_factory=list)
    unanswered: int = 0
    moves: int = 0
    last_answer: int = 0
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        while not self.stop.is_set():
            board = next((one for one in boards_of(self.engine, PLAYER) if one.active), None)
            if board is None:
                game, options = PLAYER_GAME
                self.serve.send(PLAYER, f"{game} challenge -bot=easy {options} {PLAYER} bot")
                self._wait_for(lambda: any(one.active for one in boards_of(self.engine, PLAYER)), 30)
                continue
            move = to_move(board, PLAYER)
            if move is None:  # the bot's first move of a board it opened, or an answer still coming
                time.sleep(0.05)
                continue
            sent = self.serve.send(PLAYER, f"{board.game} move {board.number} {PLAYER} {PASSWORDS[PLAYER]} {move}")
            self.moves += 1
            answer = self._wait_for_answer(board)
            if answer is not None:
                self.waits.append(answer - sent)
                self.stop.wait(self.pause)

    def _wait_for_answer(self, board: BoardSeen) -> float | None:
        """When the bot's answer was written to the outbox; None if the move ended the game."""
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            answers = bot_answers(self.engine, PLAYER, self.last_answer)
            if answers:
                self.last_answer = answers[-1][0]
                return answers[0][1]
            now = next((one for one in boards_of(self.engine, PLAYER) if one.id == board.id), board)
            if not now.active and now.move_count > board.move_count:
                return None
            time.sleep(0.05)
        self.unanswered += 1
        return None

    def _wait_for(self, condition: Any, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while not condition() and time.monotonic() < deadline:
            time.sleep(0.05)


@dataclass
class Hoarder:
    """Answers every bot move on its boards at once, and challenges again when one ends."""

    serve: Serve
    engine: Engine
    moves: int = 0
    sent: dict[int, tuple[int, float]] = field(default_factory=dict)  # board id -> (version answered, when)
    stop: threading.Event = field(default_factory=threading.Event)

    def challenge(self, index: int) -> None:
        game, options = LARGEST[index % len(LARGEST)]
        self.serve.send(HOARDER, f"{game} challenge -bot=strong {options} bot {HOARDER}")

    def run(self) -> None:
        ended = {board.id for board in boards_of(self.engine, HOARDER) if not board.active}
        while not self.stop.is_set():
            boards = boards_of(self.engine, HOARDER)
            running = [board for board in boards if board.active]
            for board in boards:
                if not board.active and board.id not in ended:
                    ended.add(board.id)
                    self.challenge(next(index for index, (game, _) in enumerate(LARGEST) if game == board.game))
            for board in running:
                version, when = self.sent.get(board.id, (-1, 0.0))
                if board.version == version and time.monotonic() - when < RESEND_SECONDS:
                    continue
                move = to_move(board, HOARDER)
                if move is not None:
                    self.serve.send(HOARDER, f"{board.game} move {board.number} {HOARDER} {PASSWORDS[HOARDER]} {move}")
                    self.sent[board.id] = (board.version, time.monotonic())
                    self.moves += 1
            time.sleep(0.1)


def strong_thinks(log: str) -> list[float]:
    """The seconds each strong think took of the bots' own time, from serve's log."""
    return [float(seconds) for seconds in re.findall(r"bot-strong on \S+ board \d+.*?\(thought ([\d.]+) s", log)]


def bot_moves(engine: Engine, bot: str) -> int:
    with engine.connect() as connection:
        rows = connection.execute(select(Board.seats, Move.seat).join(Board, Board.id == Move.board_id)).all()
    return sum(1 for seats, seat in rows if seats[seat] == bot)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--short", action="store_true", help="a 40 s run (for CI)")
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--postgres", default=POSTGRES, help=f"the PostgreSQL server (default {POSTGRES})")
    parser.add_argument("--seconds", type=float, help="how long the player plays under the attack (default 180; 40 with --short)")
    parser.add_argument("--attack-boards", type=int, default=8, help="strong-bot boards the hoarder asks for (default 8, as in F7)")
    parser.add_argument("--player-pause", type=float, default=1.0, help="seconds the player takes to answer the bot (default 1)")
    parser.add_argument("--server-code", help="run serve from this checkout (PYTHONPATH), e.g. main's for the figures before")
    parser.add_argument("--setting", action="append", default=[], metavar="PBMSERV_NAME=VALUE",
                        help="a setting for serve, e.g. PBMSERV_BOT_STRONG_BOARDS=8 (the attack without the limit)")
    parser.add_argument("--seed", type=int, default=35)
    parser.add_argument("--keep", action="store_true", help="keep the work folder (serve's log, the outbox)")
    parser.add_argument("--no-latency-goal", action="store_true",
                        help="print the latency figures without judging them (the test suite: no timed assertions beside other work)")
    args = parser.parse_args()
    seconds = args.seconds if args.seconds is not None else 40.0 if args.short else 180.0
    random.seed(args.seed)
    with proof_workdir(args.database, args.postgres, "bot-fairness", keep=args.keep) as (directory, url):
        return run(args, seconds, url, directory)


def run(args: argparse.Namespace, seconds: float, url: str, directory: Path) -> int:
    serve = Serve(url, directory, args.server_code, args.setting)
    engine = create_engine(url)
    print(f"serve on 127.0.0.1:{serve.port}, {args.database}, in {directory}"
          f"{f', its code from {args.server_code}' if args.server_code else ''}; the hoarder asks for {args.attack_boards}"
          f" strong-bot boards, the player plays easy-bot {' '.join(PLAYER_GAME)} for {seconds:g} s", flush=True)
    try:
        for userid in (HOARDER, PLAYER):
            sign_up(serve, engine, userid)
        children = set(descendants(serve.process.pid))
        hoarder = Hoarder(serve, engine)
        for index in range(args.attack_boards):
            hoarder.challenge(index)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(boards_of(engine, HOARDER)) + len(error_texts_to(serve, engine, HOARDER)) < args.attack_boards:
            time.sleep(0.1)
        made = len(boards_of(engine, HOARDER))
        refusals = error_texts_to(serve, engine, HOARDER)
        player = Player(serve, engine, args.player_pause)
        threads = [threading.Thread(target=hoarder.run, daemon=True), threading.Thread(target=player.run, daemon=True)]
        for thread in threads:
            thread.start()
        began = time.monotonic()
        while time.monotonic() - began < seconds:
            progress((time.monotonic() - began) / seconds, f"player: {len(player.waits)} answers,"
                     f" last {player.waits[-1] if player.waits else 0:.1f} s; hoarder: {hoarder.moves} moves")
            time.sleep(0.5)
        hoarder.stop.set()
        player.stop.set()
        for thread in threads:
            thread.join(320)
        sys.stderr.write("\n")
        strong_moves, easy_moves = bot_moves(engine, "bot-strong"), bot_moves(engine, "bot-easy")
        hoarder_running = sum(1 for board in boards_of(engine, HOARDER) if board.active)
        restarted = set(descendants(serve.process.pid)) - children
    finally:
        exit_code = serve.stop()
        engine.dispose()
    log = serve.log.read_text(errors="replace")
    return report(args, seconds, made, refusals, hoarder, hoarder_running, player, strong_moves, easy_moves,
                  log, restarted, exit_code)


def report(args: argparse.Namespace, seconds: float, made: int, refusals: list[str], hoarder: Hoarder, hoarder_running: int,
           player: Player, strong_moves: int, easy_moves: int, log: str, restarted: set[int], exit_code: int) -> int:
    waits = player.waits
    p50, p95, worst = percentile(waits, 0.5), percentile(waits, 0.95), max(waits, default=float("nan"))
    thinks = strong_thinks(log)
    named = [body for body in refusals if re.search(r"\d+ at once is the\s+most", body)]
    tracebacks, died = log.count("Traceback"), log.count("died (exit code")
    print(f"\nhoarder: asked for {args.attack_boards} strong-bot boards, got {made}, {len(refusals)} refused"
          f" ({len(named)} naming the limit); {hoarder.moves} moves sent at once; bot-strong moves made {strong_moves},"
          f" each thought p50 {percentile(thinks, 0.5):.2f} s of its own time")
    print(f"player: {player.moves} moves in {seconds:g} s, {len(waits)} answered by bot-easy ({easy_moves} bot-easy moves),"
          f" {player.unanswered} unanswered; 250 to the bot's board mail in the outbox p50 {p50:.2f} s, p95 {p95:.2f} s,"
          f" max {worst:.2f} s")
    limit_held = made < args.attack_boards and len(named) == args.attack_boards - made
    goals = {
        f"the hoarder's strong-bot boards held to the limit: got {made} of {args.attack_boards},"
        f" {len(named)} refusals naming the limit": limit_held,
        f"the player's moves unanswered: {player.unanswered}, answered {len(waits)}": player.unanswered == 0 and len(waits) > 0,
        f"the strong bot played on the hoarder's {hoarder_running} boards: {strong_moves} moves": strong_moves >= made,
        f"tracebacks in serve's log {tracebacks}, children restarted {len(restarted) + died}, serve's exit {exit_code}":
            tracebacks == 0 and not restarted and died == 0 and exit_code == 0,
        f"the player's p95 {p95:.2f} s < {P95_GOAL_SECONDS:g} s": p95 < P95_GOAL_SECONDS or args.no_latency_goal,
    }
    verdict = show_goals(goals)
    print(f"{args.database}: player p50 {p50:.2f} s, p95 {p95:.2f} s, max {worst:.2f} s over {len(waits)} answers;"
          f" hoarder {made} boards, {strong_moves} strong moves; {verdict}")
    return 0 if all(goals.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
