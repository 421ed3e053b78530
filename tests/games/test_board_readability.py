"""Boards a player reads at a glance (issue 19): the rules of readability,
checked over real positions from random games of Plurality and Majorities."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from games.majorities import Majorities, board_for
from games.parliament import Parliament
from games.plurality import Plurality
from games.synch import Synch
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


def test_a_plurality_mark_leaves_a_space_before_the_next_cell_and_the_number():
    game = Plurality()
    state = game.play(game.new({"board": "hex", "size": "5"}, PLAYERS), 0, "c6,c7,*d8")
    lines = board_lines(game.render(state, None))
    assert lines[3] == "c      +   +   +   +   +   X<  X<  8"
    assert lines[4] == "d    +   +   +   +   +   +   +   O<  9"


@pytest.mark.parametrize("size", [3, 5])
def test_majorities_says_what_the_numbers_around_the_board_are(size):
    game = Majorities()
    state = game.new({"size": str(size)}, PLAYERS)
    rendered = game.render(state, None)
    middle = chr(ord("a") + size - 1)
    last = chr(ord("a") + 2 * size - 2)
    assert "The numbers around the board are not cells" in " ".join(rendered.split())
    assert f"(the 1 above row a and the 1 below row {last}: a1 to {middle}1 to {last}1)" in " ".join(rendered.split())
    # and it is true: the cells numbered 1, all live, run from one step
    # below the top 1 to one step above the bottom 1, bent at the middle row
    lines = board_lines(rendered)
    top, bottom = lines[0].index("1"), lines[-1].index("1")
    cells = board_for(size)
    columns = []
    for row in range(2 * size - 1):
        label = f"{chr(ord('a') + row)}1"
        assert cells.index_of_label[label] not in cells.dead
        placed = board_lines(game.render(game.play(state, 0, label), None))
        columns.append(placed[1 + row].index("(X)") + 1)
    step = columns[0] - columns[1]
    assert step > 0
    assert columns == [top - step - step * min(row, 2 * size - 2 - row) for row in range(2 * size - 1)]
    assert bottom == top


#: a marker or last-move mark with no space between it and the next square
SYNCH_TOUCHING = re.compile(r"[12*<?]\S")


@pytest.mark.parametrize("options", [{"size": "4"}, {"size": "26"}, {"size": "8", "order": "direction-first"}])
def test_a_synch_marker_never_touches_the_next_square(options):
    game = Synch()
    for seed in range(3):
        for state in positions(game, options, seed, 60):
            lines = board_lines(game.render(state, None))
            assert max(len(line) for line in lines) <= 72
            for line in lines[1:-1]:
                cells = line.split(None, 1)[1].rsplit(None, 1)[0]
                assert not SYNCH_TOUCHING.search(cells), line


def test_the_synch_legend_says_what_lies_under_each_marker():
    game = Synch()
    state = game.new({"size": "4"}, PLAYERS)
    for move in ("place c3", "place d3", "opposition", "s"):
        state = game.play(state, min(game.to_move(state)), move)
    rendered = game.render(state, None)
    assert board_lines(rendered)[1:5] == ["4 . . . 2  4", "3 . . x o  3", "2 . . 1 .  2", "1 . . . .  1"]
    assert "1 = alice's marker on c2 (an x, just marked)." in rendered
    assert "2 = bob's marker on d4 (an o, just marked)." in rendered


def synch_texts(game: Game, options: Mapping[str, str], seed: int, turns: int) -> tuple[Any, list[str]]:
    """The position after a random game and the move texts that led there."""
    rng = random.Random(seed)
    state = game.new(options, PLAYERS)
    texts = []
    for _ in range(turns):
        if game.outcome(state) is not None:
            break
        seat = min(game.to_move(state))
        texts.append(rng.choice(game.legal_moves(state, seat)))
        state = game.play(state, seat, texts[-1])
    return state, texts


@pytest.mark.parametrize("order", ["mode-first", "direction-first"])
def test_synch_lists_its_moves_a_round_a_line(order):
    game = Synch()
    for seed in range(20):
        state, texts = synch_texts(game, {"size": "4", "order": order}, seed, 40)
        rounds = game.move_rounds(state, texts)
        assert sum(count for _, count in rounds) == len(texts)
        assert rounds[0] == ("set-up", 2)
        assert [label for label, _ in rounds[1:]] == [f"round {n}" for n in range(1, len(rounds))]
        start = 2
        for _, count in rounds[1:]:
            halves = texts[start : start + count]
            # a mode and a direction, or a lone direction whose decider could not step
            assert sorted(text in ("synch", "opposition") for text in halves) in ([False, True], [False])
            start += count
        # the last moves alone: the round they begin inside is left out
        tail = texts[-5:]
        cut = game.move_rounds(state, tail)
        assert cut == rounds[-len(cut) :] and len(tail) - sum(count for _, count in cut) <= 1


def test_other_games_keep_their_move_lists_in_columns():
    for game in (Majorities(), Plurality()):
        state = game.new({}, PLAYERS)
        assert game.move_rounds(state, []) == []


#: a mark (last move, change, hidden preference) right against what follows it
MARK_AGAINST_NEXT = re.compile(r"[<*?]\S")


@pytest.mark.parametrize("options", PLURALITY_BOARDS)
def test_a_plurality_last_drop_mark_never_touches_the_next_cell(options):
    game = Plurality()
    for seed in range(3):
        for state in positions(game, options, seed, 40):
            lines = board_lines(game.render(state, None))
            assert max(len(line) for line in lines) <= 72
            for line in lines:
                assert not MARK_AGAINST_NEXT.search(line), line


@pytest.mark.parametrize("boards", ["upper", "lower", "both"])
def test_a_parliament_mark_never_touches_the_next_seat(boards):
    game = Parliament()
    for seed in range(3):
        for state in positions(game, {"boards": boards}, seed, 120):
            for viewer in (None, 0, 1):
                rendered = game.render(state, viewer)
                assert max(len(line) for line in rendered.splitlines()) <= 72
                chambers = rendered.split("\n\n")[1:-1]
                for line in "\n".join(chambers).splitlines():
                    if ROW_LINE.match(line):
                        assert not MARK_AGAINST_NEXT.search(line), line


def test_parliament_stacks_the_chambers_with_each_seat_three_columns_wide():
    game = Parliament()
    state = game.play(game.new({}, PLAYERS), 0, "prefer U:c4")
    state = game.play(state, 1, "prefer none")
    state = game.play(state, 0, "U:d4")
    rendered = game.render(state, 0)
    assert "\n4 .  .  r? R< .  .  .  .  .  .  4\n" in rendered
    assert rendered.index("Upper chamber") < rendered.index("\n\nLower chamber")
