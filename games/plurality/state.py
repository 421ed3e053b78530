"""A game of Plurality at one moment, and who owns its empty regions."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from games.plurality.board import BLACK, WHITE, Layout, bits_of


@dataclass(frozen=True)
class PluralityState:
    players: tuple[str, str]
    board: str  # "square" or "hex"
    size: int
    ties: str  # "neutral" or "parity"
    black: int  # bit i set: cell i (reading order) holds a Black stone
    white: int
    turn: int  # the seat to move (the seat that would move once the game is over)
    passes: int  # passes in a row that ended with the last move
    last_move: str  # canonical text of the last move; "" before the first

    @property
    def occupied(self) -> int:
        return self.black | self.white


@dataclass(frozen=True)
class Territory:
    cells: tuple[int, ...]
    owner: int | None


def territories(layout: Layout, state: PluralityState) -> tuple[Territory, ...]:
    """Each connected region of empty points and its owner."""
    return _territories(layout, state.ties, state.black, state.white)


@lru_cache(maxsize=256)
def _territories(layout: Layout, ties: str, black: int, white: int) -> tuple[Territory, ...]:
    empty = -1
    colours = [empty] * len(layout.cells)
    for seat, stones in ((BLACK, black), (WHITE, white)):
        for i in bits_of(stones):
            colours[i] = seat
    seen = [colour != empty for colour in colours]
    found = []
    for start, already in enumerate(seen):
        if already:
            continue
        seen[start] = True
        region, frontier, border = [start], [start], set()
        while frontier:
            for n in layout.neighbours[frontier.pop()]:
                if colours[n] != empty:
                    border.add(n)
                elif not seen[n]:
                    seen[n] = True
                    region.append(n)
                    frontier.append(n)
        black_count = sum(1 for n in border if colours[n] == BLACK)
        white_count = len(border) - black_count
        if black_count != white_count:
            owner: int | None = BLACK if black_count > white_count else WHITE
        elif ties == "parity":
            owner = BLACK if len(region) % 2 == 0 else WHITE
        else:
            owner = None
        found.append(Territory(tuple(sorted(region)), owner))
    return tuple(found)


def territory_points(layout: Layout, state: PluralityState) -> tuple[int, int]:
    points = [0, 0]
    for territory in territories(layout, state):
        if territory.owner is not None:
            points[territory.owner] += len(territory.cells)
    return points[BLACK], points[WHITE]



def estimated_points(layout: Layout, state: PluralityState) -> tuple[int, int]:
    """The territory each side may end with, for the bots: a region that
    can take no more drops as it is owned now; in one that can, each point
    goes to the side whose stones are nearer (to none on a tie). Early on
    the whole board is one region that changes hands with every drop, so
    who owns it now says little about the end."""
    return _estimate(layout, state.ties, state.black, state.white)


@lru_cache(maxsize=4096)
def _estimate(layout: Layout, ties: str, black: int, white: int) -> tuple[int, int]:
    points = [0, 0]
    occupied = black | white
    open_cells: set[int] = set()
    for territory in _territories(layout, ties, black, white):
        if _takes_a_drop(layout, territory.cells, occupied):
            open_cells.update(territory.cells)
        elif territory.owner is not None:
            points[territory.owner] += len(territory.cells)
    if open_cells:
        nearest = [_distances(layout, stones, open_cells) for stones in (black, white)]
        for cell in open_cells:
            to_black, to_white = (distance.get(cell, len(layout.cells)) for distance in nearest)
            if to_black != to_white:
                points[BLACK if to_black < to_white else WHITE] += 1
    return points[BLACK], points[WHITE]


def _takes_a_drop(layout: Layout, cells: tuple[int, ...], occupied: int) -> bool:
    """Whether a drop is still legal in the region (in an open one the first shape looked at mostly is)."""
    return any(layout.shapes[k].is_open(occupied) for i in cells for k in layout.shapes_holding[frozenset((i,))])


def _distances(layout: Layout, stones: int, open_cells: set[int]) -> dict[int, int]:
    """Steps from the nearest of `stones` to each of `open_cells` it reaches through them."""
    found: dict[int, int] = {}
    frontier, steps = bits_of(stones), 0
    while frontier:
        steps += 1
        reached = []
        for cell in frontier:
            for neighbour in layout.neighbours[cell]:
                if neighbour in open_cells and neighbour not in found:
                    found[neighbour] = steps
                    reached.append(neighbour)
        frontier = reached
    return found
