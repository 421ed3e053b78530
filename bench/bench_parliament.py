"""Random full games of Parliament: games/s and moves/s per option set.

Run: .venv/bin/python bench/bench_parliament.py [seconds per option set]
"""

from __future__ import annotations

import random
import sys
import time

from games.parliament import Parliament

OPTION_SETS = ({"boards": "upper"}, {"boards": "lower"}, {"boards": "both"})


def play_one(game: Parliament, options: dict[str, str], rng: random.Random) -> int:
    state = game.new(options, ["alice", "bob"])
    moves = 0
    while game.outcome(state) is None:
        seat = rng.choice(sorted(game.to_move(state)))
        state = game.play(state, seat, rng.choice(game.legal_moves(state, seat)))
        moves += 1
    return moves


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    game = Parliament()
    for options in OPTION_SETS:
        rng = random.Random(2019)
        games = moves = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            moves += play_one(game, options, rng)
            games += 1
        elapsed = time.perf_counter() - start
        label = " ".join(f"-{name}={value}" for name, value in options.items())
        print(f"{label:16} {games / elapsed:8.1f} games/s {moves / elapsed:10.0f} moves/s")


if __name__ == "__main__":
    main()
