"""Majorities (the rules `majorities help` gives): hand-built positions for every rule, and random games."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.majorities import Majorities, MajoritiesState, board_for, dead_cubes, tallies
from pbmserv.gamekit import HexHexGrid, IllegalMove, InvalidOption
from tests.game_invariants import check_random_game

GAME = Majorities()
PLAYERS = ["alice", "bob"]

#: the dead cells exactly as the rules list them, with the live-cell counts
RULES_DEAD_CELLS = {
    3: ("b2 c3 c4 d2", 15),
    5: ("b2 d4 e6 e8 f4 h2", 55),
    7: ("b2 d4 f6 g7 g8 g10 g12 h6 j4 l2", 117),
}


def new(size: int = 5) -> MajoritiesState:
    return GAME.new({"size": str(size)}, PLAYERS)


def position(size: int, x: str = "", o: str = "", last: str = "") -> MajoritiesState:
    """A board with alice's stones on `x` and bob's on `o` (space-separated cells)."""
    board = board_for(size)
    marks = list(board.empty_board)
    for seat, cells in enumerate((x, o)):
        for label in cells.split():
            marks[board.index_of_label[label]] = str(seat)
    last_move = tuple(sorted(board.index_of_label[label] for label in last.split()))
    return replace(new(size), board="".join(marks), last_move=last_move)


def play_all(state: MajoritiesState, *moves: str) -> MajoritiesState:
    for move in moves:
        (seat,) = GAME.to_move(state)
        state = GAME.play(state, seat, move)
    return state


def refusal(state: MajoritiesState, seat: int, text: str) -> str:
    with pytest.raises(IllegalMove) as caught:
        GAME.play(state, seat, text)
    return caught.value.message


def board_part(render: str) -> str:
    return render.split("\n\n")[0]


# -- the board ------------------------------------------------------------------


@pytest.mark.parametrize("size", [3, 5, 7])
def test_dead_cells_are_the_rules_lists_and_follow_the_cube_rule(size):
    listed, live_count = RULES_DEAD_CELLS[size]
    board = board_for(size)
    assert sorted(board.labels[i] for i in board.dead) == sorted(listed.split())
    assert len(board.live) == live_count
    grid = HexHexGrid(size)
    from_rule = {grid.label(cell) for cell in grid.cells if grid.cube(cell) in dead_cubes(size)}
    assert from_rule == set(listed.split())


def test_cube_convention_matches_rules_md():
    grid = HexHexGrid(5)
    assert grid.cube(grid.parse("e6")) == (1, -1, 0)
    assert grid.cube(grid.parse("e5")) == (0, 0, 0)
    assert (0, 0, 0) not in dead_cubes(5)
    assert (0, 0, 0) in dead_cubes(3) and (0, 0, 0) in dead_cubes(7)


@pytest.mark.parametrize("size", [3, 5, 7])
def test_every_line_has_an_odd_number_of_live_cells(size):
    board = board_for(size)
    for direction, lines in board.lines.items():
        assert len(lines) == 2 * size - 1, direction
        assert all(len(line) % 2 == 1 for line in lines), direction
        covered = sorted(i for line in lines for i in line)
        assert covered == sorted(board.live), "each live cell lies on exactly one line"


def test_dead_cells_do_not_split_a_line():
    board = board_for(5)
    row_e = [board.labels[i] for i in board.lines["row"][4]]
    assert row_e == ["e1", "e2", "e3", "e4", "e5", "e7", "e9"]


# -- options ----------------------------------------------------------------------


def test_size_defaults_to_five():
    state = GAME.new({}, PLAYERS)
    assert state.size == 5
    assert len(GAME.legal_moves(state, 0)) == 55


@pytest.mark.parametrize("size, live", [(3, 15), (5, 55), (7, 117)])
def test_size_option(size, live):
    state = GAME.new({"size": str(size)}, PLAYERS)
    assert len(GAME.legal_moves(state, 0)) == live


@pytest.mark.parametrize("raw", ["4", "9", "1", "big", ""])
def test_bad_size_is_refused_with_the_allowed_values(raw):
    with pytest.raises(InvalidOption) as caught:
        GAME.new({"size": raw}, PLAYERS)
    assert "3, 5 or 7" in caught.value.message


def test_unknown_option_is_refused():
    with pytest.raises(InvalidOption) as caught:
        GAME.new({"hidden": None}, PLAYERS)
    assert "-size" in caught.value.message


def test_exactly_two_players():
    with pytest.raises(InvalidOption):
        GAME.new({}, ["alice"])


# -- turns ------------------------------------------------------------------------


def test_first_turn_places_one_stone_then_two_per_turn():
    state = new()
    assert GAME.to_move(state) == {0}
    state = GAME.play(state, 0, "e5")
    assert GAME.to_move(state) == {1}
    state = GAME.play(state, 1, "a5,f3")
    assert GAME.to_move(state) == {0}
    state = GAME.play(state, 0, "c1,c2")
    assert GAME.to_move(state) == {1}
    assert state.board.count("0") == 3 and state.board.count("1") == 2


def test_first_turn_refuses_two_stones():
    reason = refusal(new(), 0, "a1,a2")
    assert "one stone" in reason and "you gave 2" in reason


@pytest.mark.parametrize(
    "text, gave", [("c1", "you gave 1 cell."), ("c1,c2,c3", "you gave 3 cells.")]
)
def test_later_turns_refuse_one_or_three_stones(text, gave):
    state = play_all(new(), "e5")
    reason = refusal(state, 1, text)
    assert "exactly two stones" in reason and reason.endswith(gave)


def test_same_cell_twice_is_refused():
    state = play_all(new(), "e5")
    reason = refusal(state, 1, "c1, C1")
    assert reason.startswith("c1 is given twice") and "different" in reason


def test_occupied_cell_is_refused_naming_its_owner():
    state = play_all(new(), "e5")
    reason = refusal(state, 1, "e5,a1")
    assert reason.startswith("e5 already holds a stone of alice") and "empty" in reason
    state = play_all(state, "a1,a2")
    assert refusal(state, 0, "a3,A2").startswith("a2 already holds a stone of bob")


@pytest.mark.parametrize("size", [3, 5, 7])
def test_every_dead_cell_is_refused(size):
    state = new(size)
    for cell in RULES_DEAD_CELLS[size][0].split():
        assert refusal(state, 0, cell.upper()).startswith(
            f"{cell} is not on the board: it is a dead cell"
        )
    state = play_all(state, "a1")
    assert refusal(state, 1, "a2,b2").startswith("b2 is not on the board: it is a dead cell")


def test_cells_off_the_board_and_garbage_are_refused():
    state = play_all(new(), "e5")
    assert refusal(state, 1, "a6,c1").startswith("a6 is off the board: row a has cells 1-5")
    assert refusal(state, 1, "j1,c1").startswith("j1 is off the board")
    assert refusal(state, 1, "zz,c1").startswith("'zz' is not a cell")
    assert "Send the cell" in refusal(state, 1, "  ,  ")


def test_spellings_and_order_do_not_matter():
    state = play_all(new(7), "g1")
    plays = [GAME.play(state, 1, text) for text in ("A5, f4", "f4,a5", " a5   F4 ", "f4 ,a5")]
    assert all(p == plays[0] for p in plays)
    assert str(GAME.read_move(state, 1, "F4 , a5")) == "a5,f4"
    assert str(GAME.read_move(state, 1, "e10,e2")) == "e2,e10"


def test_not_your_turn():
    state = new()
    assert refusal(state, 1, "e5") == "It is not your turn: alice is to move."
    state = play_all(state, "e5")
    assert refusal(state, 0, "a1,a2") == "It is not your turn: bob is to move."


# -- legal moves ------------------------------------------------------------------


def test_first_turn_legal_moves_are_the_live_cells():
    moves = GAME.legal_moves(new(), 0)
    assert moves[:3] == ["a1", "a2", "a3"]
    assert "b2" not in moves and "f4" not in moves
    assert GAME.legal_moves(new(), 1) == []


@pytest.mark.parametrize("size", [3, 5, 7])
def test_later_legal_moves_are_every_pair_of_empty_live_cells(size):
    state = play_all(new(size), "a1")
    moves = GAME.legal_moves(state, 1)
    empty_live = len(board_for(size).live) - 1
    assert len(moves) == len(set(moves)) == math.comb(empty_live, 2)
    assert GAME.legal_moves(state, 0) == []
    assert moves[0] == "a2,a3"
    assert all(not move.startswith("a1") and ",a1" not in move for move in moves)
    for move in moves[:: max(1, len(moves) // 50)]:
        assert str(GAME.read_move(state, 1, move)) == move
        GAME.play(state, 1, move)


def test_legal_pairs_are_in_reading_order_not_text_order():
    moves = set(GAME.legal_moves(play_all(new(7), "a1"), 1))
    assert "e2,e10" in moves and "e10,e2" not in moves
    assert "a7,m1" in moves


# -- lines, directions, the end ---------------------------------------------------


def test_a_line_is_won_by_more_than_half_before_it_is_full():
    counts = tallies(5, position(5, x="a1 a2 a3").board)
    assert counts["row"].lines_won == (1, 0)
    counts = tallies(5, position(5, x="a1 a2", o="a3").board)
    assert counts["row"].lines_won == (0, 0) and counts["row"].open_lines == 9


def test_dead_cells_do_not_count_toward_a_line():
    # row b: six cells, b2 dead, so three stones are a majority of its five live cells
    assert tallies(5, position(5, o="b1 b3 b4").board)["row"].lines_won == (0, 1)
    # row e: nine cells, e6 and e8 dead; four stones across the dead cells win it
    assert tallies(5, position(5, x="e4 e5 e7 e9").board)["row"].lines_won == (1, 0)
    assert tallies(5, position(5, x="e5 e7 e9").board)["row"].lines_won == (0, 0)


def test_a_direction_is_held_with_more_than_half_of_its_lines():
    four_rows = "a1 a2 a3 b1 b3 b4 c1 c2 c3 c4 d1 d2 d3 d5"
    counts = tallies(5, position(5, x=four_rows).board)
    assert counts["row"].lines_won == (4, 0) and counts["row"].holder is None
    counts = tallies(5, position(5, x=four_rows + " e1 e2 e3 e4").board)
    assert counts["row"].lines_won == (5, 0) and counts["row"].holder == 0
    assert counts["row"].open_lines == 4


# alice takes rows a, b, c and the NE-SW lines a1-c1, a2-d1, a3-e1 on her last turn
WINNING_GAME = ("a1", "d1,d3", "a2,b1", "d4,e1", "b3,c1", "e2,e3", "c2,a3")


def test_the_game_ends_at_once_when_a_player_holds_two_directions():
    before = play_all(new(3), *WINNING_GAME[:-1])
    assert GAME.outcome(before) is None
    assert tallies(3, before.board)["row"].lines_won == (2, 2)
    state = play_all(before, WINNING_GAME[-1])
    assert state.board.count(".") == 2, "b4 and c5 are still empty"
    outcome = GAME.outcome(state)
    assert outcome is not None
    assert outcome.winners == (0,)
    assert outcome.scores == (2, 0)
    assert outcome.reason == "2 of the 3 directions (rows and NE-SW)"
    assert GAME.to_move(state) == frozenset()
    assert GAME.legal_moves(state, 1) == [] and GAME.legal_moves(state, 0) == []
    assert refusal(state, 1, "b4,c5") == (
        "The game is over: alice won 2 of the 3 directions (rows and NE-SW)."
    )


def test_one_direction_is_not_enough_and_scores_count_every_held_direction():
    # bob holds the rows only: the game goes on
    rows = "a1 a2 b1 b3 c1 c2"
    assert GAME.outcome(position(3, o=rows)) is None
    assert tallies(3, position(3, o=rows).board)["row"].holder == 1
    # alice holds NE-SW and NW-SE while bob holds the rows
    state = position(3, x="a3 b4 d1 d3 d4 e1 e3", o=rows)
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.winners == (0,) and outcome.scores == (2, 1)
    assert outcome.reason == "2 of the 3 directions (NE-SW and NW-SE)"


def test_a_full_board_always_has_a_winner():
    board = board_for(3)
    cells = [board.labels[i] for i in board.live]
    state = position(3, x=" ".join(cells[0::2]), o=" ".join(cells[1::2]))
    counts = tallies(3, state.board)
    assert all(tally.open_lines == 0 and tally.holder is not None for tally in counts.values())
    assert GAME.outcome(state) is not None


# -- the board mail ---------------------------------------------------------------


def test_render_shows_board_legend_last_move_and_tallies():
    state = play_all(new(), "e5", "a5,f3", "a1,a2", "i1,i2", "c1,a3")
    text = GAME.render(state, None)
    assert text == GAME.render(state, 0) == GAME.render(state, 1)
    board = board_part(text).splitlines()
    assert board[0].split() == ["1", "2", "3", "4", "5"]
    assert [line[0] for line in board[1:10]] == list("abcdefghi")
    assert board_part(text).count("-") == 6
    assert board[1] == "a      X X(X). O 6"
    assert board[5] == "e  . . . . X - . - ."
    assert board[3] == "c   (X). . . . . . 8"
    assert board[6] == "f   . . O - . . . . 9"
    assert "X = alice (Black)   O = bob (White)" in text
    assert "(X) = last move, alice a3,c1" in text
    assert "rows              1      0     8  -" in text
    assert "A direction needs 5 of its 9 lines; the game needs 2 directions." in text
    assert "places" not in text
    assert GAME.move_hint(state) == "bob (O) places two stones on empty cells, like a4,b1."
    assert max(len(line) for line in text.splitlines()) <= 72


def test_render_of_the_first_turn_and_of_a_finished_game():
    text = GAME.render(new(3), None)
    assert "(X)" not in board_part(text) and "last move" not in text
    assert GAME.move_hint(new(3)) == "alice (X) places one stone this turn, like a1."
    finished = GAME.render(play_all(new(3), *WINNING_GAME), None)
    assert GAME.move_hint(play_all(new(3), *WINNING_GAME)) == ""
    assert "rows              3      2     0  alice" in finished
    assert "NE-SW             3      2     0  alice" in finished
    assert "NW-SE             2      2     1  -" in finished


def test_render_of_size_seven_fits_a_mail():
    state = play_all(new(7), "g1", "g13,m7")
    text = GAME.render(state, None)
    assert max(len(line) for line in text.splitlines()) <= 72
    assert board_part(text).count("-") == 10
    assert "(O)" in board_part(text) and "(X)" not in board_part(text)


# -- storage and help -------------------------------------------------------------


def test_encode_decode_round_trip():
    state = play_all(new(7), "g1", "g13,m7", "a1,a2")
    data = json.loads(json.dumps(GAME.encode(state)))
    assert data["last_move"] == ["a1", "a2"]
    assert GAME.decode(data) == state


def test_reason_reads_after_game_won_by_and_names_all_three_directions():
    """The server writes "Game won by alice: <reason>." - so the reason is a
    phrase without a full stop, and three directions are listed with commas."""
    rows, ne_sw = "a1 a2 b1 b3 c1 c2", "a3 b4 d1 d3 d4 e1 e3"
    outcome = GAME.outcome(position(3, x=rows + " " + ne_sw))
    assert outcome is not None and outcome.scores == (3, 0)
    assert outcome.reason == "all 3 directions (rows, NE-SW and NW-SE)"


def test_help_fits_a_72_column_mail():
    assert max(len(line) for line in GAME.help().splitlines()) <= 72


def test_help_explains_rules_moves_and_options():
    text = GAME.help()
    for needed in ("majorities challenge", "-size=", "3, 5 or 7", "default 5", "a5,f3",
                   "dead", "more than half", "two of the three directions"):
        assert needed in text


# -- random games -----------------------------------------------------------------


def same_view_for_everyone(game, state):
    views = {game.render(state, viewer) for viewer in (None, 0, 1)}
    assert len(views) == 1, "Majorities has no secrets: every viewer sees the same board"
    (view,) = views
    board = board_part(view)
    placed = state.board.count("0") + state.board.count("1")
    assert board.count("X") + board.count("O") == placed


@pytest.mark.parametrize("options", [{}, {"size": "3"}, {"size": "5"}])
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_random_games(options, seed):
    state, outcome = check_random_game(GAME, options, seed, check_views=same_view_for_everyone)
    assert len(outcome.winners) == 1 and outcome.scores is not None
    assert outcome.scores[outcome.winners[0]] >= 2 and sum(outcome.scores) <= 3


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_random_games_size_seven(seed):
    state, outcome = check_random_game(
        GAME, {"size": "7"}, seed, check_views=same_view_for_everyone
    )
    assert len(outcome.winners) == 1
