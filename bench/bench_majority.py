"""Random full games of Majority and Psychomachia (uniformly random legal
moves, fixed seed): games/s and moves/s per option set.

Run: .venv/bin/python bench/bench_majority.py [seconds per option set]
"""

from __future__ import annotations

import random
import sys
import time

from games.majority import Majority, Psychomachia

OPTION_SETS = (
    (Majority(), {"size": "6"}),
    (Majority(), {}),
    (Majority(), {"size": "14"}),
    (Psychomachia(), {"size": "6"}),
    (Psychomachia(), {}),
    (Psychomachia(), {"size": "14"}),
)


def bench(game: Majority, options: dict[str, str], seconds: float, seed: int = 1) -> None:
    rng = random.Random(seed)
    games = moves = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = game.new(options, ["alice", "bob"])
        while game.outcome(state) is None:
            seat = rng.choice(sorted(game.to_move(state)))
            state = game.play(state, seat, rng.choice(game.legal_moves(state, seat)))
            moves += 1
        games += 1
    elapsed = time.perf_counter() - start
    label = " ".join(f"-{name}={value}" for name, value in options.items()) or "(defaults)"
    print(f"{game.name:<12} {label:<10} {games / elapsed:9.1f} games/s {moves / elapsed:10.1f} moves/s")


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    for game, options in OPTION_SETS:
        bench(game, options, seconds)


if __name__ == "__main__":
    main()
