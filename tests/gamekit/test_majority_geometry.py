"""SquareGrid.under_files: a line of per-column entries under `render`'s board."""

from __future__ import annotations

import pytest

from pbmserv.gamekit import SquareGrid


@pytest.mark.parametrize(("width", "height", "cell_width"), [(6, 6, 2), (14, 14, 2), (5, 12, 3), (3, 9, 2)])
def test_entries_stand_under_the_file_letters(width, height, cell_width):
    grid = SquareGrid(width, height)
    letters = grid.render(lambda cell: "x", cell_width=cell_width)[-1]
    line = grid.under_files(lambda file: "ABCDEFGHIJKLMN"[file], cell_width=cell_width)
    for file in range(width):
        assert line.index("ABCDEFGHIJKLMN"[file]) == letters.index("abcdefghijklmn"[file])


def test_short_and_empty_entries_keep_the_columns_and_no_trailing_space():
    grid = SquareGrid(4, 10)
    assert grid.under_files(lambda file: "W" if file == 2 else "") == "       W"
    assert grid.under_files(lambda file: "") == ""
