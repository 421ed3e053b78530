"""The pictures' budget (issue 37): the largest board of every game at most
20 ms to PNG and at most 60 KB. For each game word at its largest options,
a mid-game and a late position from seeded random play (the public
drawing), svg() and png() timed in CPU time over N runs (median and p95)
with the pictures' sizes in bytes. The first run of each is left out of
the figures and shown on its own ("first"): it fills the caches of
figures and lettering that later boards share.

    .venv/bin/python bench/bench_pictures.py [N]   (default 30)
"""

from __future__ import annotations

import io
import random
import statistics
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

from PIL import Image

from pbmserv.gamekit import Drawing, Game, game_names, get_game
from pbmserv.pictures import png, svg

PLAYERS = ["alice", "bob"]
#: each game's largest board; a game not named here is played at its defaults
LARGEST: dict[str, list[dict[str, str | None]]] = {
    "majorities": [{"size": "7"}],
    "majority": [{"size": "14"}],
    "psychomachia": [{"size": "14"}],
    "parliament": [{"boards": "both"}],
    "plurality": [{"size": "19"}, {"board": "hex", "size": "9"}],
    "synch": [{"size": "26"}],
}
BUDGET_MS, BUDGET_BYTES = 20.0, 60_000


def positions(game: Game, options: Mapping[str, str | None], seed: int = 1) -> dict[str, Any]:
    """The position halfway through a seeded random game and the one a
    tenth of the game before its end."""
    rng = random.Random(seed)
    state = game.new(options, PLAYERS)
    states = [state]
    while game.outcome(state) is None:
        seat = rng.choice(sorted(game.to_move(state)))
        state = game.play(state, seat, rng.choice(game.legal_moves(state, seat)))
        states.append(state)
    return {"mid": states[len(states) // 2], "late": states[len(states) * 9 // 10]}


def timed(make: Callable[[Drawing], Any], drawing: Drawing, runs: int) -> tuple[float, float, float, int]:
    """The first run's time, then the median and p95 of `runs` more, in ms; and the size."""
    start = time.process_time()
    made = make(drawing)
    first = time.process_time() - start
    times = []
    for _ in range(runs):
        start = time.process_time()
        make(drawing)
        times.append(time.process_time() - start)
    times.sort()
    p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
    return 1000 * first, 1000 * statistics.median(times), 1000 * p95, len(made)


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    print(f"{runs} runs each, CPU ms (first run apart); budget: PNG <= {BUDGET_MS:.0f} ms and <= {BUDGET_BYTES // 1000} KB")
    print(
        f"{'game':<13}{'options':<22}{'position':<9}{'pixels':>10}  "
        f"{'png first/median/p95':>22} {'bytes':>7}  {'svg first/median/p95':>22} {'bytes':>7}"
    )
    over, drawn = [], 0
    for name in game_names():
        game = get_game(name)
        for options in LARGEST.get(name, [{}]):
            label = " ".join(f"-{key}={value}" for key, value in options.items()) or "(defaults)"
            for which, state in positions(game, options).items():
                try:
                    drawing = game.draw(state, None)
                except NotImplementedError:
                    print(f"{name:<13}{label:<22}draw(state, viewer) is not implemented yet: no picture")
                    break
                drawn += 1
                png_first, png_median, png_p95, png_bytes = timed(png, drawing, runs)
                svg_first, svg_median, svg_p95, svg_bytes = timed(lambda d: svg(d).encode(), drawing, runs)
                width, height = Image.open(io.BytesIO(png(drawing))).size
                print(
                    f"{name:<13}{label:<22}{which:<9}{f'{width}x{height}':>10}  "
                    f"{f'{png_first:.1f}/{png_median:.1f}/{png_p95:.1f}':>22} {png_bytes:>7}  "
                    f"{f'{svg_first:.1f}/{svg_median:.1f}/{svg_p95:.1f}':>22} {svg_bytes:>7}",
                    flush=True,
                )
                if png_median > BUDGET_MS or png_bytes > BUDGET_BYTES:
                    over.append(f"{name} {label} {which}")
    if over:
        print("over budget (PNG median or size): " + ", ".join(over))
    else:
        print(f"{drawn} boards drawn, every one within budget (PNG median and size)")


if __name__ == "__main__":
    main()
