"""Sets of cells as bit masks (bit i: cell i) on any grid, and the steps
the bots' judgements take on them a whole set at a time: a set's
neighbours, its connected parts, and which cells lie nearer one set of
stones than another.

A grid is a neighbour table in the cells' own order. Most neighbours lie
a fixed number of places away in that order (one along a row, a row's
length across), so stepping from a set to its neighbours is a few masked
shifts, one per distinct distance, not a walk over the set's cells.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


class Neighbourhood:
    """The neighbours of sets of cells on one grid."""

    def __init__(self, neighbours: Sequence[Iterable[int]]):
        sources: dict[int, int] = {}  # how far a neighbour lies in the cells' order -> the cells that have one there
        for cell, around in enumerate(neighbours):
            for neighbour in around:
                sources[neighbour - cell] = sources.get(neighbour - cell, 0) | 1 << cell
        self._later = tuple((mask, offset) for offset, mask in sorted(sources.items()) if offset > 0)
        self._earlier = tuple((mask, -offset) for offset, mask in sorted(sources.items()) if offset < 0)

    def around(self, cells: int) -> int:
        """Every cell next to one of `cells` (cells of the set included
        where they are next to another)."""
        found = 0
        for source, shift in self._later:
            found |= (cells & source) << shift
        for source, shift in self._earlier:
            found |= (cells & source) >> shift
        return found

    def parts(self, cells: int) -> list[int]:
        """`cells` split into connected parts, ordered by their first cell."""
        found = []
        while cells:
            part = cells & -cells
            while (grown := part | self.around(part) & cells) != part:
                part = grown
            found.append(part)
            cells &= ~part
        return found

    def nearer(self, first: int, second: int, through: int) -> tuple[int, int]:
        """The cells of `through` that lie fewer steps from `first` than from
        `second`, and those nearer `second`, stepping through `through`
        only; a cell as near both, or out of reach of both, is in neither."""
        reached_first, reached_second = first, second
        front_first, front_second = first, second
        nearer_first = nearer_second = 0
        while front_first or front_second:
            front_first = self.around(front_first) & through & ~reached_first
            front_second = self.around(front_second) & through & ~reached_second
            nearer_first |= front_first & ~reached_second & ~front_second
            nearer_second |= front_second & ~reached_first & ~front_first
            reached_first |= front_first
            reached_second |= front_second
        return nearer_first, nearer_second
