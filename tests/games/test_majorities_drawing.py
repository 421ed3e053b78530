"""The drawing of a Majorities position (issue 37): marks, last move, dead
cells, tallies, and a text board made from the drawing alone."""

from __future__ import annotations

import random
import re
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from games.majorities import Majorities, MajoritiesState, board_for
from pbmserv.gamekit import Drawing, HexHexGrid, Ink, Kind, Mark, Seat, Tally

GAME = Majorities()
PLAYERS = ["alice", "bob"]


def played(size: int, *moves: str) -> MajoritiesState:
    state = GAME.new({"size": str(size)}, PLAYERS)
    for move in moves:
        (seat,) = GAME.to_move(state)
        state = GAME.play(state, seat, move)
    return state


def marks_at(drawing: Drawing, label: str) -> tuple[Mark, ...] | None:
    (panel,) = drawing.panels
    assert isinstance(panel.grid, HexHexGrid)
    return panel.marks.get(panel.grid.parse(label))


def board_lines(text: str) -> list[str]:
    return text.split("\n\n")[0].splitlines()


def test_the_stones_of_a_played_position_are_their_seats_marks_and_the_last_move_is_marked():
    drawing = GAME.draw(played(5, "e5", "a1,a2", "c3,g1"), None)
    assert marks_at(drawing, "e5") == (Mark(Kind.STONE, "X", 0),)
    assert marks_at(drawing, "a1") == (Mark(Kind.STONE, "O", 1),)
    assert marks_at(drawing, "c3") == (Mark(Kind.STONE, "X", 0, last=True),)
    assert marks_at(drawing, "g1") == (Mark(Kind.STONE, "X", 0, last=True),)
    assert marks_at(drawing, "a3") is None  # empty cells are absent
    assert drawing.last_move == "alice c3,g1"
    assert drawing.header[-1] == "(X) = last move, alice c3,g1"


def test_dead_cells_are_dead_marks_and_only_they_are():
    drawing = GAME.draw(played(5, "e5"), None)
    (panel,) = drawing.panels
    dead = {panel.grid.label(cell) for cell, layers in panel.marks.items() if layers[-1].kind is Kind.DEAD}
    assert dead == {"b2", "d4", "e6", "e8", "f4", "h2"}
    assert marks_at(drawing, "d4") == (Mark(Kind.DEAD, "-"),)


def test_seats_title_and_tally_of_a_played_position():
    # bob's a2,a3 take two of row a's three cells: the row is his
    drawing = GAME.draw(played(3, "e1", "a2,a3"), None)
    assert drawing.seats == (
        Seat("alice", "Black", "X", Ink.BLACK),
        Seat("bob", "White", "O", Ink.WHITE),
    )
    assert drawing.title == "Majorities, size 3: alice (X) against bob (O), alice to move"
    assert drawing.tally == Tally(
        ("X alice", "O bob", "open", "held by"),
        (("rows", ("0", "1", "4", "-")), ("NE-SW", ("0", "0", "5", "-")), ("NW-SE", ("0", "0", "5", "-"))),
    )
    assert drawing.notes == (
        "rows: X won none; O won a; open b c d e.",
        "NE-SW: X won none; O won none; open a1-c1 a2-d1 a3-e1 b4-e2 c5-e3.",
        "NW-SE: X won none; O won none; open a1-e3 a2-d4 a3-c5 b1-e2 c1-e1.",
        "A direction needs 3 of its 5 lines; the game needs 2 directions.",
    )


def test_the_named_lines_are_the_lines_of_the_rules_and_each_is_listed_once():
    """Every line a mail names is a line of its direction, its name's end
    cells are its ends, and won and open lines together are every line."""
    state = played(5, "e1", "a2,a3", "c4,d3")
    board = board_for(5)
    text = " ".join(" ".join(GAME.draw(state, None).notes[:-1]).split())
    for direction, names in board.line_names.items():
        title = {"row": "rows", "ne-sw": "NE-SW", "nw-se": "NW-SE"}[direction]
        match = re.search(rf"{title}: X won ([^;]*); O won ([^;]*); open ([^.]*)\.", text)
        assert match is not None
        named = [name for group in match.groups() for name in group.split() if group != "none"]
        assert sorted(named) == sorted(names)
        for name, line in zip(names, board.grid.lines(direction)):
            ends = name.split("-")
            assert len(ends) == 1 or (board.grid.label(line[0]), board.grid.label(line[-1])) == tuple(ends)


def test_the_title_names_the_winner_of_a_finished_game():
    state = played(3)
    rng = random.Random(3)
    while GAME.to_move(state):
        (seat,) = GAME.to_move(state)
        state = GAME.apply(state, seat, rng.choice(GAME.moves(state, seat)))
    outcome = GAME.outcome(state)
    assert outcome is not None
    assert GAME.draw(state, None).title.endswith(f", {PLAYERS[outcome.winners[0]]} won")


def test_the_brackets_of_the_text_board_come_from_the_last_flags():
    drawing = GAME.draw(played(3, "e1", "a2,a3"), None)
    assert board_lines(GAME.text(drawing))[1] == "a    .(O O) 4"
    (panel,) = drawing.panels
    unflagged = {cell: tuple(replace(mark, last=False) for mark in layers) for cell, layers in panel.marks.items()}
    plain = replace(drawing, panels=(replace(panel, marks=unflagged),))
    assert board_lines(GAME.text(plain))[1] == "a    . O O 4"


def test_the_text_board_shows_the_drawings_marks_not_the_position():
    drawing = GAME.draw(played(3, "e1", "a2,a3"), None)
    (panel,) = drawing.panels
    emptied = replace(drawing, panels=(replace(panel, marks={}),))
    board = "\n".join(board_lines(GAME.text(emptied)))
    assert not set("XO-()") & set(board)


def check_drawing(state: MajoritiesState) -> None:
    board = board_for(state.size)
    drawing = GAME.draw(state, None)
    (panel,) = drawing.panels
    assert panel.grid == board.grid
    for i, cell in enumerate(board.cells):
        layers = panel.marks.get(cell)
        char = state.board[i]
        if i in board.dead:
            assert layers == (Mark(Kind.DEAD, "-"),)
        elif char == ".":
            assert layers is None
        else:
            seat = int(char)
            assert layers == (Mark(Kind.STONE, "XO"[seat], seat, last=i in state.last_move),)
    for viewer in (None, 0, 1):
        assert GAME.draw(state, viewer) == drawing  # nothing is hidden
        assert GAME.text(GAME.draw(state, viewer)) == GAME.render(state, viewer)
    hexagon = "\n".join(board_lines(GAME.text(drawing)))
    for seat, glyph in enumerate("XO"):
        stones = sum(1 for layers in panel.marks.values() if layers[-1].seat == seat)
        assert hexagon.count(glyph) == stones
    # one bracket pair for the last move's stones, or one for each
    assert hexagon.count("(") == hexagon.count(")") <= len(state.last_move)
    assert ("(" in hexagon) == bool(state.last_move)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), size=st.sampled_from([3, 5, 7]))
def test_the_drawing_matches_the_position_over_random_play(seed, size):
    rng = random.Random(seed)
    state = GAME.new({"size": str(size)}, PLAYERS)
    check_drawing(state)
    while GAME.to_move(state):
        (seat,) = GAME.to_move(state)
        state = GAME.apply(state, seat, rng.choice(GAME.moves(state, seat)))
        check_drawing(state)
