"""A bot's manners (issue 20): it resigns a game it cannot save, politely
and only when two searches a turn apart find it lost, and it answers draw
offers and undo requests made to it, once each, by mail like its moves.

Positions are toy games (noughts and crosses) with the bot's moves handed
in as its own mails, so that the position a judgement is tested on is the
same in every run; the bot's searches are of a fixed size."""

from __future__ import annotations

import signal
import subprocess
import time
from dataclasses import replace
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path

from sqlalchemy import select

from pbmserv.mail.backends import MemoryBackend
from pbmserv.runtime import Runtime
from pbmserv.service.bots.manners import RESIGN_COMMENT, answer
from pbmserv.service.bots.queue import play_due_turns
from pbmserv.service.bots.turns import BOT_DOMAIN, due_answers, due_turns, turn_mail
from pbmserv.service.play.board import replay
from pbmserv.store import records
from pbmserv.store.database import reading
from pbmserv.store.models import InboundMail
from tests.conftest import FakeClock
from tests.mailtools import body, make_mail, send, signup
from tests.test_bots import moves_of
from tests.test_cli import BIN, env_for, maildir_mails, receive, receive_signup
from tests.toygame import Toy

#: enough search for the toy game's forced losses to show as such (below 0.03)
ITERATIONS = 2000


def alice(runtime: Runtime, clock: FakeClock, command: str) -> list[tuple[str, EmailMessage]]:
    """alice's command on board 101 (`move b2`, `move propose`, ...), ten minutes after the last mail."""
    clock.advance(minutes=10)
    verb, _, rest = command.partition(" ")
    return send(runtime, "alice@example.org", f"toy {verb} 101 alice secret1 {rest}".strip())


def bot_plays(runtime: Runtime, clock: FakeClock, move: str) -> None:
    """The bot's move `move`, handed in as its own mail (not thought out)."""
    clock.advance(minutes=10)
    assert runtime.catalog is not None
    with reading(runtime.engine) as connection:
        [turn] = due_turns(connection, runtime.catalog, runtime.intake.key, runtime.settings.address)
    runtime.intake.store(turn_mail(turn, move, runtime.clock()), None, turn.reply_to)
    runtime.processor.process_pending()


def bots_round(runtime: Runtime, clock: FakeClock) -> list[tuple[str, EmailMessage]]:
    """`pbmserv bots --once`, ten minutes after the last mail: the mails it caused."""
    clock.advance(minutes=10)
    backend = runtime.backend
    assert runtime.catalog is not None and isinstance(backend, MemoryBackend)
    backend.sent.clear()
    play_due_turns(runtime.engine, runtime.intake, runtime.catalog, runtime.clock, iterations=ITERATIONS)
    runtime.processor.process_pending()
    runtime.delivery.deliver_due()
    parser = BytesParser(policy=policy.default)
    return [(to, parser.parsebytes(raw)) for to, raw in backend.sent]


def start(runtime: Runtime, clock: FakeClock, players: str, moves: list[str]) -> None:
    """A toy board 101 of alice and the bot, seated as `players` says,
    after `moves` in turn, the bot's handed in as its mails."""
    signup(runtime, "alice", "secret1")
    send(runtime, "alice@example.org", f"toy challenge {players}")
    bot_seat = players.split().index("bot")
    for number, move in enumerate(moves):
        if number % 2 == bot_seat:
            bot_plays(runtime, clock, move)
        else:
            alice(runtime, clock, f"move {move}")


def bot_mails_stored(runtime: Runtime) -> int:
    with runtime.sessions() as session:
        return len(list(session.scalars(select(InboundMail.id).where(InboundMail.envelope_sender == f"bot@{BOT_DOMAIN}"))))


def board_status(runtime: Runtime) -> tuple[str, dict[str, object] | None, dict[str, object] | None]:
    with reading(runtime.engine) as connection:
        board = records.find_board(connection, "toy", 101)
        assert board is not None
        return board.status, board.result, board.proposal


# X (alice) a1 c1, O (the bot) b3, X a3: alice threatens b1, a2 and b2 at once
FORKED = ["a1", "b3", "c1", "c3", "a3"]


def test_a_bot_lost_on_two_turns_resigns_politely_and_the_game_is_rated(runtime: Runtime, clock: FakeClock) -> None:
    start(runtime, clock, "alice bot", [*FORKED, "a2", "c2"])  # still two threats, b1 and b2
    [(to, final)] = bots_round(runtime, clock)
    text = body(final)
    assert to == "alice@example.org" and str(final["Subject"]) == "Toy Board 101"
    assert "Game won by alice: bot resigned." in text and RESIGN_COMMENT in " ".join(text.split())
    assert "Rating changes:" in text and "alice 1600 -> " in text
    assert moves_of(runtime, "toy")[-1] == (1, "resign")
    status, result, _ = board_status(runtime)
    assert status == "finished" and result is not None and result["winners"] == [0] and result["ratings"]


# X (alice) a1 c3, O (the bot) b2: a drawn game, until O's a3 lets X's c1
# threaten b1 and c2 at once
BLUNDER_THEN_FORK = ["a1", "b2", "c3", "a3", "c1"]


def test_one_lost_judgement_does_not_resign(runtime: Runtime, clock: FakeClock) -> None:
    """The bot's turn before was not judged lost (it could still draw), so
    it plays on, though this turn is."""
    start(runtime, clock, "alice bot", BLUNDER_THEN_FORK)
    bots_round(runtime, clock)
    assert len(moves_of(runtime, "toy")) == 6 and moves_of(runtime, "toy")[-1][1] != "resign"


def test_a_close_game_is_never_resigned(runtime: Runtime, clock: FakeClock) -> None:
    """alice plays the first free square of a fixed order to the end: the
    bot plays the whole game out."""
    signup(runtime, "alice", "secret1")
    send(runtime, "alice@example.org", "toy challenge alice bot")
    while board_status(runtime)[0] == "active":
        taken = {move for _, move in moves_of(runtime, "toy")}
        alice(runtime, clock, f"move {next(square for square in ('b2', 'a1', 'c3', 'a3', 'c1', 'b1', 'a2', 'b3', 'c2') if square not in taken)}")
        if board_status(runtime)[0] == "active":
            bots_round(runtime, clock)
    assert "resign" not in {move for _, move in moves_of(runtime, "toy")}
    status, result, _ = board_status(runtime)
    assert status == "finished" and result is not None and "resigned" not in str(result["reason"])


def test_an_undo_request_is_accepted_and_the_bot_moves_again(runtime: Runtime, clock: FakeClock) -> None:
    start(runtime, clock, "alice bot", ["b2", "a1", "c3"])
    alice(runtime, clock, "move undo")
    [(_, answered)] = bots_round(runtime, clock)
    assert "move 3 is taken back" in " ".join(body(answered).split())
    assert moves_of(runtime, "toy") == [(0, "b2"), (1, "a1")]
    assert bots_round(runtime, clock) == []  # alice's turn again: the bot has nothing to do
    alice(runtime, clock, "move c1")
    bots_round(runtime, clock)
    assert len(moves_of(runtime, "toy")) == 4


def test_an_undo_after_the_bots_answer_takes_back_both_moves(runtime: Runtime, clock: FakeClock) -> None:
    """alice's undo once the bot has answered her move takes back her move
    and the answer: it is her turn again, and the bot's next turn is a new
    one (its mail another Message-ID)."""
    start(runtime, clock, "alice bot", ["b2", "a1"])
    alice(runtime, clock, "move undo")
    [(_, answered)] = bots_round(runtime, clock)
    assert "moves 1 and 2 are taken back" in " ".join(body(answered).split())
    assert moves_of(runtime, "toy") == []
    assert bots_round(runtime, clock) == []
    alice(runtime, clock, "move c3")
    bots_round(runtime, clock)
    assert [text for _, text in moves_of(runtime, "toy")][0] == "c3" and len(moves_of(runtime, "toy")) == 2


def test_a_draw_is_accepted_when_the_bot_is_losing_on_its_turn(runtime: Runtime, clock: FakeClock) -> None:
    start(runtime, clock, "alice bot", FORKED)
    alice(runtime, clock, "move propose")
    [(_, drawn)] = bots_round(runtime, clock)
    assert "Game drawn: the players agreed to a draw." in body(drawn)
    status, result, _ = board_status(runtime)
    assert status == "finished" and result is not None and result["winners"] == []
    assert len(moves_of(runtime, "toy")) == 5  # the bot answered, and did not move


def test_a_draw_is_accepted_when_the_bot_is_losing_on_alices_turn(runtime: Runtime, clock: FakeClock) -> None:
    start(runtime, clock, "alice bot", [*FORKED, "a2"])  # alice to move, with two wins
    alice(runtime, clock, "move propose")
    bots_round(runtime, clock)
    status, result, _ = board_status(runtime)
    assert status == "finished" and result is not None and result["winners"] == []


# the bot (X) a1 c1 a3, alice (O) b3 c3: the bot threatens b1, a2 and b2 at once
BOT_FORKS = ["a1", "b3", "c1", "c3", "a3"]


def test_a_draw_is_rejected_on_alices_turn_when_the_bot_is_winning(runtime: Runtime, clock: FakeClock) -> None:
    start(runtime, clock, "bot alice", BOT_FORKS)
    alice(runtime, clock, "move propose")
    [(_, rejected)] = bots_round(runtime, clock)
    assert "bot rejects alice's draw offer." in " ".join(body(rejected).split())
    assert board_status(runtime)[0] == "active" and board_status(runtime)[2] is None
    assert bots_round(runtime, clock) == []  # alice's turn: nothing more to do


def test_a_draw_is_rejected_on_the_bots_turn_when_it_is_winning_and_then_it_moves(runtime: Runtime, clock: FakeClock) -> None:
    start(runtime, clock, "bot alice", [*BOT_FORKS, "b2"])
    alice(runtime, clock, "move propose")
    [(_, rejected)] = bots_round(runtime, clock)
    assert "bot rejects alice's draw offer." in " ".join(body(rejected).split())
    assert len(moves_of(runtime, "toy")) == 6  # it answered first: its move waits for the next round
    bots_round(runtime, clock)
    status, result, _ = board_status(runtime)
    assert status == "finished" and result is not None and result["winners"] == [0]


def test_a_proposal_is_answered_once_by_two_runners(runtime: Runtime, clock: FakeClock) -> None:
    """Two runners (or one restarted after storing its answer) judge the
    same draw offer: both answers are the same mail, stored once."""
    start(runtime, clock, "alice bot", ["b2", "a1"])
    alice(runtime, clock, "move propose")
    assert runtime.catalog is not None
    for _ in range(2):
        play_due_turns(runtime.engine, runtime.intake, runtime.catalog, runtime.clock, iterations=ITERATIONS)
    assert isinstance(runtime.backend, MemoryBackend)
    runtime.backend.sent.clear()
    runtime.processor.process_pending()
    runtime.delivery.deliver_due()
    [(_, answered)] = runtime.backend.sent
    assert b"draw offer" in answered
    assert bot_mails_stored(runtime) == 2  # its move a1 and one answer
    with reading(runtime.engine) as connection:
        assert due_answers(connection, runtime.catalog, runtime.intake.key, runtime.settings.address) == []


def test_a_bots_runner_killed_while_judging_a_draw_offer_answers_it_once(tmp_path: Path) -> None:
    """`pbmserv bots --once` killed (SIGKILL) while the strong bot judges a
    draw offer, then run twice more: the offer is answered once."""
    receive_signup(tmp_path, "alice", "secret1")
    for subject in ("toy challenge -bot=strong alice bot", "toy move 101 alice secret1 b2"):
        assert receive(tmp_path, make_mail("alice@example.org", subject)).returncode == 0
    bots = [str(BIN / "pbmserv"), "bots", "--once"]
    assert subprocess.run(bots, env=env_for(tmp_path), cwd=tmp_path, timeout=120).returncode == 0  # its move
    assert receive(tmp_path, make_mail("alice@example.org", "toy move 101 alice secret1 propose")).returncode == 0
    runner = subprocess.Popen(bots, env=env_for(tmp_path), cwd=tmp_path, stderr=subprocess.PIPE)
    time.sleep(2.0)  # imports and the start of the strong bot's search of about 4.5 s
    runner.kill()
    runner.wait(timeout=30)
    assert runner.returncode == -signal.SIGKILL
    for _ in range(2):
        assert subprocess.run(bots, env=env_for(tmp_path), cwd=tmp_path, timeout=120).returncode == 0
    answers = [
        mail for mail in maildir_mails(tmp_path)
        if "draw offer" in " ".join(body(mail).split()) and ("bot-strong rejects" in body(mail) or "accepted by every player" in body(mail))
    ]
    assert len(answers) == 1


class ToyWithoutDraws(Toy):
    draws = False


def test_a_draw_offer_in_a_game_without_draws_is_rejected_however_the_bot_stands(runtime: Runtime, clock: FakeClock) -> None:
    """The server refuses such an offer (tests/transcripts/65-no-draws.txt);
    should one reach the bot all the same, it does not end the game drawn."""
    start(runtime, clock, "alice bot", FORKED)  # the bot is lost: with draws it accepts (above)
    with reading(runtime.engine) as connection:
        board = records.find_board(connection, "toy", 101)
        assert board is not None
        state = replay(ToyWithoutDraws(), board, records.board_moves(connection, board.id))
    offered = replace(board, proposal={"kind": "draw", "by": 0, "accepted": [0]})
    assert answer(ToyWithoutDraws(), offered, state, 1, "judge", ITERATIONS) == "reject"
    assert answer(Toy(), offered, state, 1, "judge", ITERATIONS) == "accept"
