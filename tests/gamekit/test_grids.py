"""The shared geometry every game is built on, and the option reader."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbmserv.gamekit import (
    Game,
    HexHexGrid,
    IllegalMove,
    InvalidOption,
    Option,
    SquareGrid,
    game_names,
    get_game,
)
from tests.gamekit.connected import is_connected


# -- square grids ----------------------------------------------------------------
def test_square_coordinates_round_trip_and_chequering() -> None:
    grid = SquareGrid(8, 8)
    assert grid.parse("a1") == (0, 0) and grid.parse(" H8 ") == (7, 7)
    assert all(grid.parse(grid.label(cell)) == cell for cell in grid.cells)
    assert grid.is_dark((0, 0)) and not grid.is_dark((1, 0))
    assert [grid.label(c) for c in grid.cells[:3]] == ["a8", "b8", "c8"]  # reading order


def test_go_files_skip_i() -> None:
    grid = SquareGrid(19, 19, skip_i=True)
    assert grid.label((8, 0)) == "j1" and grid.parse("t19") == (18, 18)
    with pytest.raises(IllegalMove, match="off the board"):
        grid.parse("i5")


@pytest.mark.parametrize(("text", "says"), [("z9", "off the board"), ("a0", "off the board"), ("b", "not a square"), ("", "not a square")])
def test_square_parse_errors_explain(text: str, says: str) -> None:
    with pytest.raises(IllegalMove) as raised:
        SquareGrid(8, 8).parse(text)
    assert says in raised.value.message and "like c4" in raised.value.message


def test_compass_steps_follow_the_printed_board() -> None:
    bottom_up = SquareGrid(4, 4)
    top_down = SquareGrid(4, 4, ranks_from_top=True)
    assert bottom_up.step(bottom_up.parse("b2"), "n") == bottom_up.parse("b3")
    assert top_down.step(top_down.parse("b2"), "n") == top_down.parse("b1")
    assert bottom_up.step(bottom_up.parse("a1"), "sw") is None


def test_neighbours_and_blocks() -> None:
    grid = SquareGrid(3, 3)
    assert len(grid.neighbours((1, 1))) == 4 and len(grid.neighbours((1, 1), diagonal=True)) == 8
    assert len(grid.neighbours((0, 0), diagonal=True)) == 3
    assert len(grid.blocks2x2()) == 4


def test_masked_grid_from_a_picture() -> None:
    grid = SquareGrid.from_mask([".##.", "####", ".##."], ranks_from_top=True)
    assert len(grid.cells) == 8
    assert (0, 0) not in grid and grid.parse("b1") == (1, 0)
    with pytest.raises(IllegalMove, match="not on the board"):
        grid.parse("a1")
    assert [len(rank) for rank in grid.ranks()] == [2, 4, 2]


def test_square_render_has_coordinates_on_every_edge() -> None:
    lines = SquareGrid(3, 2).render(lambda cell: "x" if cell == (0, 0) else ".", right=lambda r: f"r{r}")
    assert lines == ["  a b c", "2 . . . 2  r1", "1 x . . 1  r0", "  a b c"]


@pytest.mark.parametrize(
    "grid",
    [
        SquareGrid(3, 2),
        SquareGrid(12, 10, ranks_from_top=True),
        SquareGrid.from_mask([".##.", "####", ".##."]),
    ],
)
def test_square_render_rows_is_render_with_the_texts_made_in_bulk(grid: SquareGrid) -> None:
    def glyph(cell: tuple[int, int]) -> str:
        return "x<" if cell == max(grid.cells) else "o"  # a full cell in the last column

    rows = [[("#" if cell not in grid else glyph(cell)).ljust(2) for cell in row] for row in grid.display_rows()]
    assert grid.render_rows(rows, right=str) == grid.render(glyph, hole="#", right=str)


# -- hexhex grids ----------------------------------------------------------------
@pytest.mark.parametrize("size", [2, 3, 5, 8])
def test_hexhex_counts(size: int) -> None:
    grid = HexHexGrid(size)
    assert len(grid.cells) == 3 * size * (size - 1) + 1
    for direction in ("row", "ne-sw", "nw-se"):
        lines = grid.lines(direction)
        assert len(lines) == 2 * size - 1
        assert sorted(cell for line in lines for cell in line) == sorted(grid.cells)


def test_hexhex_coordinates_and_cube_convention() -> None:
    grid = HexHexGrid(5)
    assert grid.cube(grid.parse("e5")) == (0, 0, 0)
    assert grid.cube(grid.parse("e6")) == (1, -1, 0)
    assert grid.label(grid.parse("C1")) == "c1"
    assert all(grid.parse(grid.label(cell)) == cell for cell in grid.cells)
    with pytest.raises(IllegalMove, match="row a has cells 1-5"):
        grid.parse("a6")


def test_hexhex_neighbours_distance_and_rhombi() -> None:
    grid = HexHexGrid(3)
    centre = grid.parse("c3")
    assert len(grid.neighbours(centre)) == 6 and len(grid.neighbours(grid.parse("a1"))) == 3
    assert all(grid.distance(centre, n) == 1 for n in grid.neighbours(centre))
    assert grid.distance(grid.parse("a1"), grid.parse("e3")) == 4
    for rhombus in grid.rhombi():
        assert len(rhombus) == 4 and is_connected(rhombus, grid.neighbours)
        degrees = sorted(sum(1 for n in grid.neighbours(c) if n in rhombus) for c in rhombus)
        assert degrees == [2, 2, 3, 3]


@given(st.integers(2, 9))
def test_hexhex_render_fits_a_mail(size: int) -> None:
    lines = HexHexGrid(size).render(lambda cell: ".")
    assert max(len(line) for line in lines) <= 72
    assert sum(line.count(".") for line in lines) == 3 * size * (size - 1) + 1


# -- options and the registry ------------------------------------------------------
def test_option_kinds() -> None:
    size = Option("size", 5, (3, 5, 7))
    assert size.parse("7") == 7
    with pytest.raises(InvalidOption, match="3, 5 or 7"):
        size.parse("4")
    flag = Option("hidden", False)
    assert flag.parse(None) is True and flag.parse("no") is False
    word = Option("board", "square", ("square", "hex"))
    assert word.parse("HEX") == "hex"
    assert Option("stones", 40, tuple(range(1, 51))).allowed_text() == "1..50"


def test_resolve_options_refuses_unknown_names_and_applies_fixed_ones() -> None:
    class Fixed(Game):
        name = "fixed"
        options = (Option("hidden", False), Option("size", 5, (5, 7)))
        fixed_options = {"hidden": None}

    assert Fixed().resolve_options({"size": "7"}) == {"hidden": True, "size": 7}
    with pytest.raises(InvalidOption, match="has no option -colour; its options are -hidden, -size"):
        Fixed().resolve_options({"colour": "red"})


def test_every_registered_game_loads_through_its_entry_point() -> None:
    names = game_names()
    assert {"majorities", "parliament", "plurality", "synch"} <= set(names)
    for name in names:
        game = get_game(name.upper())
        assert isinstance(game, Game) and game.name == name and game.help().strip()


def test_a_hexhex_line_is_named_by_its_row_letter_or_its_end_cells_top_first():
    grid = HexHexGrid(3)
    assert [grid.line_name(line) for line in grid.lines("row")] == ["a", "b", "c", "d", "e"]
    assert [grid.line_name(line) for line in grid.lines("ne-sw")] == ["a1-c1", "a2-d1", "a3-e1", "b4-e2", "c5-e3"]
    assert [grid.line_name(line) for line in grid.lines("nw-se")] == ["a1-e3", "a2-d4", "a3-c5", "b1-e2", "c1-e1"]
