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
    return tuple(
        Territory(tuple(bits_of(region)), owner) for region, owner in _territories(layout, state.ties, state.black, state.white)
    )


@lru_cache(maxsize=256)
def _territories(layout: Layout, ties: str, black: int, white: int) -> tuple[tuple[int, int | None], ...]:
    """Each empty region as a mask, ordered by its first cell, and its owner."""
    found = []
    for region in layout.neighbourhood.parts(layout.every_cell & ~(black | white)):
        border = layout.neighbourhood.around(region)
        black_count, white_count = (border & black).bit_count(), (border & white).bit_count()
        if black_count != white_count:
            owner: int | None = BLACK if black_count > white_count else WHITE
        elif ties == "parity":
            owner = BLACK if region.bit_count() % 2 == 0 else WHITE
        else:
            owner = None
        found.append((region, owner))
    return tuple(found)


def territory_points(layout: Layout, state: PluralityState) -> tuple[int, int]:
    points = [0, 0]
    for region, owner in _territories(layout, state.ties, state.black, state.white):
        if owner is not None:
            points[owner] += region.bit_count()
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
    open_cells = 0
    for region, owner in _territories(layout, ties, black, white):
        if _takes_a_drop(layout, region, occupied):
            open_cells |= region
        elif owner is not None:
            points[owner] += region.bit_count()
    nearer_black, nearer_white = layout.neighbourhood.nearer(black, white, open_cells)
    return points[BLACK] + nearer_black.bit_count(), points[WHITE] + nearer_white.bit_count()


def _takes_a_drop(layout: Layout, region: int, occupied: int) -> bool:
    """Whether a drop is still legal in the region. Every three connected
    cells of it are empty, so only a block the drop would fill can forbid
    one; those blocks lie within two steps of the region, and the answer is
    remembered for the region and the stones there (late in a game most
    regions are closed, and the positions a bot judges share them)."""
    if region.bit_count() < 3:
        return False
    near = layout.neighbourhood.around(region)
    return _region_takes_a_drop(layout, region, occupied & (near | layout.neighbourhood.around(near)))


@lru_cache(maxsize=65536)
def _region_takes_a_drop(layout: Layout, region: int, occupied: int) -> bool:
    # in an open region the first shape looked at mostly is open
    return any(
        layout.shapes[k].is_open(occupied) for i in bits_of(region) for k in layout.shapes_holding[frozenset((i,))]
    )
