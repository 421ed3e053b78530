"""A game's cheap `example_move` is the first of its `legal_moves`, in every
position of random games (the server shows it under every board mail to
the player to move)."""

from __future__ import annotations

import random

import pytest

from pbmserv.gamekit import Game, get_game

GAMES = [("majorities", {"size": "5"}), ("plurality", {}), ("plurality", {"board": "hex", "size": "5"})]


@pytest.mark.parametrize(("name", "options"), GAMES)
def test_the_example_move_is_the_first_legal_move(name: str, options: dict[str, str | None]) -> None:
    game: Game = get_game(name)
    for seed in range(3):
        rng = random.Random(seed)
        state = game.new(options, ["alice", "bob"])
        while game.outcome(state) is None:
            for seat in (0, 1):
                legal = game.legal_moves(state, seat)
                assert game.example_move(state, seat) == (legal[0] if legal else "")
            [seat] = game.to_move(state)
            state = game.play(state, seat, rng.choice(game.legal_moves(state, seat)))
