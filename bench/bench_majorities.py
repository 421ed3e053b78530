"""Random full games of Majorities: games/s and moves/s per board size.

Run: .venv/bin/python bench/bench_majorities.py [seconds per option set]
"""

from __future__ import annotations

import random
import sys
import time

from games.majorities import Majorities

OPTION_SETS = ({"size": "3"}, {"size": "5"}, {"size": "7"})


def bench(game: Majorities, options: dict[str, str], seconds: float, seed: int = 1) -> None:
    rng = random.Random(seed)
    games = moves = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = game.new(options, ["alice", "bob"])
        while game.outcome(state) is None:
            seat = min(game.to_move(state))
            state = game.play(state, seat, rng.choice(game.legal_moves(state, seat)))
            moves += 1
        games += 1
    elapsed = time.perf_counter() - start
    label = " ".join(f"-{name}={value}" for name, value in options.items())
    print(f"majorities {label:<8} {games / elapsed:9.1f} games/s {moves / elapsed:10.1f} moves/s")


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    game = Majorities()
    for options in OPTION_SETS:
        bench(game, options, seconds)


if __name__ == "__main__":
    main()
