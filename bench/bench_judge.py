"""What a bot's search costs per step, for every game word and option set
of the strength benchmark: microseconds to play a move, to judge the
position after it (what ranking a node's moves does for each move) and to
list the legal moves there (what every step of the search does), all on
the game's move values as the search plays them, and how
many iterations the normal bot's search makes in its time.

    .venv/bin/python bench/bench_judge.py [--positions K] [--only WORDS]

Each figure is the median over K positions (default 8) of random games
from a fixed seed, each within a game's first 60 moves and with a choice
of moves; times are the process's CPU time, so a busy machine changes
how long a run takes but not its figures.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_bots import LARGE_SETS, MAIN_SETS, PLAYERS, label  # noqa: E402

from pbmserv.gamekit import Game, get_game, search  # noqa: E402

#: moves played and judged per position (a sample on the largest boards)
MOVES_TIMED = 300


def position(game: Game, options: dict[str, str], rng: random.Random) -> Any:
    """A position of a random game, within its first 60 moves, where the
    player to move has a choice."""
    choices: list[Any] = []
    state = game.new(options, PLAYERS)
    while game.outcome(state) is None and len(choices) < 60:
        seat = min(game.to_move(state))
        moves = game.legal_moves(state, seat)
        if len(moves) > 1:
            choices.append(state)
        state = game.play(state, seat, rng.choice(moves))
    return rng.choice(choices)


def costs(game: Game, state: Any, rng: random.Random) -> tuple[float, float, float, int]:
    """(us to play a move, to judge the position after it and to list the
    moves there, iterations in the normal bot's time)"""
    seat = min(game.to_move(state))
    moves = game.moves(state, seat)
    moves = rng.sample(list(moves), min(len(moves), MOVES_TIMED))
    started = time.process_time()
    after = [game.apply(state, seat, move) for move in moves]
    played = time.process_time()
    for each in after:
        game.judge(each)
    judged = time.process_time()
    going_on = [each for each in after if game.outcome(each) is None]
    for each in going_on:
        game.moves(each, min(game.to_move(each)))
    listed = time.process_time()
    iterations = 0
    iterate = search.iterate

    def counted(*args: Any, **kwargs: Any) -> None:
        nonlocal iterations
        iterations += 1
        iterate(*args, **kwargs)

    search.iterate = counted
    try:
        search.decide(game, state, seat, strength="normal", rng=rng, clock=time.process_time)
    finally:
        search.iterate = iterate
    per_move = 1e6 / len(moves)
    listing = 1e6 * (listed - judged) / len(going_on) if going_on else 0.0
    return per_move * (played - started), per_move * (judged - played), listing, iterations


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--positions", type=int, default=8)
    parser.add_argument("--only", default=None, help="game words or rows, e.g. 'plurality,synch -size=8'")
    args = parser.parse_args()
    wanted = None if args.only is None else set(args.only.split(","))
    print(f"medians over {args.positions} positions; CPU time")
    print(f"{'game':<38} {'play us':>8} {'judge us':>9} {'moves us':>9} {'iterations':>10}")
    for word, options in MAIN_SETS + LARGE_SETS:
        if wanted is not None and word not in wanted and label(word, options) not in wanted:
            continue
        game = get_game(word)
        positions, searches = random.Random(1), random.Random(2)  # apart, so that both versions judge the same positions
        rows = [costs(game, position(game, dict(options), positions), searches) for _ in range(args.positions)]
        play, judge, listing, iterations = (statistics.median(column) for column in zip(*rows))
        print(f"{label(word, options):<38} {play:>8.0f} {judge:>9.0f} {listing:>9.0f} {iterations:>10.0f}", flush=True)


if __name__ == "__main__":
    main()
