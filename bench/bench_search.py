"""The bots' search at a fixed size: the normal bot's search
(`search.decide`) cut to a fixed number of iterations on a few positions of
every game word and main option set, reached by seeded random play. It
prints the CPU milliseconds of a search and a digest of the moves chosen,
which is the same in every run of one version of the search (and in two
versions that choose alike).

    .venv/bin/python bench/bench_search.py [--iterations 300] [--positions 3] [--only WORDS]

Time a whole run from outside to compare two versions; the digests tell
whether they chose the same moves.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_bots import MAIN_SETS, PLAYERS, label  # noqa: E402

from pbmserv.gamekit import Game, get_game  # noqa: E402
from pbmserv.gamekit.search import decide  # noqa: E402

#: random moves played from a new game to a position, at most
DEPTH = 40


def position(game: Game, options: Mapping[str, str], seed: int) -> Any:
    """A running position reached by random play seeded by `seed`."""
    rng = random.Random(seed)
    state = game.new(options, PLAYERS)
    for _ in range(rng.randrange(DEPTH)):
        seat = min(game.to_move(state))
        following = game.play(state, seat, rng.choice(game.legal_moves(state, seat)))
        if game.outcome(following) is not None:
            break
        state = following
    return state


def search(word: str, options: Mapping[str, str], positions: int, iterations: int) -> tuple[float, list[str]]:
    """CPU seconds of the searches on `positions` positions, and the moves they chose."""
    game = get_game(word)
    chosen = []
    spent = 0.0
    for seed in range(positions):
        state = position(game, options, seed)
        started = time.process_time()
        decision = decide(game, state, min(game.to_move(state)), iterations=iterations, seconds=3600.0,
                          rng=random.Random(seed), clock=time.process_time)
        spent += time.process_time() - started
        chosen.append(str(decision.move))
    return spent, chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--positions", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated game words")
    args = parser.parse_args()
    words = set(args.only.split(",")) if args.only else None
    every: list[str] = []
    for word, options in MAIN_SETS:
        if words is not None and word not in words:
            continue
        spent, chosen = search(word, options, args.positions, args.iterations)
        every += chosen
        digest = hashlib.sha256("\n".join(chosen).encode()).hexdigest()[:12]
        print(f"{label(word, options):<40} {1000 * spent / args.positions:9.1f} ms a search  moves {digest}")
    print(f"all moves {hashlib.sha256(chr(10).join(every).encode()).hexdigest()[:12]}")


if __name__ == "__main__":
    main()
