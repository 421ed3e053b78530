"""Move In Synch, In Opposition (the rules `synch help` gives): hand-built positions for
every rule and option, and random games."""

from __future__ import annotations

import json
from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.synch import Synch
from games.synch.state import SynchState
from pbmserv.gamekit import Game, IllegalMove, InvalidOption, SquareGrid
from tests.game_invariants import check_random_game

GAME = Synch()
PLAYERS = ("alice", "bob")


def position(
    picture: str = "",
    *,
    alice: str = "c3",
    bob: str = "f6",
    size: int = 8,
    order: str = "mode-first",
    moves_done: int = 0,
    pending: str | None = None,
    quiet_moves: int = 0,
) -> SynchState:
    """A running game: `picture` gives the symbols row by row from the top
    (x alice, o bob, . empty; blank means an empty board); alice's and bob's
    markers stand on the given squares."""
    grid = SquareGrid(size, size)
    rows = picture.split() or ["." * size] * size
    assert len(rows) == size and all(len(row) == size for row in rows)
    marks = "".join(rows[size - 1 - rank] for rank in range(size))
    return SynchState(
        size=size,
        order=order,
        players=PLAYERS,
        markers=(grid.parse(alice), grid.parse(bob)),
        marks=marks,
        moves_done=moves_done,
        pending=pending,
        quiet_moves=quiet_moves,
        last=None,
    )


def mark_at(state: SynchState, square: str) -> str:
    file, rank = SquareGrid(state.size, state.size).parse(square)
    return state.marks[rank * state.size + file]


def label(state: SynchState, seat: int) -> str:
    marker = state.markers[seat]
    assert marker is not None
    return SquareGrid(state.size, state.size).label(marker)


def play_all(state: SynchState, *moves: str) -> SynchState:
    for move in moves:
        (seat,) = GAME.to_move(state)
        state = GAME.play(state, seat, move)
    return state


def flat(board: str) -> str:
    """The board mail's text with its line breaks undone."""
    return " ".join(board.split())


def refusal(state: SynchState, seat: int, text: str) -> str:
    with pytest.raises(IllegalMove) as caught:
        GAME.play(state, seat, text)
    return caught.value.message


def started(options: dict | None = None) -> SynchState:
    return play_all(GAME.new(options or {}, PLAYERS), "place c3", "place f6")


# -- options ------------------------------------------------------------------


def test_defaults_are_an_8x8_board_in_mode_first_order():
    state = GAME.new({}, PLAYERS)
    assert state.size == 8
    assert state.order == "mode-first"
    assert state.marks == "." * 64


@pytest.mark.parametrize("size", [4, 13, 26])
def test_size_option_sets_the_board(size):
    state = GAME.new({"size": str(size)}, PLAYERS)
    assert len(state.marks) == size * size
    assert GAME.render(state, None).splitlines()[1].startswith(f"{size} ")


@pytest.mark.parametrize("raw", ["3", "27", "big", ""])
def test_bad_sizes_are_refused(raw):
    with pytest.raises(InvalidOption) as caught:
        GAME.new({"size": raw}, PLAYERS)
    assert "4..26" in caught.value.message


def test_order_option_takes_two_values():
    assert GAME.new({"order": "direction-first"}, PLAYERS).order == "direction-first"
    assert GAME.new({"order": "Mode-First"}, PLAYERS).order == "mode-first"
    with pytest.raises(InvalidOption) as caught:
        GAME.new({"order": "random"}, PLAYERS)
    assert "mode-first|direction-first" in caught.value.message


def test_unknown_option_is_refused():
    with pytest.raises(InvalidOption) as caught:
        GAME.new({"hidden": None}, PLAYERS)
    assert "-size, -order" in caught.value.message


def test_class_attributes():
    assert GAME.name == "synch"
    assert GAME.min_players == GAME.max_players == 2
    assert GAME.side_names == ("X", "O")
    assert [option.name for option in GAME.options] == ["size", "order"]


# -- set-up -------------------------------------------------------------------


def test_first_player_places_then_second_and_start_squares_get_symbols():
    state = GAME.new({}, PLAYERS)
    assert GAME.to_move(state) == {0}
    assert "alice must send place and a square" in GAME.render(state, None)
    state = GAME.play(state, 0, "place c3")
    assert GAME.to_move(state) == {1}
    assert mark_at(state, "c3") == "x"
    assert "bob must send place and a square other than c3" in GAME.render(state, None)
    state = GAME.play(state, 1, "place f6")
    assert mark_at(state, "f6") == "o"
    assert state.markers == ((2, 2), (5, 5))
    assert state.marks.count(".") == 62


def test_second_player_may_not_place_on_the_first_players_square():
    state = GAME.play(GAME.new({}, PLAYERS), 0, "place c3")
    reason = refusal(state, 1, "place c3")
    assert "c3 holds alice's marker" in reason
    assert "other square" in reason
    assert "place c3" not in GAME.legal_moves(state, 1)
    assert len(GAME.legal_moves(state, 1)) == 63


def test_placement_legal_moves_and_spellings():
    state = GAME.new({"size": "4"}, PLAYERS)
    assert GAME.legal_moves(state, 0) == [
        f"place {f}{r}" for r in (4, 3, 2, 1) for f in "abcd"
    ]
    assert GAME.legal_moves(state, 1) == []
    for text in ("PLACE  C3", "c3", " put c3 ", "place c 3"):
        assert GAME.play(state, 0, text).markers[0] == (2, 2)
        assert str(GAME.read_move(state, 0, text)) == "place c3"


def test_placement_off_the_board_or_out_of_turn_is_refused():
    state = GAME.new({"size": "4"}, PLAYERS)
    assert "off the board" in refusal(state, 0, "place e1")
    assert "It is not your turn: alice must send place" in refusal(state, 1, "place a1")
    assert "not placed yet" in refusal(state, 0, "synch")
    assert "not placed yet" in refusal(state, 0, "ne")
    assert "'place' is not a move here" in refusal(state, 0, "place")


# -- roles and halves ---------------------------------------------------------


def test_mode_first_halves_and_alternating_roles():
    state = started()
    # move 1: alice directions, bob decides and speaks first
    assert GAME.to_move(state) == {1}
    assert GAME.legal_moves(state, 0) == []
    assert "bob must send synch or opposition." in GAME.render(state, None)
    assert "Round 1: alice is the directioner, bob the decider." in GAME.render(state, None)
    state = GAME.play(state, 1, "synch")
    assert GAME.to_move(state) == {0}
    assert GAME.legal_moves(state, 1) == []
    assert "alice must send a direction: n, ne, e, se, s, sw, w, nw." in GAME.render(state, 1)
    state = GAME.play(state, 0, "ne")
    assert (label(state, 0), label(state, 1)) == ("d4", "g7")
    # move 2: the roles swap, alice decides
    assert GAME.to_move(state) == {0}
    assert "Round 2: bob is the directioner, alice the decider." in GAME.render(state, None)
    state = play_all(state, "opposition", "s")
    assert (label(state, 0), label(state, 1)) == ("d5", "g6")
    assert state.moves_done == 2
    assert GAME.to_move(state) == {1}


def test_out_of_turn_halves_are_refused_with_what_is_due():
    state = started()
    assert refusal(state, 0, "n") == "It is not your turn: bob must send synch or opposition."
    state = GAME.play(state, 1, "opposition")
    assert refusal(state, 1, "synch").startswith(
        "It is not your turn: alice must send a direction"
    )


def test_wrong_kind_of_half_is_explained():
    state = started()
    reason = refusal(state, 1, "n")
    assert "decider of round 1" in reason and "alice then names the direction" in reason
    assert "already placed" in refusal(state, 1, "place a1")
    state = GAME.play(state, 1, "synch")
    assert "bob already announced synch: send a direction" in refusal(state, 0, "opposition")
    assert "'jump' is not a move here: you must send a direction" in refusal(state, 0, "jump")
    assert "is not a move here" in refusal(state, 0, "a0")


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("North-East", "ne"),
        ("north east", "ne"),
        (" NE ", "ne"),
        ("up", "n"),
        ("left", "w"),
        ("south_west", "sw"),
    ],
)
def test_direction_spellings(text, canonical):
    state = GAME.play(started(), 1, "synch")
    assert str(GAME.read_move(state, 0, text)) == canonical
    assert GAME.play(state, 0, text) == GAME.play(state, 0, canonical)


@pytest.mark.parametrize(
    ("text", "canonical"),
    [("Synch", "synch"), ("in synch", "synch"), ("sync", "synch"), ("OPP", "opposition"),
     ("in opposition", "opposition")],
)
def test_mode_spellings(text, canonical):
    state = started()
    assert str(GAME.read_move(state, 1, text)) == canonical
    assert GAME.play(state, 1, text) == GAME.play(state, 1, canonical)


def every_kind_of_move() -> list[tuple[SynchState, int, str]]:
    """(state, seat, text) for a placement, a mode and a direction in either order."""
    new = GAME.new({"size": "8"}, PLAYERS)
    mode_first = started()
    direction_first = started({"order": "direction-first"})
    return [
        (new, 0, " Put C3 "),
        (GAME.play(new, 0, "c3"), 1, "f6"),
        (mode_first, 1, "In Synch"),
        (GAME.play(mode_first, 1, "opp"), 0, "North-East"),
        (direction_first, 0, "south_west"),
        (GAME.play(direction_first, 0, "sw"), 1, "OPPOSITION"),
    ]


@pytest.mark.parametrize("case", range(6))
def test_a_move_value_prints_its_canonical_text_and_reads_it_back(case):
    state, seat, text = every_kind_of_move()[case]
    move = GAME.read_move(state, seat, text)
    assert str(move) == str(GAME.read_move(state, seat, text))
    assert GAME.read_move(state, seat, str(move)) == move
    assert move.secret is False
    assert GAME.apply(state, seat, move) == GAME.play(state, seat, text)


def test_reading_a_bad_move_says_what_is_wrong_and_changes_nothing():
    state = play_all(GAME.new({"size": "4"}, PLAYERS), "place a1", "place c3")
    before = GAME.encode(state)
    with pytest.raises(IllegalMove, match="'jump' is not a move here: you must send synch or opposition"):
        GAME.read_move(state, 1, "jump")
    with pytest.raises(IllegalMove, match="Both markers are already placed"):
        GAME.read_move(state, 1, "place b2")
    announced = GAME.play(state, 1, "synch")
    with pytest.raises(IllegalMove, match="Going s from a1 takes your marker off the board: send one of n, ne, e[.]"):
        GAME.read_move(announced, 0, "s")
    assert GAME.encode(state) == before
    cornered = play_all(GAME.new({"size": "4"}, PLAYERS), "place a1", "place d4")
    with pytest.raises(IllegalMove, match="In synch no direction keeps both markers on the board: announce opposition"):
        GAME.read_move(cornered, 1, "synch")


# -- the legal-direction rule and the mode rule (mode-first) ------------------


def test_mode_without_any_legal_direction_may_not_be_announced():
    # alice (directioner) in a1 can only go n, ne, e; bob in h8 only s, sw, w
    state = position(alice="a1", bob="h8")
    assert GAME.legal_moves(state, 1) == ["opposition"]
    assert refusal(state, 1, "synch") == (
        "In synch no direction keeps both markers on the board: announce opposition."
    )
    assert "bob must send opposition." in GAME.render(state, None)
    state = GAME.play(state, 1, "opposition")
    assert GAME.legal_moves(state, 0) == ["n", "ne", "e"]


def test_direction_must_keep_both_markers_on_the_board():
    state = position(alice="d1", bob="d8", pending="synch")
    # alice could go n, ne, nw, e, w; bob (in synch) only e, se, s, sw, w
    assert GAME.legal_moves(state, 0) == ["e", "w"]
    assert refusal(state, 0, "s") == (
        "Going s from d1 takes your marker off the board: send one of e, w."
    )
    assert refusal(state, 0, "n") == (
        "Going n in synch takes bob's marker n from d8 off the board: send one of e, w."
    )
    opposed = position(alice="d1", bob="d8", pending="opposition")
    assert GAME.legal_moves(opposed, 0) == ["n", "ne", "e", "w", "nw"]
    moved = GAME.play(opposed, 0, "ne")
    assert (label(moved, 0), label(moved, 1)) == ("e2", "c7")


def test_legality_is_judged_from_the_positions_before_the_move():
    # the markers swap squares: each steps from where it stood before the move
    state = position(alice="c3", bob="d3", pending="opposition")
    moved = GAME.play(state, 0, "e")
    assert (label(moved, 0), label(moved, 1)) == ("d3", "c3")


def test_a_decider_on_the_same_square_as_the_directioner():
    state = position(alice="a1", bob="a1")
    assert GAME.legal_moves(state, 1) == ["synch"]
    state = GAME.play(state, 1, "synch")
    assert GAME.legal_moves(state, 0) == ["n", "ne", "e"]


def test_the_decider_always_has_a_mode_with_a_legal_direction():
    squares = [f"{f}{r}" for f in "abcde" for r in range(1, 6)]
    for alice, bob in product(squares, squares):
        state = position(alice=alice, bob=bob, size=5)
        modes = GAME.legal_moves(state, 1)
        assert modes
        for mode in modes:
            assert GAME.legal_moves(GAME.play(state, 1, mode), 0)


# -- marking ------------------------------------------------------------------


def test_both_markers_draw_on_the_empty_squares_they_reach():
    state = play_all(position(alice="c3", bob="f6"), "opposition", "e")
    assert mark_at(state, "d3") == "x"
    assert mark_at(state, "e6") == "o"
    assert state.marks.count(".") == 62
    assert state.quiet_moves == 0


def test_symbols_are_never_overwritten():
    picture = """
        ........
        ........
        ........
        ........
        ........
        ...o....
        ........
        .....x..
    """
    # alice steps onto bob's d3, bob onto alice's f1
    state = position(picture, alice="c2", bob="g2", quiet_moves=5)
    state = play_all(state, "opposition", "ne")
    assert (label(state, 0), label(state, 1)) == ("d3", "f1")
    assert mark_at(state, "d3") == "o"
    assert mark_at(state, "f1") == "x"
    assert state.marks.count(".") == 62
    assert state.quiet_moves == 6
    assert "No new symbol." in GAME.render(state, None)


def test_both_markers_on_the_same_empty_square_draw_nothing():
    state = position(alice="c3", bob="e3", pending="opposition")
    state = GAME.play(state, 0, "e")
    assert state.markers[0] == state.markers[1] == (3, 2)
    assert mark_at(state, "d3") == "."
    assert state.quiet_moves == 1
    board = GAME.render(state, None)
    assert "3 . . . * . . . .  3" in board
    assert "* = both markers on d3 (empty)." in board
    assert "Both markers landed on empty d3, so neither marked it." in flat(board)


def test_shared_square_holding_a_symbol_shows_both_markers():
    picture = "\n".join(["........"] * 5 + ["...x....", "........", "........"])
    state = play_all(position(picture, alice="c3", bob="e3"), "opposition", "e")
    board = GAME.render(state, None)
    assert "3 . . . * . . . .  3" in board
    assert "* = both markers on d3 (an x)." in board
    assert mark_at(state, "d3") == "x"


def test_markers_may_share_a_square_and_part_again():
    state = position(alice="d4", bob="d4")
    state = play_all(state, "opposition", "n")
    assert (label(state, 0), label(state, 1)) == ("d5", "d3")
    assert mark_at(state, "d5") == "x" and mark_at(state, "d3") == "o"


# -- the end ------------------------------------------------------------------


def test_game_ends_when_every_square_is_marked():
    picture = "xxxo oxox xoxo ox.o"
    state = position(picture, alice="b1", bob="d4", size=4)
    final = play_all(state, "opposition", "e")
    assert mark_at(final, "c1") == "x"
    outcome = GAME.outcome(final)
    assert outcome is not None
    assert outcome.winners == (0,)
    assert outcome.scores == (9.0, 7.0)
    # the server writes "Game won by alice: <reason>.": a short phrase, no full stop
    assert outcome.reason == "9 symbols to 7, every square marked"
    assert GAME.to_move(final) == frozenset()
    assert GAME.legal_moves(final, 0) == GAME.legal_moves(final, 1) == []
    assert refusal(final, 0, "synch") == "The game is over: no more moves are accepted."
    rendered = GAME.render(final, None)
    assert "Game over. alice wins by 9 symbols to 7: every square is marked." in flat(rendered)
    assert "without a new symbol" not in rendered  # no count towards an end already reached


def test_equal_counts_at_the_end_are_a_draw():
    picture = "xxxo oxox xoxo oo.o"
    state = position(picture, alice="b1", bob="d4", size=4)
    outcome = GAME.outcome(play_all(state, "opposition", "e"))
    assert outcome is not None
    assert outcome.winners == ()
    assert outcome.scores == (8.0, 8.0)
    assert outcome.reason == "8 symbols each, every square marked"


def test_game_ends_when_one_player_cannot_catch_up():
    # alice 8, bob 3, 5 empty: bob could still draw level
    picture = "xxxx xxxx .... .ooo"
    open_game = position(picture, alice="d3", bob="b1", size=4)
    assert GAME.outcome(open_game) is None
    final = play_all(open_game, "opposition", "s")
    assert mark_at(final, "d2") == "x" and mark_at(final, "b2") == "o"
    outcome = GAME.outcome(final)
    assert outcome is not None
    assert outcome.winners == (0,)
    assert outcome.scores == (9.0, 4.0)
    assert outcome.reason == "9 symbols to 4, bob cannot catch up"
    assert "Game over. alice wins by 9 symbols to 4: bob cannot catch up with only 3 empty" in (
        flat(GAME.render(final, None))
    )


def test_game_ends_after_too_many_moves_without_a_new_symbol():
    picture = "xxxo oxox xoxo ox.o"
    limit = 2 * 4 * 4
    state = position(picture, alice="a1", bob="d4", size=4, quiet_moves=limit - 2)
    assert f"Rounds in a row without a new symbol: {limit - 2} (the game ends at {limit})." in (
        GAME.render(state, None)
    )
    state = play_all(state, "opposition", "n")
    assert GAME.outcome(state) is None
    state = play_all(state, "synch", "s")  # bob to d2, alice to a1: both already marked
    assert state.quiet_moves == limit
    outcome = GAME.outcome(state)
    assert outcome is not None
    assert outcome.reason == f"8 symbols to 7 after {limit} rounds without a new symbol"
    assert f"{limit} rounds in a row brought no new symbol." in flat(GAME.render(state, None))
    assert outcome.winners == (0,)
    assert GAME.to_move(state) == frozenset()


def test_a_new_symbol_resets_the_quiet_count():
    state = position(alice="c3", bob="f6", quiet_moves=100)
    assert play_all(state, "synch", "n").quiet_moves == 0


# -- the direction-first order ------------------------------------------------


def test_direction_first_directioner_only_keeps_their_own_marker_on_the_board():
    state = position(alice="d1", bob="d8", order="direction-first")
    assert GAME.to_move(state) == {0}
    assert GAME.legal_moves(state, 0) == ["n", "ne", "e", "w", "nw"]
    assert "alice must send a direction: n, ne, e, w, nw." in GAME.render(state, None)
    assert refusal(state, 0, "s") == (
        "Going s from d1 takes your marker off the board: send one of n, ne, e, w, nw."
    )
    assert "directioner of round 1" in refusal(state, 0, "synch")
    assert refusal(state, 1, "synch").startswith("It is not your turn: alice must send")


def test_direction_first_decider_answers_keeping_their_own_marker_on_the_board():
    state = position(alice="d1", bob="d8", order="direction-first")
    state = GAME.play(state, 0, "n")
    assert GAME.to_move(state) == {1}
    assert GAME.legal_moves(state, 1) == ["opposition"]
    assert refusal(state, 1, "synch") == (
        "In synch you would go n from d8 off the board: send opposition."
    )
    assert "alice already went n: send opposition." in refusal(state, 1, "e")
    board = GAME.render(state, None)
    # the directioner has stepped already; the square is marked at the end of the move
    assert "2 . . . 1 . . . .  2" in board
    assert "1 = alice's marker on d2 (empty)." in board
    assert "alice went n to d2 (marked when the round ends)." in flat(board)
    assert "bob must send opposition." in board
    state = GAME.play(state, 1, "opposition")
    assert (label(state, 0), label(state, 1)) == ("d2", "d7")
    assert mark_at(state, "d2") == "x" and mark_at(state, "d7") == "o"
    assert GAME.to_move(state) == {1}  # bob directions on move 2


def test_direction_first_stuck_decider_is_skipped_and_draws_nothing():
    # bob sits on an empty a8: a step ne or sw from there leaves the board
    state = position(alice="d4", bob="a8", order="direction-first")
    state = GAME.play(state, 0, "ne")
    assert state.moves_done == 1
    assert state.pending is None
    assert (label(state, 0), label(state, 1)) == ("e5", "a8")
    assert mark_at(state, "e5") == "x"
    assert mark_at(state, "a8") == "."
    assert GAME.to_move(state) == {1}
    board = GAME.render(state, None)
    assert "bob (decider) could not step ne or sw from a8" in flat(board)
    assert "stayed put (the server skipped that half)" in flat(board)


def test_direction_first_both_moving_onto_one_empty_square_draw_nothing():
    state = position(alice="c3", bob="e3", order="direction-first")
    state = play_all(state, "e", "opposition")
    assert state.markers[0] == state.markers[1] == (3, 2)
    assert mark_at(state, "d3") == "."


# -- storage, render and help -------------------------------------------------


def test_encode_decode_round_trip():
    states = [
        GAME.new({}, PLAYERS),
        started(),
        GAME.play(started(), 1, "synch"),
        play_all(started({"order": "direction-first"}), "ne"),
        play_all(position(alice="d4", bob="a8", order="direction-first"), "ne"),
    ]
    for state in states:
        data = json.loads(json.dumps(GAME.encode(state)))
        assert GAME.decode(data) == state


def test_render_shows_legend_counts_and_last_move():
    state = play_all(started(), "synch", "ne")
    board = GAME.render(state, None)
    lines = board.splitlines()
    assert lines[0] == "  a b c d e f g h"
    assert lines[2] == "7 . . . . . . 2 .  7"
    assert lines[5] == "4 . . . 1 . . . .  4"
    assert lines[6] == "3 . . x . . . . .  3"
    assert "x = alice (X), o = bob (O), . = empty square." in board
    assert "1 = alice's marker on d4 (an x, just marked)." in board
    assert "2 = bob's marker on g7 (an o, just marked)." in board
    assert "Symbols: alice 2, bob 2; 60 squares empty." in board
    assert "Last round (1): alice (directioner) went ne from c3 to d4" in flat(board)
    assert "bob (decider) went in synch, ne from f6 to g7" in flat(board)
    assert GAME.render(state, 0) == GAME.render(state, 1) == board


def test_render_fits_72_columns_on_the_largest_board():
    state = play_all(
        GAME.new({"size": "26"}, ["a_very_long_userid", "another_long_userid"]),
        "place z26",
        "place a1",
        "opposition",
    )
    board = GAME.render(state, None)
    assert max(len(line) for line in board.splitlines()) <= 72
    assert board.splitlines()[1].endswith(". 1  26"), "a marker keeps a space before the rank number"
    assert board.splitlines()[26].startswith(" 1 2 . ")


def test_help_covers_rules_options_and_challenge():
    text = GAME.help()
    for needle in (
        "place c3",
        "synch",
        "opposition",
        "-size=N",
        "default 8",
        "-order=mode-first",
        "-order=direction-first",
        "synch challenge",
        "2 x size x size",
    ):
        assert needle in text
    assert max(len(line) for line in text.splitlines()) <= 72


# -- random games -------------------------------------------------------------


def board_matches_state(game: Game, state: object) -> None:
    """Every render fits 72 columns and shows every symbol and both markers
    exactly where the state has them."""
    assert isinstance(state, SynchState)
    for viewer in (None, 0, 1):
        board = game.render(state, viewer)
        assert max(len(line) for line in board.splitlines()) <= 72
    lines = board.splitlines()[1 : state.size + 1]
    margin = len(str(state.size)) + 1
    shown = {}
    for line in lines:
        rank = int(line.split()[0]) - 1
        for file in range(state.size):
            shown[file, rank] = line[margin + 2 * file : margin + 2 * file + 2]
    markers = list(state.markers)
    if state.order == "direction-first" and state.pending is not None:
        directioner = state.moves_done % 2  # has stepped already, the decider is choosing
        marker = markers[directioner]
        assert marker is not None
        markers[directioner] = SquareGrid(state.size, state.size).step(marker, state.pending)
    grid = SquareGrid(state.size, state.size)
    for cell, text in shown.items():
        mark = state.marks[cell[1] * state.size + cell[0]]
        here = frozenset(seat for seat in (0, 1) if markers[seat] == cell)
        glyph = {frozenset({0}): "1", frozenset({1}): "2", frozenset({0, 1}): "*"}.get(here)
        # a marker stands in place of the symbol, which the legend names;
        # nothing touches the next square
        assert text == f"{glyph or mark} "
        if glyph is not None:
            under = "empty" if mark == "." else f"an {mark}"
            assert f"{glyph} = " in board and f"on {grid.label(cell)} ({under}" in board


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), order=st.sampled_from(["mode-first", "direction-first"]))
def test_random_small_games(seed, order):
    check_random_game(GAME, {"size": "4", "order": order}, seed, check_views=board_matches_state)


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_random_default_games(seed):
    check_random_game(GAME, {}, seed, check_views=board_matches_state)


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_random_direction_first_games(seed):
    check_random_game(
        GAME, {"order": "direction-first", "size": "6"}, seed, check_views=board_matches_state
    )
