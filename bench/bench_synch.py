"""Random full games of Move In Synch, In Opposition: games/s and moves/s per
option set (uniformly random legal moves, fixed seed). A "move" here is one
text a player sends: a placement or one half of a move.

Run: .venv/bin/python bench/bench_synch.py [seconds per option set]
"""

from __future__ import annotations

import random
import sys
import time

from games.synch import Synch

OPTION_SETS = (
    {"size": "4"},
    {"size": "8"},
    {"size": "8", "order": "direction-first"},
    {"size": "16"},
    {"size": "26"},
    {"size": "26", "order": "direction-first"},
)


def bench(game: Synch, options: dict[str, str], seconds: float, seed: int = 1) -> None:
    rng = random.Random(seed)
    games = moves = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = game.new(options, ["alice", "bob"])
        while game.outcome(state) is None:
            (seat,) = game.to_move(state)
            state = game.play(state, seat, rng.choice(game.legal_moves(state, seat)))
            moves += 1
        games += 1
    elapsed = time.perf_counter() - start
    label = " ".join(f"-{name}={value}" for name, value in options.items())
    print(f"synch {label:<34} {games / elapsed:9.1f} games/s {moves / elapsed:10.1f} moves/s")


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    game = Synch()
    for options in OPTION_SETS:
        bench(game, options, seconds)


if __name__ == "__main__":
    main()
