"""Checks every game must pass, driven by random play.

Game test modules call `check_random_game(game, options, seed)` from a
hypothesis test; it plays one random game to its end and checks the plugin
contract at every step.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Iterable, Mapping

from pbmserv.gamekit import Game, IllegalMove, Outcome
from pbmserv.gamekit.search import choose_move

PLAYERS = ("alice", "bob")

#: the bots' move is asked for (and checked) every this many turns
BOT_EVERY = 25
#: texts no game accepts as a move
GARBAGE_MOVES = ("", "   ", "zz99", "a0", "?", "a1,a1,a1,a1,a1", "move", "-1", "a1;drop table")


def snapshot(game: Game, state: object) -> str:
    return json.dumps(game.encode(state), sort_keys=True)


def check_random_game(
    game: Game,
    options: Mapping[str, str | None],
    seed: int,
    *,
    max_turns: int = 20_000,
    extra_refused: Callable[[object, int], Iterable[str]] | None = None,
    check_views: Callable[[Game, object], None] | None = None,
) -> tuple[object, Outcome]:
    """Play one random game; returns the final state and its outcome.

    At every step: someone may move; every seat allowed to move has legal
    moves, as values whose texts are `legal_moves` and read back as
    themselves; the chosen legal move is accepted; `play` leaves its input alone;
    encode/decode round-trips to an equivalent state; seats not to move and a
    few garbage texts are refused; the bot's move (every BOT_EVERY turns, the
    easy bot's search cut to two iterations) is a legal move the game
    accepts; viewers that `viewpoint` says share a view are shown the same
    board. `extra_refused(state, seat)` can add texts
    that must be refused; `check_views(game, state)` can check renders.
    """
    rng = random.Random(seed)
    state = game.new(options, list(PLAYERS))
    for turn in range(max_turns):
        outcome = game.outcome(state)
        if check_views is not None:
            check_views(game, state)
        views = {viewer: game.render(state, viewer) for viewer in (None, 0, 1)}
        for viewer, text in views.items():
            assert text.strip()
            assert text == views[game.viewpoint(state, viewer)], "viewers with one viewpoint see different boards"
        if outcome is not None:
            assert game.to_move(state) == frozenset()
            assert all(0 <= seat < len(PLAYERS) for seat in outcome.winners)
            return state, outcome
        seats = game.to_move(state)
        assert seats, "a running game must have someone to move"
        mover = min(seats)
        for seat in range(len(PLAYERS)):
            if seat not in seats:
                for text in game.legal_moves(state, mover)[:3]:
                    assert_refused(game, state, seat, text, "a seat that is not to move")
        seat = rng.choice(sorted(seats))
        legal = game.legal_moves(state, seat)
        assert legal, "a seat to move must have a legal move"
        assert len(set(legal)) == len(legal), "legal_moves lists each move once"
        values = game.moves(state, seat)
        assert [str(value) for value in values] == legal, "legal_moves is moves as text, in its order"
        for text in GARBAGE_MOVES:
            assert_refused(game, state, seat, text, "garbage")
        if extra_refused is not None:
            for text in extra_refused(state, seat):
                assert_refused(game, state, seat, text, "extra_refused")
        if turn % BOT_EVERY == 0:
            bot_move = choose_move(game, state, seat, strength="easy", iterations=2, seconds=60.0, rng=rng)
            assert bot_move in legal, f"the bot chose {bot_move!r}, which is not a legal move"
            game.play(state, seat, bot_move)
        move = rng.choice(legal)
        before = snapshot(game, state)
        deep_before = copy.deepcopy(state)
        decoded = game.decode(json.loads(before))
        following = game.play(state, seat, move)
        value = values[legal.index(move)]
        assert game.read_move(state, seat, move) == value, "a listed move reads back from its text as itself"
        assert snapshot(game, game.apply(state, seat, value)) == snapshot(game, following)
        assert snapshot(game, state) == before, "play mutated its input"
        assert state == deep_before, "play mutated its input"
        assert snapshot(game, game.play(decoded, seat, move)) == snapshot(game, following)
        assert game.legal_moves(decoded, seat) == legal
        state = following
    raise AssertionError(f"game did not end within {max_turns} turns")


def assert_refused(game: Game, state: object, seat: int, text: str, why: str) -> None:
    try:
        game.play(state, seat, text)
    except IllegalMove as error:
        assert error.message.strip(), "IllegalMove needs a reason for the player"
        return
    raise AssertionError(f"{why}: {text!r} was accepted")
