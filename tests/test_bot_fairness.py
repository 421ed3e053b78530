"""Bots fair across players (issue 35, item 5): the players who wait for
the bots take turns, a cheaper turn is thought in the pauses of a dearer
one, and a player may have only so many running boards against each bot."""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import replace
from email import policy
from email.parser import BytesParser
from pathlib import Path

from sqlalchemy import create_engine, select

from pbmserv.runtime import Runtime
from pbmserv.service.bots.queue import BotQueue, Stopped, play_due_turns
from pbmserv.service.bots.turns import BOT_DOMAIN, due_turns, think
from pbmserv.store.database import reading
from pbmserv.store.models import Address, Board, InboundMail, Move
from pbmserv.worker import Worker
from tests.conftest import FakeClock
from tests.mailtools import body, make_mail, send, signup
from tests.serve_helpers import ServeProcess, count, wait_until

ITERATIONS = 50


def bot_mails(runtime: Runtime) -> list[str]:
    """The bots' mails as handed in, in that order: '<bot> <game> <board>'
    each (processed first: on SQLite they wait in the arrival spool)."""
    runtime.processor.process_pending()
    with runtime.sessions() as session:
        rows = session.execute(
            select(InboundMail.envelope_sender, InboundMail.message_id)
            .where(InboundMail.envelope_sender.like(f"%@{BOT_DOMAIN}")).order_by(InboundMail.id)
        ).all()
    return [f"{sender.split('@')[0]} {' '.join(message_id.strip('<').split('.')[:2])}" for sender, message_id in rows]


def challenge_bots(runtime: Runtime, clock: FakeClock, challenges: list[tuple[str, str]]) -> None:
    for player, strength in challenges:
        clock.advance(minutes=1)
        [(_, mail)] = send(runtime, f"{player}@example.org", f"toy challenge -bot={strength} bot {player}")
        assert str(mail["Subject"]).startswith("Toy Board ") and "No moves yet." in body(mail), body(mail)


def test_players_take_turns_however_many_boards_one_has_due(runtime: Runtime, clock: FakeClock) -> None:
    """alice's three boards wait for the bot before bob's one: bob's turn is
    thought second, not after all of hers (as it was, in board order)."""
    signup(runtime, "alice", "secret1")
    signup(runtime, "bob", "secret2")
    challenge_bots(runtime, clock, [("alice", "easy"), ("alice", "easy"), ("alice", "easy"), ("bob", "easy")])
    assert runtime.catalog is not None
    assert play_due_turns(runtime.engine, runtime.intake, runtime.catalog, runtime.clock, iterations=ITERATIONS) == 4
    assert bot_mails(runtime) == ["bot-easy toy 101", "bot-easy toy 104", "bot-easy toy 102", "bot-easy toy 103"]


def test_a_cheaper_turn_is_thought_in_the_pauses_of_a_strong_think(runtime: Runtime, clock: FakeClock) -> None:
    """alice's strong turn is thought first (her board waits longest); bob's
    easy turn, due too, is thought and handed in while it thinks, and the
    strong think still makes all its iterations."""
    signup(runtime, "alice", "secret1")
    signup(runtime, "bob", "secret2")
    challenge_bots(runtime, clock, [("alice", "strong"), ("bob", "easy")])
    assert runtime.catalog is not None
    ticks = itertools.count()
    queue = BotQueue(
        runtime.engine, runtime.intake, runtime.catalog, runtime.clock, iterations=ITERATIONS,
        woken=lambda: True, timer=lambda: next(ticks) * 0.01,
    )
    with reading(runtime.engine) as connection:
        [strong, _] = due_turns(connection, runtime.catalog, runtime.intake.key, runtime.settings.address)
    alone = think(strong, runtime.engine, iterations=ITERATIONS)
    assert queue.run() == 2
    assert bot_mails(runtime) == ["bot-easy toy 102", "bot-strong toy 101"]
    again = BotQueue(runtime.engine, runtime.intake, runtime.catalog, runtime.clock, iterations=ITERATIONS)
    assert again.run() == 0, "both played, neither thought out again"
    with runtime.sessions() as session:
        assert session.scalar(select(Move.text).where(Move.board_id == strong.record.id)) == alone


def test_a_stopped_think_hands_nothing_in_and_is_thought_anew(runtime: Runtime, clock: FakeClock) -> None:
    signup(runtime, "alice", "secret1")
    challenge_bots(runtime, clock, [("alice", "strong")])
    assert runtime.catalog is not None
    looks = itertools.count()
    ticks = itertools.count()
    stopping = BotQueue(
        runtime.engine, runtime.intake, runtime.catalog, runtime.clock, iterations=ITERATIONS,
        stopping=lambda: next(looks) > 2, timer=lambda: next(ticks) * 0.01,
    )
    try:
        stopping.run()
        raise AssertionError("the think was not stopped")
    except Stopped:
        pass
    assert bot_mails(runtime) == []
    assert play_due_turns(runtime.engine, runtime.intake, runtime.catalog, runtime.clock, iterations=ITERATIONS) == 1
    assert bot_mails(runtime) == ["bot-strong toy 101"]


def test_the_worker_wakes_the_bots_after_a_batch(runtime: Runtime) -> None:
    wake_bots = threading.Event()
    worker = Worker(runtime, wake_bots=wake_bots)
    worker.work_round()
    assert not wake_bots.is_set(), "nothing processed"
    runtime.intake.store(make_mail("alice@example.org", "signup alice secret1"))
    worker.work_round()
    assert wake_bots.is_set()


def test_a_player_has_at_most_so_many_running_boards_against_each_bot(runtime: Runtime, clock: FakeClock) -> None:
    signup(runtime, "alice", "secret1")
    signup(runtime, "bob", "secret2")
    challenge_bots(runtime, clock, [("alice", "strong")] * 3)
    [(_, refused)] = send(runtime, "alice@example.org", "toy challenge -bot=strong alice bot")
    text = " ".join(body(refused).split())
    assert "alice already plays 3 running boards against bot-strong (toy 101, toy 102, toy 103)" in text
    assert "3 at once is the most the server allows" in text
    assert "finish or resign one of them first (e.g. 'toy resign 101 alice PASSWORD')" in text
    assert "-bot=easy, -bot=normal" in text
    [(_, named)] = send(runtime, "bob@example.org", "toy challenge bot-strong alice")  # a third party, the bot by name
    assert "alice already plays 3 running boards" in " ".join(body(named).split())
    challenge_bots(runtime, clock, [("alice", "normal"), ("bob", "strong")])  # other strengths, other players
    send(runtime, "alice@example.org", "toy resign 102 alice secret1")
    challenge_bots(runtime, clock, [("alice", "strong")])  # a finished board frees its place


def test_the_limits_are_settings_and_zero_offers_no_such_bot(runtime: Runtime, clock: FakeClock) -> None:
    runtime.settings = replace(runtime.settings, bot_easy_boards=1, bot_strong_boards=0)
    runtime.processor.settings = runtime.intake.settings = runtime.settings
    signup(runtime, "alice", "secret1")
    challenge_bots(runtime, clock, [("alice", "easy")])
    [(_, second)] = send(runtime, "alice@example.org", "toy challenge -bot=easy alice bot")
    assert "1 at once is the most" in " ".join(body(second).split())
    [(_, strong)] = send(runtime, "alice@example.org", "toy challenge -bot=strong alice bot")
    assert "This server offers no games against bot-strong." in body(strong)


def test_the_bots_play_players_only(runtime: Runtime) -> None:
    """Boards of bots alone cost the bots' time without end, and nobody's
    hourly challenges: a challenge naming only bots is refused."""
    signup(runtime, "alice", "secret1")
    send(runtime, "alice@example.org", "toy challenge alice bot")  # the bot's account exists
    for subject in ("toy challenge bot-easy bot-strong", "toy challenge -bot=strong bot-easy bot"):
        [(_, refused)] = send(runtime, "mallory@example.org", subject)
        assert "The bots play against players only" in body(refused), body(refused)


def test_serve_thinks_an_easy_turn_while_a_strong_one_thinks(database_url: str, tmp_path: Path) -> None:
    """Through a real `serve`: alice's strong bot thinks 4.5 s; bob's move,
    made meanwhile, wakes the bots, and his easy bot answers before alice's
    strong one does (it waited for the strong think before)."""
    server = ServeProcess(database_url, tmp_path).start()
    try:
        for userid in ("alice", "bob"):
            serve_signup(server, database_url, userid)
        server.send(make_mail("bob@example.org", "toy challenge -bot=easy bob bot"), "bob@example.org")
        wait_until(lambda: count(database_url, Board.id) == 1, 30, server)
        server.send(make_mail("alice@example.org", "toy challenge -bot=strong bot alice"), "alice@example.org")
        wait_until(lambda: count(database_url, Board.id) == 2, 30, server)
        time.sleep(1.0)  # the strong bot is thinking: bob's move comes in the middle of it
        server.send(make_mail("bob@example.org", "toy move 101 bob secret1 b2"), "bob@example.org")
        wait_until(lambda: count(database_url, Move.id) == 3, 60, server)
    finally:
        server.stop()
    assert bot_moves_in_order(database_url) == ["bot-easy", "bot-strong"]


def serve_signup(server: ServeProcess, database_url: str, userid: str) -> None:
    """Sign up through `serve`, confirming the address if the server asks."""
    address = f"{userid}@example.org"
    server.send(make_mail(address, f"signup {userid} secret1"), address)
    wait_until(lambda: bool(subjects_to(server, address)), 30, server)
    for subject in subjects_to(server, address):
        if subject.startswith(f"confirm {userid} "):
            server.send(make_mail(address, f"Re: {subject}"), address)
            wait_until(lambda: count(database_url, Address.id, Address.confirmed_at.is_not(None), Address.address == address) == 1)


def subjects_to(server: ServeProcess, address: str) -> list[str]:
    try:
        raws = server.mails()
    except FileNotFoundError:  # the first delivery is making the maildir's folders
        return []
    parser = BytesParser(policy=policy.default)
    messages = [parser.parsebytes(raw, headersonly=True) for raw in raws]
    return [str(message["Subject"]) for message in messages if str(message["To"]) == address]


def bot_moves_in_order(database_url: str) -> list[str]:
    engine = create_engine(database_url)
    try:
        with engine.connect() as connection:
            rows = connection.execute(select(Board.seats, Move.seat).join(Board, Board.id == Move.board_id).order_by(Move.id)).all()
    finally:
        engine.dispose()
    return [seats[seat] for seats, seat in rows if seats[seat].startswith("bot")]
