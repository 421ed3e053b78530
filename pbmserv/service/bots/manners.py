"""The bots' judgement beyond their moves: when a bot resigns a game it
cannot save, and how it answers a draw offer or an undo request.

Every judgement is the search's (`gamekit.search.decide`), from what the
bot's seat may know only, and every one is made anew from the board: a
rule that looks back at an earlier turn replays the board's moves to it
rather than remembering it, so a restart or a second runner judges alike.
Nothing here reads or writes the store or sends mail (`service.bot_turns`).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from statistics import fmean
from typing import Any

from pbmserv.gamekit import Game
from pbmserv.gamekit.search import Decision, decide
from pbmserv.service.bots import seats as bots
from pbmserv.service.play.board import replay
from pbmserv.service.play.replays import SERVER_MOVES
from pbmserv.store.records import BoardRecord, MoveRecord

#: a searched win chance below this (a draw counts half) is a lost game
RESIGN_BELOW = 0.03
#: a bot resigns only once it has made this many moves of the game
RESIGN_AFTER_OWN_MOVES = 2
#: the comment below the bot's `resign`, which the players' board mail shows
RESIGN_COMMENT = "Well played, and thank you for the game. I resign."
#: a draw offer is accepted when the bot's win chance is at most this
ACCEPT_DRAW_AT_MOST = 0.5
#: searches, each from a new draw of the hidden information, that judge a
#: position with secrets in which the bot is not to move
JUDGING_DRAWS = 3
EVEN = 0.5


#: what a search counts its seconds on: the think's own time (`service.bot_queue`)
SearchClock = Callable[[], float]


def seeded_decision(
    game: Game, board: BoardRecord, state: Any, seat: int, strength: str, seed: str, iterations: int | None,
    clock: SearchClock = time.perf_counter,
) -> Decision:
    """`seat`'s move in `state` as a bot of `strength` searches it, within
    the strength's budget counted on `clock` (with `iterations`, a search
    of that size, the same in every run)."""
    return decide(
        game, state, seat, strength=strength, seconds=None if iterations is None else 3600.0,
        iterations=iterations, rng=random.Random(f"{game.name}/{board.board}/{seed}"), clock=clock,
    )


def turn_decision(
    game: Game, board: BoardRecord, state: Any, seat: int, number: int, iterations: int | None,
    clock: SearchClock = time.perf_counter,
) -> Decision:
    """The bot's decision for move `number`: the same search whenever that
    turn is judged (its seed is the board and the move number)."""
    return seeded_decision(game, board, state, seat, bots.strength_of(board.seats[seat]), str(number), iterations, clock)


def hopeless(decision: Decision) -> bool:
    return decision.win_chance is not None and decision.win_chance < RESIGN_BELOW


def resigns(
    game: Game, board: BoardRecord, seat: int, decision: Decision, board_moves: Callable[[], list[MoveRecord]],
    iterations: int | None, clock: SearchClock = time.perf_counter,
) -> bool:
    """Whether the bot resigns instead of making `decision`'s move: the
    search finds the game lost, the bot has made its first few moves, and
    the search of its previous turn on this board (replayed from the
    board's moves with that turn's seed) found it lost too, so that one
    search's bad luck never resigns a game. A forced move (no judgement)
    is played."""
    if not hopeless(decision):
        return False
    moves = board_moves()
    own = [move for move in moves if move.seat == seat and move.text not in SERVER_MOVES]
    if len(own) < RESIGN_AFTER_OWN_MOVES:
        return False
    previous = own[-1].number
    state = replay(game, board, [move for move in moves if move.number < previous])
    return hopeless(turn_decision(game, board, state, seat, previous, iterations, clock))


def answer(
    game: Game, board: BoardRecord, state: Any, seat: int, seed: str, iterations: int | None, clock: SearchClock = time.perf_counter,
) -> str:
    """The bot's answer to the proposal open on the board: an undo request
    is accepted (the bot is there to learn from); a draw offer is accepted
    when the game can end drawn and the bot judges its own chance at most
    ACCEPT_DRAW_AT_MOST."""
    assert board.proposal is not None, "a proposal is open"
    if board.proposal["kind"] == "undo":
        return "accept"
    if not game.draws:
        return "reject"
    return "accept" if win_chance(game, board, state, seat, seed, iterations, clock) <= ACCEPT_DRAW_AT_MOST else "reject"


def win_chance(
    game: Game, board: BoardRecord, state: Any, seat: int, seed: str, iterations: int | None, clock: SearchClock = time.perf_counter,
) -> float:
    """The bot's chance in the position, from what its seat may know: its
    own search when it is to move; else (two players) what the search of
    the player to move leaves it, that player's secrets drawn from the
    bot's view, a few times over if there are any. EVEN when nothing can
    be judged (a forced move, more than two players)."""
    to_move = game.to_move(state)
    strength = bots.strength_of(board.seats[seat])
    if seat in to_move:
        return _or_even(seeded_decision(game, board, state, seat, strength, seed, iterations, clock).win_chance)
    if len(board.seats) != 2 or not to_move:
        return EVEN
    mover = min(to_move)
    rng = random.Random(f"{game.name}/{board.board}/{seed}/draws")
    drawn = [game.determinize(state, seat, rng)]
    if drawn[0] is not state:  # the game hides something from the bot: judge more than one guess at it
        drawn += [game.determinize(state, seat, rng) for _ in range(JUDGING_DRAWS - 1)]
    chances = [
        seeded_decision(game, board, guess, mover, strength, f"{seed}/{index}", iterations, clock).win_chance
        for index, guess in enumerate(drawn)
    ]
    judged = [chance for chance in chances if chance is not None]
    return 1.0 - fmean(judged) if judged else EVEN


def _or_even(chance: float | None) -> float:
    return EVEN if chance is None else chance
