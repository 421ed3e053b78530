"""Random full games of Plurality: games/s, moves/s and the time of one game
per option set (uniformly random legal moves, pass included, fixed seed).

Run: .venv/bin/python bench/bench_plurality.py [seconds per option set]
"""

from __future__ import annotations

import random
import sys
import time

from games.plurality import Plurality

OPTION_SETS = (
    {"size": "13"},
    {"size": "19"},
    {"size": "13", "ties": "parity"},
    {"board": "hex", "size": "5"},
    {"board": "hex", "size": "8"},
    {"board": "hex", "size": "9"},
)


def bench(game: Plurality, options: dict[str, str], seconds: float, seed: int = 1) -> None:
    rng = random.Random(seed)
    game.new(options, ["alice", "bob"])  # the board's tables are built once, not timed
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
    print(
        f"plurality {label:<24} {games / elapsed:7.1f} games/s {moves / elapsed:9.1f} moves/s"
        f" {1000 * elapsed / games:7.1f} ms/game"
    )


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    game = Plurality()
    for options in OPTION_SETS:
        bench(game, options, seconds)


if __name__ == "__main__":
    main()
