"""regions.connected_sets, added for Plurality's trominoes (square and hex)."""

from __future__ import annotations

from itertools import combinations

from pbmserv.gamekit import HexHexGrid, SquareGrid
from pbmserv.gamekit.regions import connected_sets
from tests.gamekit.connected import is_connected


def brute_force(cells, neighbours, size):
    return {
        frozenset(group)
        for group in combinations(cells, size)
        if is_connected(group, neighbours)
    }


def test_trominoes_on_a_3x3_square():
    grid = SquareGrid(3, 3)
    trominoes = connected_sets(grid.cells, grid.neighbours, 3)
    # 6 straight (3 rows, 3 columns) and 4 bent ones in each of the four 2x2 blocks
    assert len(trominoes) == 6 + 4 * 4
    assert frozenset({(0, 0), (1, 0), (2, 0)}) in trominoes
    assert frozenset({(0, 0), (1, 0), (1, 1)}) in trominoes
    assert frozenset({(0, 0), (1, 1), (2, 2)}) not in trominoes  # diagonal
    assert set(trominoes) == brute_force(grid.cells, grid.neighbours, 3)


def test_each_set_once_in_a_stable_order():
    grid = SquareGrid(4, 3)
    for size in (1, 2, 3, 4):
        found = connected_sets(grid.cells, grid.neighbours, size)
        assert len(found) == len(set(found))
        assert found == sorted(found, key=sorted)
        assert set(found) == brute_force(grid.cells, grid.neighbours, size)
    assert len(connected_sets(grid.cells, grid.neighbours, 1)) == 12
    assert len(connected_sets(grid.cells, grid.neighbours, 2)) == 3 * 3 + 4 * 2  # dominoes


def test_hexhex_triples_are_lines_bends_and_triangles():
    grid = HexHexGrid(2)  # the centre and its ring of six
    triples = connected_sets(grid.cells, grid.neighbours, 3)
    # 3 lines through the centre, 6 triangles, 6 bends round the centre, 6 bends along the ring
    assert len(triples) == 3 + 6 + 6 + 6
    assert set(triples) == brute_force(grid.cells, grid.neighbours, 3)


def test_hexhex_size_3_matches_brute_force():
    grid = HexHexGrid(3)
    assert set(connected_sets(grid.cells, grid.neighbours, 3)) == brute_force(
        grid.cells, grid.neighbours, 3
    )


def test_sets_stay_inside_the_given_cells():
    grid = SquareGrid(3, 3)
    top_row = [cell for cell in grid.cells if cell[1] == 2]
    assert connected_sets(top_row, grid.neighbours, 3) == [frozenset(top_row)]
    assert connected_sets(top_row, grid.neighbours, 4) == []
    assert connected_sets(top_row, grid.neighbours, 0) == []
