"""Connectivity by a plain search, what the tests check the game kit's
faster and more particular region helpers against."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from pbmserv.gamekit.regions import SortableCell

C = TypeVar("C", bound=SortableCell)


def connected_regions(cells: Iterable[C], neighbours: Callable[[C], Iterable[C]]) -> list[list[C]]:
    """Split `cells` into groups connected through `neighbours`, each group
    listed from its smallest cell, groups ordered by their smallest cell."""
    remaining = set(cells)
    regions = []
    for seed in sorted(remaining):
        if seed not in remaining:
            continue
        remaining.discard(seed)
        region, frontier = [seed], [seed]
        while frontier:
            for neighbour in neighbours(frontier.pop()):
                if neighbour in remaining:
                    remaining.discard(neighbour)
                    region.append(neighbour)
                    frontier.append(neighbour)
        regions.append(region)
    return regions


def is_connected(cells: Iterable[C], neighbours: Callable[[C], Iterable[C]]) -> bool:
    return len(connected_regions(cells, neighbours)) <= 1
