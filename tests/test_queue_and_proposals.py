"""`queue`, `preview` and `move ... propose|undo|accept|reject` at the service
level: what the transcripts do not show — stored rows, secrecy of a queued
move, refused commands that change nothing, undo as a replay, the parser."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from pbmserv.protocol import parse_command, parse_request
from pbmserv.protocol.commands import BoardRef, Preview, Proposal, Queue
from pbmserv.protocol.errors import BadArgument, MissingArgument
from pbmserv.runtime import Runtime
from pbmserv.store.models import Board, Move, QueuedMove, Rating
from tests.mailtools import body, send, signup
from tests.test_reliability import snapshot
from tests.toygame import Toy


def everything(runtime: Runtime) -> dict[str, list[Any]]:
    with runtime.sessions() as session:
        return {
            **snapshot(runtime),
            "queued": [(q.board_id, q.seat, q.text) for q in session.scalars(select(QueuedMove).order_by(QueuedMove.id))],
            "proposals": [b.proposal for b in session.scalars(select(Board).order_by(Board.id))],
        }


def board_101(runtime: Runtime) -> tuple[Board, list[Move], list[QueuedMove]]:
    with runtime.sessions() as session:
        board = session.scalar(select(Board).where(Board.board == 101))
        moves = list(session.scalars(select(Move).where(Move.board_id == board.id).order_by(Move.number)))
        queued = list(session.scalars(select(QueuedMove).where(QueuedMove.board_id == board.id)))
        session.expunge_all()
        return board, moves, queued


@pytest.fixture
def game_on(runtime: Runtime) -> Runtime:
    """alice (X, to move) and bob (O) on toy board 101; carol watches."""
    for userid in ("alice", "bob", "carol"):
        signup(runtime, userid, f"{userid}-pw")
    send(runtime, "alice@example.org", "toy challenge alice bob")
    send(runtime, "carol@example.org", "toy subscribe 101 carol carol-pw")
    return runtime


# -- parser -----------------------------------------------------------------------
def test_the_new_commands_parse() -> None:
    assert parse_command("toy queue 101 bob pw hide d7", ["toy"]) == Queue("toy", 101, "bob", "pw", "hide d7")
    assert parse_command("toy preview 101#3 bob pw a1; b2 ;", ["toy"]) == Preview(
        "toy", BoardRef(101, 3), "bob", "pw", ("a1", "b2"),
    )
    assert parse_command("toy move 101 bob pw Accept#4", ["toy"]) == Proposal("toy", 101, "bob", "pw", "accept", 4)


@pytest.mark.parametrize(("text", "error"), [
    ("toy queue 101 bob pw", MissingArgument),
    ("toy queue 101 bob pw undo", BadArgument),
    ("toy queue x bob pw a1", BadArgument),
    ("toy preview 101 bob pw ;", MissingArgument),
    ("toy preview 101#x bob pw a1", BadArgument),
])
def test_the_new_commands_refuse_bad_lines(text: str, error: type) -> None:
    with pytest.raises(error):
        parse_command(text, ["toy"])


@pytest.mark.parametrize("text", [
    "toy queue 101 bob secret a1", "toy preview 101#2 bob secret a1", "toy move 101 bob secret propose",
    "toy queue 101 bob secret",
])
def test_passwords_of_the_new_commands_are_masked(text: str) -> None:
    assert "secret" in parse_request(text, "", ["toy"]).passwords


# -- queue --------------------------------------------------------------------------
def test_a_queued_move_is_secret_until_played(game_on: Runtime) -> None:
    replies = send(game_on, "bob@example.org", "toy queue 101 bob bob-pw c3")
    assert [to for to, _ in replies] == ["bob@example.org"]
    for userid in ("alice", "carol"):
        [(_, shown)] = send(game_on, f"{userid}@example.org", "toy show 101")
        assert "c3" not in body(shown)
    by_recipient = dict(send(game_on, "alice@example.org", "toy move 101 alice alice-pw a1"))
    assert "2. bob c3 (Auto)" in body(by_recipient["carol@example.org"])


def test_a_new_queue_replaces_the_old_one_and_the_move_is_played_in_the_same_step(game_on: Runtime) -> None:
    send(game_on, "bob@example.org", "toy queue 101 bob bob-pw a2")
    send(game_on, "bob@example.org", "toy queue 101 bob bob-pw c3")
    assert [q.text for q in board_101(game_on)[2]] == ["c3"]
    send(game_on, "alice@example.org", "toy move 101 alice alice-pw a1")
    board, moves, queued = board_101(game_on)
    assert [(m.text, m.auto, m.comment) for m in moves] == [("a1", False, ""), ("c3", True, "")]
    assert queued == [] and board.move_count == 2
    assert Toy().decode(board.state).marks[2][2] == "O"


def test_an_illegal_queued_move_is_dropped_with_a_mail_to_its_owner(game_on: Runtime) -> None:
    send(game_on, "bob@example.org", "toy queue 101 bob bob-pw a1")
    replies = send(game_on, "alice@example.org", "toy move 101 alice alice-pw a1", "my comment")
    dropped = [message for to, message in replies if "dropped" in message["Subject"]]
    assert [to for to, message in replies if "dropped" in message["Subject"]] == ["bob@example.org"]
    assert "a1 is taken" in body(dropped[0])
    board, moves, queued = board_101(game_on)
    assert [m.text for m in moves] == ["a1"] and queued == [] and board.move_count == 1


def test_a_queued_move_that_ends_the_game_finishes_it(game_on: Runtime) -> None:
    for mover, square in (("alice", "a1"), ("bob", "b1"), ("alice", "a2"), ("bob", "b2")):
        send(game_on, f"{mover}@example.org", f"toy move 101 {mover} {mover}-pw {square}")
    send(game_on, "bob@example.org", "toy move 101 bob bob-pw propose")
    send(game_on, "alice@example.org", "toy move 101 alice alice-pw c3")
    send(game_on, "alice@example.org", "toy queue 101 alice alice-pw a3")
    replies = dict(send(game_on, "bob@example.org", "toy move 101 bob bob-pw c1"))
    assert "Game won by alice" in body(replies["bob@example.org"])
    board, moves, queued = board_101(game_on)
    assert board.status == "finished" and moves[-1].auto and queued == [] and board.proposal is None


def test_a_refused_queue_changes_nothing(game_on: Runtime) -> None:
    before = everything(game_on)
    send(game_on, "alice@example.org", "toy queue 101 alice alice-pw a1")  # alice is to move
    send(game_on, "carol@example.org", "toy queue 101 carol carol-pw a1")
    assert everything(game_on) == before


# -- preview --------------------------------------------------------------------------
def test_a_preview_saves_nothing(game_on: Runtime) -> None:
    before = everything(game_on)
    [(to, message)] = send(game_on, "bob@example.org", "toy preview 101 bob bob-pw a1; b1; a2")
    assert to == "bob@example.org" and "It would be bob's turn." in body(message)
    send(game_on, "bob@example.org", "toy preview 101 bob bob-pw a1; a1")
    assert everything(game_on) == before


# -- proposals --------------------------------------------------------------------------
def test_an_accepted_undo_is_a_replay_without_the_proposers_last_move_and_all_after_it(game_on: Runtime) -> None:
    send(game_on, "bob@example.org", "toy queue 101 bob bob-pw c3")
    send(game_on, "alice@example.org", "toy move 101 alice alice-pw a1")  # bob's queued c3 answers at once
    send(game_on, "bob@example.org", "toy move 101 bob bob-pw undo")
    assert board_101(game_on)[0].proposal == {"kind": "undo", "by": 1, "accepted": [1], "from": 2}
    send(game_on, "alice@example.org", "toy move 101 alice alice-pw accept")
    board, moves, _ = board_101(game_on)
    toy = Toy()
    assert [m.text for m in moves] == ["a1"] and board.move_count == 1 and board.proposal is None
    assert board.state == toy.encode(toy.play(toy.new({}, ["alice", "bob"]), 0, "a1"))
    send(game_on, "alice@example.org", "toy move 101 alice alice-pw undo")
    send(game_on, "bob@example.org", "toy move 101 bob bob-pw accept")
    board, moves, _ = board_101(game_on)
    assert moves == [] and board.move_count == 0 and board.state == toy.encode(toy.new({}, ["alice", "bob"]))


def test_an_undo_needs_a_move_of_ones_own(game_on: Runtime) -> None:
    before = everything(game_on)
    replies = dict(send(game_on, "bob@example.org", "toy move 101 bob bob-pw undo"))
    assert "You have made no move on board 101 to take back." in body(replies["bob@example.org"])
    assert everything(game_on) == before


def test_a_move_lets_an_open_proposal_lapse(game_on: Runtime) -> None:
    send(game_on, "bob@example.org", "toy move 101 bob bob-pw propose")
    assert board_101(game_on)[0].proposal == {"kind": "draw", "by": 1, "accepted": [1]}
    replies = send(game_on, "alice@example.org", "toy move 101 alice alice-pw a1")
    assert board_101(game_on)[0].proposal is None
    assert {"alice@example.org", "bob@example.org"} <= {recipient for recipient, _ in replies}
    for _, reply in replies:  # the players (and any watcher) learn that the offer is gone
        assert "bob's draw offer lapses with this move." in reply.get_content()
    replies = send(game_on, "bob@example.org", "toy move 101 bob bob-pw b2")
    assert all("lapses" not in reply.get_content() for _, reply in replies), "only the move that ended it says so"


def test_refused_proposals_change_nothing(game_on: Runtime) -> None:
    send(game_on, "bob@example.org", "toy move 101 bob bob-pw propose")
    before = everything(game_on)
    send(game_on, "alice@example.org", "toy move 101 alice alice-pw undo")  # one open at a time
    send(game_on, "bob@example.org", "toy move 101 bob bob-pw accept")  # own offer
    send(game_on, "carol@example.org", "toy move 101 carol carol-pw reject")  # not a player
    send(game_on, "alice@example.org", "toy move 101 alice wrong accept")
    assert everything(game_on) == before


def test_an_accepted_draw_is_rated_as_a_draw(game_on: Runtime) -> None:
    for number, square in enumerate(("a1", "b1", "c1", "b2")):  # two moves each: the board counts
        who = ("alice", "bob")[number % 2]
        send(game_on, f"{who}@example.org", f"toy move 101 {who} {who}-pw {square}")
    send(game_on, "bob@example.org", "toy move 101 bob bob-pw propose")
    replies = dict(send(game_on, "alice@example.org", "toy move 101 alice alice-pw accept"))
    assert "Game drawn: the players agreed to a draw." in body(replies["carol@example.org"])
    with game_on.sessions() as session:
        assert sorted((r.won, r.lost, r.drawn) for r in session.scalars(select(Rating))) == [(0, 0, 1), (0, 0, 1)]
