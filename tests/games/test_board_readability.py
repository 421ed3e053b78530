"""Boards a player reads at a glance (issue 19): the rules of readability,
checked over real positions from random games of Plurality and Majorities."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from games.majorities import Majorities, board_for
from games.plurality import Plurality
from pbmserv.gamekit import Game

PLAYERS = ["alice", "bob"]
#: a last-move mark or bracket right against a digit: a row or slant label
MARK_ON_LABEL = re.compile(r"[()<]\d|\d[()<]")
#: a line of cells: a row letter at its start (hexagons) or a rank number
#: (squares); the lines of file letters or slant numbers are not
ROW_LINE = re.compile(r"^(?:[a-z]\s|\s*\d+\s)")


def positions(game: Game, options: Mapping[str, str], seed: int, turns: int) -> Iterator[Any]:
    """Every position of one random game, up to `turns` moves."""
    rng = random.Random(seed)
    state = game.new(options, PLAYERS)
    yield state
    for _ in range(turns):
        if game.outcome(state) is not None:
            return
        seat = min(game.to_move(state))
        state = game.play(state, seat, rng.choice(game.legal_moves(state, seat)))
        yield state


def board_lines(rendered: str) -> list[str]:
    return rendered.split("\n\n")[0].splitlines()


def cell_marks(rendered: str) -> set[str]:
    """The marks standing on cells: everything on the board's lines but
    the labels (letters and numbers around it)."""
    marks = set()
    for line in board_lines(rendered):
        if ROW_LINE.match(line):
            body = line.split(None, 1)[1]
            marks |= {char for char in body if not char.isspace() and not char.isdigit()}
    return marks


PLURALITY_BOARDS: tuple[dict[str, str], ...] = ({}, {"size": "19"}, {"board": "hex", "size": "5"}, {"board": "hex", "size": "9"})


@pytest.mark.parametrize("options", PLURALITY_BOARDS)
def test_plurality_marks_never_differ_only_by_case(options):
    game = Plurality()
    seen: set[str] = set()
    for seed in range(3):
        for state in positions(game, options, seed, 60):
            seen |= cell_marks(game.render(state, None))
    alike = [(a, b) for a in seen for b in seen if a < b and a.lower() == b.lower()]
    assert not alike, f"marks that differ only by case: {alike}"
    # the stones, both territories, neutral points and the last drop all showed up
    assert {"X", "O", "+", "-", ".", "<"} <= seen


def test_plurality_legend_names_every_mark_on_the_board():
    game = Plurality()
    state = game.play(game.new({"board": "hex", "size": "5"}, PLAYERS), 0, "*g3,h3,i3")
    rendered = game.render(state, None)
    legend = rendered.split("\n\n", 1)[1]
    assert "X  alice (Black)" in legend and "O  bob (White)" in legend
    assert "+ -  territory of Black / White if the game ended now, . neutral" in legend
    assert "<  marks the last drop: *g3,h3,i3 by alice (Black)" in legend
    assert cell_marks(rendered) <= {"X", "O", "+", "-", ".", "<"}


@pytest.mark.parametrize(
    ("game", "options"),
    [(Majorities(), {"size": size}) for size in ("3", "5", "7")]
    + [(Plurality(), options) for options in PLURALITY_BOARDS],
)
def test_a_last_move_mark_never_touches_a_label(game, options):
    for seed in range(4):
        for state in positions(game, options, seed, 80):
            for line in board_lines(game.render(state, None)):
                assert not MARK_ON_LABEL.search(line), line


def test_a_bracket_on_the_last_cell_of_a_row_leaves_a_space_before_the_number():
    game = Majorities()
    state = game.play(game.new({"size": "3"}, PLAYERS), 0, "b4")
    assert board_lines(game.render(state, None))[2] == "b   . - .(X) 5"
    state = game.play(state, 1, "a2,a3")
    assert board_lines(game.render(state, None))[1] == "a    .(O O) 4"


def test_a_plurality_mark_on_the_last_cell_of_a_row_leaves_a_space_before_the_number():
    game = Plurality()
    state = game.play(game.new({"board": "hex", "size": "5"}, PLAYERS), 0, "c6,c7,*d8")
    lines = board_lines(game.render(state, None))
    assert lines[3] == "c    + + + + + X<X< 8"
    assert lines[4] == "d   + + + + + + + O< 9"


@pytest.mark.parametrize("size", [3, 5])
def test_majorities_says_what_the_numbers_around_the_board_are(size):
    game = Majorities()
    state = game.new({"size": str(size)}, PLAYERS)
    rendered = game.render(state, None)
    number = size + 1
    middle = chr(ord("a") + size - 1)
    assert "The numbers around the board are not cells" in rendered
    assert f"(the {number} right of row a: b{number} to {middle}{number})" in rendered
    # and it is true: the number ends the slant the legend names (one
    # column out per row on the narrow boards)
    label_column = board_lines(rendered)[1].rindex(str(number))
    cells = board_for(size)
    for row in range(1, size):
        label = f"{chr(ord('a') + row)}{number}"
        if cells.index_of_label[label] in cells.dead:
            continue
        placed = board_lines(game.render(game.play(state, 0, label), None))
        assert placed[1 + row].index("(X)") + 1 == label_column - row
