"""Random full games of one game per option set (uniformly random legal
moves, fixed seed): games/s, moves/s and ms per game, one line per set.
Every bench_<game>.py script is this with its game's option sets."""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Mapping, Sequence

from pbmserv.gamekit import Game

PLAYERS = ["alice", "bob"]


def bench(game: Game, options: Mapping[str, str | None], seconds: float, seed: int = 1) -> str:
    rng = random.Random(seed)
    game.new(options, PLAYERS)  # a game's lookup tables are built once, not timed
    games = moves = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = game.new(options, PLAYERS)
        while game.outcome(state) is None:
            seat = rng.choice(sorted(game.to_move(state)))
            state = game.play(state, seat, rng.choice(game.legal_moves(state, seat)))
            moves += 1
        games += 1
    elapsed = time.perf_counter() - start
    label = " ".join(f"-{name}" if value is None else f"-{name}={value}" for name, value in options.items())
    return (
        f"{game.name:<12} {label or '(defaults)':<30} {games / elapsed:8.1f} games/s"
        f" {moves / elapsed:9.1f} moves/s {1000 * elapsed / max(games, 1):8.1f} ms/game"
    )


def main(option_sets: Sequence[tuple[Game, Mapping[str, str | None]]]) -> None:
    """Run every option set for argv[1] seconds (default 3)."""
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    for game, options in option_sets:
        print(bench(game, options, seconds), flush=True)
