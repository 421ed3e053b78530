"""Who wins Majorities on the size-3 board with perfect play: an exhaustive
search of every game (about 190,000 positions, some 10 seconds).

    .venv/bin/python bench/solve_majorities.py

The answer bounds what the strength benchmark can show on that board: if
one seat always wins with perfect play, a bot that makes no mistake from
that seat wins every game there, and a stronger bot can score no more than
half against it over both colours.
"""

from __future__ import annotations

import sys
import time
from functools import cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from games.majorities import board_for  # noqa: E402

SIZE = 3


def main() -> None:
    board = board_for(SIZE)
    bit = {cell: 1 << k for k, cell in enumerate(board.live)}
    #: per direction, its lines as (mask of their live cells, stones that win the line)
    directions = [
        [(sum(bit[cell] for cell in line), len(line) // 2 + 1) for line in lines] for lines in board.lines.values()
    ]
    every_cell = [1 << k for k in range(len(board.live))]

    def holds_two_directions(stones: int) -> bool:
        held = 0
        for lines in directions:
            won = sum(1 for mask, needed in lines if (stones & mask).bit_count() >= needed)
            held += won * 2 > len(lines)
        return held >= 2

    @cache
    def mover_wins(mover: int, other: int) -> bool:
        """Whether the player to move, holding `mover`, wins against best play."""
        empty = [cell for cell in every_cell if not (mover | other) & cell]
        if not mover | other:
            turns = empty  # the first turn places one stone
        else:
            turns = [a | b for n, a in enumerate(empty) for b in empty[n + 1:]]
        if any(holds_two_directions(mover | turn) for turn in turns):
            return True
        return any(not mover_wins(other, mover | turn) for turn in turns)

    started = time.process_time()
    first_wins = mover_wins(0, 0)
    print(f"majorities -size={SIZE}: the {'first' if first_wins else 'second'} player wins with perfect play"
          f" ({mover_wins.cache_info().currsize:,} positions, {time.process_time() - started:.1f} s)")


if __name__ == "__main__":
    main()
