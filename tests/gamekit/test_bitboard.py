"""bitboard.Neighbourhood: a whole set of cells a step at a time, checked
against the same steps taken cell by cell on square and hex grids."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbmserv.gamekit import HexHexGrid, SquareGrid
from pbmserv.gamekit.bitboard import Neighbourhood
from tests.gamekit.connected import connected_regions


def neighbour_table(grid: SquareGrid | HexHexGrid) -> tuple[tuple[int, ...], ...]:
    index = {cell: i for i, cell in enumerate(grid.cells)}
    return tuple(tuple(index[n] for n in grid.neighbours(cell)) for cell in grid.cells)


GRIDS = {
    "square 5x4": neighbour_table(SquareGrid(5, 4)),
    "square 13 without i": neighbour_table(SquareGrid(13, 13, skip_i=True)),
    "hexhex 3": neighbour_table(HexHexGrid(3)),
    "hexhex 5": neighbour_table(HexHexGrid(5)),
}


def cells_of(mask: int) -> set[int]:
    return {i for i in range(mask.bit_length()) if mask >> i & 1}


def mask_of(cells: set[int]) -> int:
    return sum(1 << i for i in cells)


def steps_from(start: int, through: set[int], table: Sequence[Sequence[int]]) -> dict[int, int]:
    """Steps from the nearest cell of `start` to each cell of `through` it reaches through them, cell by cell."""
    found: dict[int, int] = {}
    frontier, steps = cells_of(start), 0
    while frontier:
        steps += 1
        frontier = {n for cell in frontier for n in table[cell] if n in through and n not in found}
        found.update(dict.fromkeys(frontier, steps))
    return found


def subsets(table: Sequence[Sequence[int]]) -> st.SearchStrategy[int]:
    return st.integers(min_value=0, max_value=(1 << len(table)) - 1)


@pytest.mark.parametrize("name", GRIDS)
@given(data=st.data())
def test_around_is_every_neighbour_of_the_set(name: str, data: st.DataObject) -> None:
    table = GRIDS[name]
    cells = data.draw(subsets(table))
    assert cells_of(Neighbourhood(table).around(cells)) == {n for cell in cells_of(cells) for n in table[cell]}


@pytest.mark.parametrize("name", GRIDS)
@given(data=st.data())
def test_parts_are_the_connected_regions_in_order(name: str, data: st.DataObject) -> None:
    table = GRIDS[name]
    cells = data.draw(subsets(table))
    regions = connected_regions(cells_of(cells), table.__getitem__)
    assert Neighbourhood(table).parts(cells) == [mask_of(set(region)) for region in regions]


@pytest.mark.parametrize("name", GRIDS)
@given(data=st.data())
def test_nearer_splits_the_cells_by_the_nearest_stones(name: str, data: st.DataObject) -> None:
    table = GRIDS[name]
    first, second = data.draw(subsets(table)), data.draw(subsets(table))
    second &= ~first
    through = data.draw(subsets(table)) & ~(first | second)
    unreachable = len(table)
    to_first, to_second = (steps_from(stones, cells_of(through), table) for stones in (first, second))
    expected = (
        {c for c in cells_of(through) if to_first.get(c, unreachable) < to_second.get(c, unreachable)},
        {c for c in cells_of(through) if to_second.get(c, unreachable) < to_first.get(c, unreachable)},
    )
    assert tuple(map(cells_of, Neighbourhood(table).nearer(first, second, through))) == expected


def test_a_cell_as_near_both_or_out_of_reach_goes_to_neither() -> None:
    """A row of five cells: with a stone at each end the middle cell is as
    near both; with the middle cell left out, the last two are out of reach."""
    row = Neighbourhood(neighbour_table(SquareGrid(5, 1)))
    assert row.nearer(0b00001, 0b10000, 0b01110) == (0b00010, 0b01000)
    assert row.nearer(0b00001, 0b00010, 0b11000) == (0, 0)
