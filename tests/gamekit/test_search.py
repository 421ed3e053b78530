"""The bots' search: legal, sensible and repeatable moves on every game."""

from __future__ import annotations

import random
from collections.abc import Mapping

import pytest

from pbmserv.gamekit import Game, get_game
from pbmserv.gamekit.search import choose_move, greedy_move
from tests.toygame import Toy

PLAYERS = ["alice", "bob"]

OPTION_SETS: list[tuple[Game, Mapping[str, str | None]]] = [
    (Toy(), {}),
    (Toy(), {"secret": None}),
    (get_game("majorities"), {"size": "3"}),
    (get_game("majorities"), {"size": "7"}),
    (get_game("majority"), {"size": "6"}),
    (get_game("psychomachia"), {"size": "6"}),
    (get_game("plurality"), {"size": "13"}),
    (get_game("plurality"), {"board": "hex", "size": "5"}),
    (get_game("parliament"), {"boards": "upper"}),
    (get_game("parliament"), {"boards": "both"}),
    (get_game("synch"), {"size": "4"}),
    (get_game("synch"), {"size": "8", "order": "direction-first"}),
]


def played(game: Game, options: Mapping[str, str | None], moves: list[tuple[int, str]]) -> object:
    state = game.new(options, PLAYERS)
    for seat, move in moves:
        state = game.play(state, seat, move)
    return state


def random_position(game: Game, options: Mapping[str, str | None], rng: random.Random) -> object:
    """A running position after a random number of random moves."""
    state = game.new(options, PLAYERS)
    for _ in range(rng.randrange(0, 40)):
        seat = min(game.to_move(state))
        after = game.play(state, seat, rng.choice(game.legal_moves(state, seat)))
        if game.outcome(after) is not None:
            break
        state = after
    return state


@pytest.mark.parametrize(("game", "options"), OPTION_SETS, ids=lambda value: str(getattr(value, "name", value)))
def test_every_chosen_move_is_legal(game: Game, options: Mapping[str, str | None]) -> None:
    rng = random.Random(7)
    for _ in range(3):
        state = random_position(game, options, rng)
        for seat in sorted(game.to_move(state)):
            for strength in ("easy", "normal"):  # children added at random, and best first
                move = choose_move(game, state, seat, strength=strength, iterations=15, seconds=30, rng=rng)
                assert move in game.legal_moves(state, seat)


def test_the_bot_takes_a_win_in_one() -> None:
    toy = Toy()
    # X: a1 b1, O: a2 b2; X to move wins with c1 (and O would win with c2)
    state = played(toy, {}, [(0, "a1"), (1, "a2"), (0, "b1"), (1, "b2")])
    assert choose_move(toy, state, 0, strength="easy", rng=random.Random(1)) == "c1"


def test_the_bot_blocks_the_opponents_win_in_one() -> None:
    toy = Toy()
    # X: a1 b1, O: b2; O to move must take c1 or lose
    state = played(toy, {}, [(0, "a1"), (1, "b2"), (0, "b1")])
    assert choose_move(toy, state, 1, iterations=400, seconds=30, rng=random.Random(1)) == "c1"


def test_the_bot_wins_majorities_in_one() -> None:
    majorities = get_game("majorities")
    rng = random.Random(3)
    state = majorities.new({"size": "3"}, PLAYERS)
    while True:
        seat = min(majorities.to_move(state))
        winning = [m for m in majorities.legal_moves(state, seat)
                   if seat in getattr(majorities.outcome(majorities.play(state, seat, m)), "winners", ())]
        if winning:
            break
        state = majorities.play(state, seat, rng.choice(majorities.legal_moves(state, seat)))
    move = choose_move(majorities, state, seat, strength="easy", rng=random.Random(1))
    outcome = majorities.outcome(majorities.play(state, seat, move))
    assert outcome is not None and outcome.winners == (seat,)


def test_one_seed_gives_one_move() -> None:
    majorities = get_game("majorities")
    state = random_position(majorities, {"size": "5"}, random.Random(11))
    seat = min(majorities.to_move(state))
    moves = {choose_move(majorities, state, seat, iterations=150, seconds=60, rng=random.Random(5)) for _ in range(3)}
    assert len(moves) == 1


def test_an_unknown_strength_or_a_seat_not_to_move_is_refused() -> None:
    toy = Toy()
    state = toy.new({}, PLAYERS)
    with pytest.raises(ValueError, match="strength"):
        choose_move(toy, state, 0, strength="brutal", rng=random.Random(1))
    with pytest.raises(ValueError, match="not to move"):
        choose_move(toy, state, 1, rng=random.Random(1))


def test_determinize_is_the_identity_for_a_game_that_hides_nothing() -> None:
    for game, options in ((Toy(), {}), (get_game("majorities"), {"size": "3"}), (get_game("synch"), {})):
        state = random_position(game, options, random.Random(2))
        assert game.determinize(state, 0, random.Random(1)) is state


def test_with_a_tally_the_bot_beats_the_greedy_player() -> None:
    """Synch on 6x6 runs past the easy bot's playout depth, so its playouts
    are scored by the symbols on the board; the greedy player takes the move
    that draws most symbols at once."""
    synch = get_game("synch")
    for seed in range(4):
        rng = random.Random(seed)
        bot = seed % 2
        state = synch.new({"size": "6"}, PLAYERS)
        while (outcome := synch.outcome(state)) is None:
            seat = min(synch.to_move(state))
            if seat == bot:
                move = choose_move(synch, state, seat, strength="easy", iterations=60, seconds=60, rng=rng)
            else:
                move = greedy_move(synch, state, seat, rng)
            state = synch.play(state, seat, move)
        assert outcome.winners == (bot,), f"seed {seed}: {outcome.reason}"
