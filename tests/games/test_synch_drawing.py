"""The drawing of a Move In Synch, In Opposition position (issue 37):
symbols, markers layered over them, the last round, tallies, and a text
board made from the drawing alone."""

from __future__ import annotations

import random
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from games.synch import Synch
from games.synch.rules import shown_markers
from games.synch.state import SynchState, cells_by_index
from pbmserv.gamekit import Drawing, Ink, Kind, Mark, Seat, SquareGrid, Tally

GAME = Synch()
PLAYERS = ["alice", "bob"]


def played(*moves: str, size: int = 4, order: str = "mode-first") -> SynchState:
    state = GAME.new({"size": str(size), "order": order}, PLAYERS)
    for move in moves:
        (seat,) = GAME.to_move(state)
        state = GAME.play(state, seat, move)
    return state


def marks_at(drawing: Drawing, label: str) -> tuple[Mark, ...] | None:
    (panel,) = drawing.panels
    return panel.marks.get(panel.grid.parse(label))


def test_a_placed_marker_stands_over_its_symbol_and_the_last_placement_is_marked():
    drawing = GAME.draw(played("place c2", "place d3"), None)
    assert marks_at(drawing, "c2") == (Mark(Kind.STONE, "x", 0), Mark(Kind.MARKER, "1", 0))
    assert marks_at(drawing, "d3") == (Mark(Kind.STONE, "o", 1, last=True), Mark(Kind.MARKER, "2", 1, last=True))
    assert marks_at(drawing, "a1") is None  # empty squares are absent
    assert drawing.last_move == "bob place d3"
    assert drawing.seats == (Seat("alice", "X", "x", Ink.BLACK), Seat("bob", "O", "o", Ink.WHITE))
    assert drawing.title == "Move In Synch, In Opposition, size 4: alice (x) against bob (o), round 1, bob to move"


def test_a_round_marks_the_symbols_it_drew_and_the_markers_it_moved():
    # round 1: bob (the decider) announces synch, alice (the directioner) sends n
    drawing = GAME.draw(played("place c2", "place d2", "synch", "n"), None)
    assert marks_at(drawing, "c2") == (Mark(Kind.STONE, "x", 0),)
    assert marks_at(drawing, "c3") == (Mark(Kind.STONE, "x", 0, last=True), Mark(Kind.MARKER, "1", 0, last=True))
    assert marks_at(drawing, "d3") == (Mark(Kind.STONE, "o", 1, last=True), Mark(Kind.MARKER, "2", 1, last=True))
    assert drawing.last_move == "round 1: alice n, bob synch"
    assert drawing.tally == Tally(
        ("count",),
        (
            ("x alice", ("2",)),
            ("o bob", ("2",)),
            ("empty squares", ("12",)),
            ("rounds without a new symbol (ends at 32)", ("0",)),
        ),
    )


def test_both_markers_on_one_empty_square_are_one_shared_marker_with_nothing_under_it():
    # round 1 in opposition: alice goes e from b2, bob w from d2, both onto empty c2
    state = played("place b2", "place d2", "opposition", "e")
    drawing = GAME.draw(state, None)
    assert marks_at(drawing, "c2") == (Mark(Kind.MARKER, "*", None, last=True),)
    assert drawing.last_move == "round 1: alice e, bob opposition"
    assert "4 . . . .  4\n3 . . . .  3\n2 . x * o  2" in GAME.text(drawing)


def test_a_directioner_shown_a_step_ahead_is_the_last_move_but_the_round_before_keeps_the_marks():
    # direction-first, round 2: bob has gone w from d4 to c4, alice is yet to answer
    state = played("place c2", "place d3", "n", "synch", "w", order="direction-first")
    drawing = GAME.draw(state, None)
    assert marks_at(drawing, "c4") == (Mark(Kind.MARKER, "2", 1),)
    assert marks_at(drawing, "d4") == (Mark(Kind.STONE, "o", 1, last=True),)
    assert marks_at(drawing, "c3") == (Mark(Kind.STONE, "x", 0, last=True), Mark(Kind.MARKER, "1", 0, last=True))
    assert drawing.last_move == "bob w, the first half of round 2"


def test_the_text_board_shows_the_uppermost_marks_of_the_drawing():
    drawing = GAME.draw(played("place c2", "place d3"), None)
    (panel,) = drawing.panels
    markers_only = {cell: layers[-1:] for cell, layers in panel.marks.items()}
    assert GAME.text(replace(drawing, panels=(replace(panel, marks=markers_only),))) == GAME.text(drawing)
    symbols_only = {cell: layers[:1] for cell, layers in panel.marks.items()}
    board = GAME.text(replace(drawing, panels=(replace(panel, marks=symbols_only),))).split("\n\n")[0]
    assert "3 . . . o  3\n2 . . x .  2" in board


def check_drawing(state: SynchState) -> None:
    drawing = GAME.draw(state, None)
    (panel,) = drawing.panels
    assert panel.grid == SquareGrid(state.size, state.size)
    drawn_last = set(state.last.drawn) if state.last else set()
    shown = shown_markers(state)
    for cell, char in zip(cells_by_index(state.size), state.marks):
        layers = panel.marks.get(cell, ())
        symbols = [mark for mark in layers if mark.kind is Kind.STONE]
        markers = [mark for mark in layers if mark.kind is Kind.MARKER]
        assert layers == (*symbols, *markers)  # the markers lie on top
        if char == ".":
            assert symbols == []
        else:
            seat = "xo".index(char)
            assert symbols == [Mark(Kind.STONE, char, seat, last=cell in drawn_last)]
        assert {mark.seat for mark in markers} == (
            {None} if shown[0] == shown[1] == cell else {seat for seat in (0, 1) if shown[seat] == cell}
        )
    for viewer in (None, 0, 1):
        assert GAME.draw(state, viewer) == drawing  # the board shows only what both have sent
        assert GAME.text(GAME.draw(state, viewer)) == GAME.render(state, viewer)
    assert drawing.tally is not None
    counts = dict(drawing.tally.rows)
    assert counts["x alice"] == (str(state.marks.count("x")),)
    assert counts["o bob"] == (str(state.marks.count("o")),)
    assert counts["empty squares"] == (str(state.marks.count(".")),)


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    size=st.sampled_from([4, 5, 9]),
    order=st.sampled_from(["mode-first", "direction-first"]),
)
def test_the_drawing_matches_the_position_over_random_play(seed, size, order):
    rng = random.Random(seed)
    state = GAME.new({"size": str(size), "order": order}, PLAYERS)
    check_drawing(state)
    while GAME.to_move(state):
        (seat,) = GAME.to_move(state)
        state = GAME.apply(state, seat, rng.choice(GAME.moves(state, seat)))
        check_drawing(state)
