"""Connected sets of cells on any grid: a grid is just a neighbour function here."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Protocol, Self, TypeVar


class SortableCell(Hashable, Protocol):
    """A cell of any grid: hashable, and ordered so that results come out in one order."""

    def __lt__(self, other: Self, /) -> bool: ...


C = TypeVar("C", bound=SortableCell)


def connected_sets(
    cells: Iterable[C], neighbours: Callable[[C], Iterable[C]], size: int
) -> list[frozenset[C]]:
    """Every connected set of exactly `size` cells (polyominoes, trominoes, ...),
    each once, ordered by their sorted cells."""
    allowed = set(cells)
    found: set[frozenset[C]] = {frozenset([cell]) for cell in allowed} if size > 0 else set()
    for _ in range(size - 1):
        found = {
            group | {neighbour}
            for group in found
            for cell in group
            for neighbour in neighbours(cell)
            if neighbour in allowed and neighbour not in group
        }
    return sorted(found, key=sorted)
