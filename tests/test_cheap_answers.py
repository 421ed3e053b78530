"""Answers that cost the worker little and are bounded (issue 35, F1 and
F4): a position's legal moves are listed once, whoever asks again; a
replay goes on from the states kept on the way; a command stops at the
mail's time inside its replay, not only after it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from pbmserv.config import Settings
from pbmserv.mail.backends import MemoryBackend
from pbmserv.runtime import Runtime
from pbmserv.service.commands import legal
from pbmserv.service.play import replays
from pbmserv.service.processing import processor
from pbmserv.service.processing.catalog import Catalog
from tests.conftest import TEST_PASSWORD_COST, FakeClock
from tests.long_boards import long_synch_board
from tests.mailtools import body, send, signup
from tests.toygame import Toy, ToyState


class CountingToy(Toy):
    """Toy that counts how often its legal moves are listed."""

    def __init__(self) -> None:
        self.listed: list[int] = []

    def legal_moves(self, state: ToyState, seat: int) -> list[str]:
        self.listed.append(seat)
        return super().legal_moves(state, seat)


@pytest.fixture(autouse=True)
def nothing_kept() -> Iterator[None]:
    """Each test starts with nothing kept from another's positions."""
    legal.LISTS.clear()
    replays.STATES.clear()
    yield


@pytest.fixture
def counting(database_url: str, clock: FakeClock, key_file: str) -> Iterator[tuple[Runtime, CountingToy]]:
    game = CountingToy()
    settings = replace(Settings(), database_url=database_url, key_file=key_file, mail_backend="memory", **TEST_PASSWORD_COST)
    runtime = Runtime(settings, catalog=Catalog([game]), clock=clock, backend=MemoryBackend())
    signup(runtime, "alice", "secret1")
    signup(runtime, "bob", "secret2")
    yield runtime, game
    runtime.close()


def multiple(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


def test_the_legal_moves_of_a_position_are_listed_once_however_many_ask(counting: tuple[Runtime, CountingToy]) -> None:
    runtime, game = counting
    send(runtime, "alice@example.org", "toy challenge alice bob")
    game.listed.clear()
    asked = "toy moves 101 alice secret1"
    answers = send(runtime, "alice@example.org", "multiple", multiple([asked] * 20))
    assert len(answers) == 20 and len({body(message) for _, message in answers}) == 1
    assert "Legal moves of alice on Toy board 101, move 1" in body(answers[0][1])
    assert game.listed == [0], "20 answers, one list"
    assert body(send(runtime, "alice@example.org", asked)[0][1]) == body(answers[0][1]), "a later mail: the same bytes"
    assert game.listed == [0]
    send(runtime, "alice@example.org", "toy move 101 alice secret1 b2")
    game.listed.clear()
    answers = send(runtime, "bob@example.org", "multiple", multiple(["toy moves 101 bob secret2"] * 2))
    assert all("  b: 1 3\n" in body(message) for _, message in answers), "a new position, listed anew"
    assert game.listed == [1]


def test_a_list_kept_for_one_seat_is_never_given_to_another(counting: tuple[Runtime, CountingToy]) -> None:
    """Both players are to move (each names a secret square first): each
    gets a list made for their own seat, and nobody gets one without the
    password of the seat it is for."""
    runtime, game = counting
    send(runtime, "alice@example.org", "toy challenge -secret alice bob")
    game.listed.clear()
    [(_, alices)] = send(runtime, "alice@example.org", "toy moves 101 alice secret1")
    [(_, bobs)] = send(runtime, "bob@example.org", "toy moves 101 bob secret2")
    assert game.listed == [0, 1]
    assert "Legal moves of alice" in body(alices) and "Legal moves of bob" in body(bobs)
    [(_, stranger)] = send(runtime, "eve@example.org", "toy moves 101")
    assert "has hidden parts, so only the player to move may see" in body(stranger)
    assert game.listed == [0, 1]


def played_from_the_start(runtime: Runtime, number: int, upto: int) -> Any:
    """The position after move `upto`, replayed move by move without anything kept."""
    from pbmserv.store import records

    assert runtime.catalog is not None
    game = runtime.catalog.get("synch")
    with runtime.engine.connect() as connection:
        board = records.find_board(connection, "synch", number)
        assert board is not None
        state = game.new(board.options, board.seats)
        for seat, text in records.played_moves(connection, board.id, upto):
            state = game.play(state, seat, text)
    return game.render(state, None)


def test_a_replay_goes_on_from_the_states_kept_and_shows_what_a_replay_from_the_start_shows(runtime: Runtime) -> None:
    signup(runtime, "alice", "secret1")
    signup(runtime, "bob", "secret2")
    number = long_synch_board(runtime, 450)
    [(_, cold)] = send(runtime, "eve@example.org", f"synch show {number}#350")
    assert played_from_the_start(runtime, number, 350).rstrip("\n") in body(cold)
    kept = replays.STATES.held
    assert kept > 0, "the states after moves 100, 200, 300 and 350 are kept"
    [(_, warm)] = send(runtime, "eve@example.org", f"synch show {number}#350")
    assert body(warm) == body(cold)
    [(_, later)] = send(runtime, "eve@example.org", f"synch show {number}#399")
    assert played_from_the_start(runtime, number, 399).rstrip("\n") in body(later), "from the state after 300 on"


def test_one_command_stops_at_the_mails_time_inside_its_replay_and_goes_on_when_sent_again(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch,
) -> None:
    signup(runtime, "alice", "secret1")
    signup(runtime, "bob", "secret2")
    number = long_synch_board(runtime, 450)
    monkeypatch.setattr(processor, "MAIL_SECONDS", 0.0)  # the mail's time is up at once
    [(_, refused)] = send(runtime, "eve@example.org", f"synch show {number}#420")
    text = " ".join(body(refused).split())
    assert text.startswith(
        f"Replaying the 420 moves of Move In Synch, In Opposition board {number} takes more of the server's time "
        "than one mail may have (0 s)."
    )
    assert "send the same command again in a mail of its own" in text
    monkeypatch.setattr(processor, "MAIL_SECONDS", 2.0)
    [(_, shown)] = send(runtime, "eve@example.org", f"synch show {number}#420")
    assert "(The position after move 420 of 450.)" in body(shown)
