"""Plurality (the rules `plurality help` gives): hand-built positions for every rule and
option, and random games."""

from __future__ import annotations

import json
import random
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.plurality import Plurality
from games.plurality.board import Shape, layout_for
from games.plurality.open_drops import open_drops, scan
from games.plurality.state import PluralityState
from pbmserv.gamekit import HexHexGrid, IllegalMove, InvalidOption, Outcome, SquareGrid
from tests.game_invariants import check_random_game

GAME = Plurality()
PLAYERS = ["alice", "bob"]


def position(
    black: str = "",
    white: str = "",
    *,
    board: str = "square",
    size: int = 13,
    ties: str = "neutral",
    turn: int = 0,
    passes: int = 0,
    last: str = "",
) -> PluralityState:
    """A board with Black's (alice's) stones on `black` and White's (bob's)
    on `white`, space-separated points."""
    return GAME.decode(
        {
            "players": PLAYERS,
            "board": board,
            "size": size,
            "ties": ties,
            "black": black.split(),
            "white": white.split(),
            "turn": turn,
            "passes": passes,
            "last_move": last,
        }
    )


def play_all(state: PluralityState, *moves: str) -> PluralityState:
    for move in moves:
        (seat,) = GAME.to_move(state)
        state = GAME.play(state, seat, move)
    return state


def refusal(state: PluralityState, seat: int, text: str) -> str:
    with pytest.raises(IllegalMove) as caught:
        GAME.play(state, seat, text)
    return caught.value.message


def board_part(render: str) -> list[str]:
    return render.split("\n\n")[0].splitlines()


def tallies(render: str) -> str:
    return render.split("\n\n", 1)[1]


def square_glyph(state: PluralityState, label: str) -> str:
    """What the square board shows on one point (stone, mark and all)."""
    grid = SquareGrid(state.size, state.size, skip_i=True)
    file, rank = grid.parse(label)
    lines = board_part(GAME.render(state, None))
    line = lines[1 + state.size - 1 - rank]
    column = len(str(state.size)) + 1 + 3 * file
    return line[column : column + 2].strip()


def drops(state: PluralityState) -> set[frozenset[str]]:
    """The legal drops as sets of cells, the star dropped."""
    (seat,) = GAME.to_move(state)
    return {
        frozenset(move.replace("*", "").split(","))
        for move in GAME.legal_moves(state, seat)
        if move != "pass"
    }


# -- options ----------------------------------------------------------------------


def test_default_game_is_13x13_square_with_neutral_ties_and_black_first():
    state = GAME.new({}, PLAYERS)
    assert (state.board, state.size, state.ties) == ("square", 13, "neutral")
    assert GAME.to_move(state) == frozenset({0})
    lines = board_part(GAME.render(state, None))
    assert lines[0].split() == list("abcdefghjklmn")  # no i, as on Go boards
    assert lines[1].split()[0] == "13" and lines[-2].split()[0] == "1"
    assert "5.5 komi" in GAME.render(state, None)


def test_size_19():
    state = GAME.new({"size": "19"}, PLAYERS)
    lines = board_part(GAME.render(state, None))
    assert lines[0].split() == list("abcdefghjklmnopqrst")
    assert len(lines) == 19 + 2
    assert "6.5 komi" in GAME.render(state, None)
    assert GAME.play(state, 0, "t18,s19,*t19").last_move == "s19,*t19,t18"


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"size": "8"}, "13 or 19"),
        ({"size": "5"}, "13 or 19"),
        ({"size": "10"}, "5, 6, 7, 8, 9, 13 or 19"),
        ({"size": "big"}, "not a number"),
        ({"board": "hex", "size": "13"}, "5 to 9"),
        ({"board": "hex", "size": "19"}, "5 to 9"),
        ({"board": "triangle"}, "square|hex"),
        ({"ties": "coin"}, "neutral|parity"),
        ({"komi": "7"}, "-size, -board, -ties"),
    ],
)
def test_bad_options_are_refused(options, fragment):
    with pytest.raises(InvalidOption) as caught:
        GAME.new(options, PLAYERS)
    assert fragment in caught.value.message


def test_exactly_two_players():
    with pytest.raises(InvalidOption, match="two players"):
        GAME.new({}, ["alice", "bob", "carol"])


def test_hex_board_defaults_to_8_cells_a_side():
    state = GAME.new({"board": "hex"}, PLAYERS)
    assert (state.board, state.size) == ("hex", 8)
    lines = board_part(GAME.render(state, None))
    rows = [line.split()[0] for line in lines[1:-1]]
    assert rows == list("abcdefghijklmno")
    assert "0.5 komi" in GAME.render(state, None)


@pytest.mark.parametrize("size", [5, 6, 7, 8, 9])
def test_hex_sizes(size):
    state = GAME.new({"Board": "HEX", "SIZE": str(size)}, PLAYERS)
    assert (state.board, state.size) == ("hex", size)
    rendered = GAME.render(state, None)
    assert len(board_part(rendered)) == 2 * size - 1 + 2
    assert max(len(line) for line in rendered.splitlines()) <= 72


def test_option_spellings_are_case_insensitive():
    state = GAME.new({"TIES": "Parity", "Size": "19"}, PLAYERS)
    assert (state.ties, state.size) == ("parity", 19)


# -- drops ---------------------------------------------------------------------------


def test_black_drop_puts_two_black_stones_and_one_white():
    state = GAME.play(GAME.new({}, PLAYERS), 0, "d4,e4,*e5")
    assert square_glyph(state, "d4") == "X<"
    assert square_glyph(state, "e4") == "X<"
    assert square_glyph(state, "e5") == "O<"
    assert GAME.to_move(state) == frozenset({1})
    assert state.last_move == "*e5,d4,e4"  # reading order: the top row first


def test_white_drop_puts_two_white_stones_and_one_black():
    state = play_all(GAME.new({}, PLAYERS), "d4,e4,*e5", "*k10,k11,k12")
    assert [square_glyph(state, p) for p in ("k12", "k11", "k10")] == ["O<", "O<", "X<"]
    assert square_glyph(state, "d4") == "X"  # no longer the last move
    assert GAME.to_move(state) == frozenset({0})


@pytest.mark.parametrize(
    "text",
    [
        "d4,e4,*e5",
        "*e5,d4,e4",
        "D4, E4, *E5",
        "  e4  d4  *e5 ",
        "d4 e4 e5*",
        "d4,e4,e5 *",
        "d4 , e4 , * e5",
        "e5*,e4,d4",
    ],
)
def test_equivalent_spellings_of_one_drop(text):
    state = GAME.new({}, PLAYERS)
    assert str(GAME.read_move(state, 0, text)) == "*e5,d4,e4"
    assert GAME.play(state, 0, text) == GAME.play(state, 0, "*e5,d4,e4")


def test_the_star_stays_on_its_point():
    state = GAME.new({}, PLAYERS)
    assert str(GAME.read_move(state, 0, "*d4,e4,e5")) == "e5,*d4,e4"
    assert str(GAME.read_move(state, 0, "d4,*e4,e5")) == "e5,d4,*e4"
    assert str(GAME.read_move(state, 0, " Pass ")) == "pass"


@pytest.mark.parametrize(
    ("options", "text", "canonical"),
    [
        ({}, "D4, E4, *E5", "*e5,d4,e4"),
        ({}, "d4 *e4 e5", "e5,d4,*e4"),
        ({}, " Pass ", "pass"),
        ({"board": "hex", "size": "5"}, "d3,D4,e4*", "d3,d4,*e4"),
    ],
)
def test_a_move_value_prints_its_canonical_text_and_reads_it_back(options, text, canonical):
    state = GAME.new(options, PLAYERS)
    move = GAME.read_move(state, 0, text)
    assert str(move) == canonical
    assert move.secret is False
    assert GAME.read_move(state, 0, canonical) == move
    assert GAME.apply(state, 0, move) == GAME.play(state, 0, text)


def test_reading_a_bad_move_says_what_is_wrong_and_changes_nothing():
    state = play_all(GAME.new({}, PLAYERS), "d4,e4,*e5")
    before = GAME.encode(state)
    with pytest.raises(IllegalMove, match="d4 already holds a stone"):
        GAME.read_move(state, 1, "d4,d3,*d2")
    with pytest.raises(IllegalMove, match="a2, a1 and c1 do not form a tromino"):
        GAME.read_move(state, 1, "a1,a2,*c1")
    with pytest.raises(IllegalMove, match="It is not your turn: bob [(]White[)] is to move"):
        GAME.read_move(state, 0, "pass")
    assert GAME.encode(state) == before


def test_every_tromino_with_every_star_is_listed_on_the_empty_board():
    for size, straight, bent in ((13, 2 * 11 * 13, 4 * 12 * 12), (19, 2 * 17 * 19, 4 * 18 * 18)):
        state = GAME.new({"size": str(size)}, PLAYERS)
        moves = GAME.legal_moves(state, 0)
        assert len(moves) == len(set(moves)) == 3 * (straight + bent) + 1
        assert moves[-1] == "pass"
        assert {"*e5,d4,e4", "e5,*d4,e4", "e5,d4,*e4", "c3,*d3,e3", "*a3,a2,a1"} <= set(moves)
        assert GAME.legal_moves(state, 1) == []


def test_files_skip_i():
    state = GAME.new({}, PLAYERS)
    assert GAME.play(state, 0, "h4,j4,*k4").last_move == "h4,j4,*k4"  # h and j are adjacent
    assert "off the board" in refusal(state, 0, "h4,i4,*j4")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "exactly three points"),
        ("move", "exactly three points"),
        ("d4,e4", "exactly three points"),
        ("a1,a1,a1,a1,a1", "exactly three points"),
        ("d4,e4,e5", "None of the three points carries the *"),
        ("*d4,*e4,e5", "Only one of the three points may carry a *"),
        ("**d4,e4,e5", "Only one of the three points may carry a *"),
        ("*d4*,e4,e5", "Only one of the three points may carry a *"),
        ("d4,d4,*e4", "three different points"),
        ("d4,e5,*f6", "f6, e5 and d4 do not form a tromino"),
        ("d4,e4,*g4", "do not form a tromino: a drop is a straight or bent line"),
        ("z4,e4,*e5", "z4 is off the board"),
        ("d14,d13,*d12", "d14 is off the board"),
        ("d0,d1,*d2", "d0 is off the board"),
        ("4d,e4,*e5", "'4d' is not a square"),
    ],
)
def test_malformed_drops_are_refused(text, fragment):
    reason = refusal(GAME.new({}, PLAYERS), 0, text)
    assert fragment in reason
    if "*" in fragment:
        assert "White's stone" in reason and "d4,e4,*e5" in reason


def test_drop_on_a_stone_is_refused():
    state = position("d4", "g7", turn=1)
    assert "d4 already holds a stone: drop only on empty points" in refusal(state, 1, "c4,d4,*e4")
    assert "g7 already holds a stone" in refusal(state, 1, "g7,g8,*g9")
    assert not any("d4" in cells or "g7" in cells for cells in drops(state))


def test_not_your_turn():
    state = GAME.new({}, PLAYERS)
    assert refusal(state, 1, "d4,e4,*e5") == "It is not your turn: alice (Black) is to move."
    assert refusal(state, 1, "pass") == "It is not your turn: alice (Black) is to move."
    state = GAME.play(state, 0, "pass")
    assert "bob (White) is to move" in refusal(state, 0, "d4,e4,*e5")


# -- the 2x2 rule ------------------------------------------------------------------


def test_bent_drop_may_not_fill_its_own_2x2_square():
    state = position("e5")
    reason = refusal(state, 0, "d4,e4,*d5")
    assert "would fill the 2x2 square d5,e5,d4,e4" in reason
    assert "no four stones of any colours may form a 2x2 square" in reason
    assert frozenset({"d4", "e4", "d5"}) not in drops(state)


def test_straight_drop_may_not_fill_a_square_with_two_stones_already_there():
    state = position("d5", "e5")  # one of each colour: colours do not matter
    assert "2x2 square d5,e5,d4,e4" in refusal(state, 0, "d4,e4,*f4")
    assert frozenset({"d4", "e4", "f4"}) not in drops(state)


def test_one_stone_of_a_drop_may_not_complete_a_square():
    state = position("d5 e5", "e4")
    assert "2x2 square d5,e5,d4,e4" in refusal(state, 0, "b4,c4,*d4")
    legal = drops(state)
    assert frozenset({"b4", "c4", "d4"}) not in legal
    assert frozenset({"d3", "d2", "d1"}) in legal


def test_three_stones_of_a_square_are_fine():
    state = position("d5 e5")
    assert GAME.play(state, 0, "d4,c4,*b4").last_move == "*b4,c4,d4"
    after = GAME.play(state, 0, "d4,c4,*b4")
    # e4 can never be filled now
    assert not any("e4" in cells for cells in drops(after))
    assert "2x2 square d5,e5,d4,e4" in refusal(after, 1, "e4,f4,*g4")


# -- passing and the end ---------------------------------------------------------


def test_pass_in_any_spelling_and_a_drop_resets_the_count():
    state = GAME.play(GAME.new({}, PLAYERS), 0, " PASS ")
    assert state.last_move == "pass" and state.passes == 1
    assert GAME.outcome(state) is None
    rendered = GAME.render(state, None)
    assert "Last move: alice (Black) passed." in rendered
    assert "One more pass in a row ends the game." in rendered
    state = play_all(state, "d4,e4,*e5", "pass")  # bob drops, alice passes once more
    assert GAME.outcome(state) is None
    assert GAME.to_move(state) == frozenset({1})


def test_two_passes_in_a_row_end_the_game():
    state = play_all(GAME.new({}, PLAYERS), "d4,e4,*e5", "pass", "pass")
    assert GAME.to_move(state) == frozenset()
    assert GAME.legal_moves(state, 0) == [] and GAME.legal_moves(state, 1) == []
    outcome = GAME.outcome(state)
    assert outcome is not None
    for seat in (0, 1):
        assert "The game is over" in refusal(state, seat, "f6,f7,*f8")
        assert "The game is over" in refusal(state, seat, "pass")


def test_pass_stays_legal_while_drops_remain_and_is_all_that_is_left_at_the_end():
    rng = random.Random(7)
    state = GAME.new({"board": "hex", "size": "5"}, PLAYERS)
    while True:
        (seat,) = GAME.to_move(state)
        moves = GAME.legal_moves(state, seat)
        assert moves[-1] == "pass"
        if moves == ["pass"]:
            break
        state = GAME.play(state, seat, rng.choice(moves[:-1]))
    # no drop for the other player either: the shapes left open do not depend on colour
    state = GAME.play(state, seat, "pass")
    assert GAME.legal_moves(state, 1 - seat) == ["pass"]
    assert GAME.outcome(GAME.play(state, 1 - seat, "pass")) is not None


# -- territory -------------------------------------------------------------------


def test_empty_board_is_one_neutral_territory():
    state = GAME.new({}, PLAYERS)
    assert square_glyph(state, "a1") == "." and square_glyph(state, "g7") == "."
    rendered = tallies(GAME.render(state, None))
    assert "alice (Black)  territory 0\n" in rendered
    assert "bob (White)    territory 0 + 5.5 komi = 5.5" in rendered


def test_majority_of_adjacent_stones_owns_a_territory():
    # a1 is closed off by two Black stones and one White: Black's
    state = position("a2 b1", "c1 b3 a3")
    assert square_glyph(state, "a1") == "+"
    # the rest of the board touches a2, b1 (Black) and c1, b3, a3 (White): White's
    assert square_glyph(state, "b2") == "-" and square_glyph(state, "n13") == "-"
    rendered = tallies(GAME.render(state, None))
    assert "territory 1\n" in rendered
    assert "territory 163 + 5.5 komi = 168.5" in rendered


def test_each_adjacent_stone_counts_once():
    # a1, a2, b1 touch b2 (Black) twice, a3 and c1 (White) once each:
    # two White stones against one Black stone, so White owns them
    state = position("b2", "a3 c1")
    assert [square_glyph(state, p) for p in ("a1", "a2", "b1")] == ["-", "-", "-"]
    assert "territory 166 + 5.5 komi = 171.5" in GAME.render(state, None)


def test_tied_territory_is_neutral_by_default():
    state = position("a3 c2", "b3 c1")  # a1 b1 a2 b2 touch two stones of each colour
    assert [square_glyph(state, p) for p in ("a1", "b2", "g7")] == [".", ".", "."]
    rendered = tallies(GAME.render(state, None))
    assert "territory 0\n" in rendered and "territory 0 + 5.5" in rendered


def test_parity_gives_even_ties_to_black_and_odd_ties_to_white():
    state = position("a3 c2", "b3 c1", ties="parity")
    # the corner (4 points) is even: Black's; the rest (169 - 4 - 4 = 161) is odd: White's
    assert [square_glyph(state, p) for p in ("a1", "b2")] == ["+", "+"]
    assert square_glyph(state, "g7") == "-"
    rendered = tallies(GAME.render(state, None))
    assert "territory 4\n" in rendered and "territory 161 + 5.5 komi = 166.5" in rendered


def test_parity_ignores_territories_with_a_majority():
    state = position("a2 b1", "c1 b3 a3", ties="parity")
    assert square_glyph(state, "a1") == "+"  # size 1 would go to White on a tie


def test_parity_on_the_empty_board_gives_the_odd_board_to_white():
    for options, points in (({}, 169), ({"size": "19"}, 361), ({"board": "hex"}, 169)):
        state = GAME.new({**options, "ties": "parity"}, PLAYERS)
        assert f"territory {points} + " in GAME.render(state, None)


# -- scoring ---------------------------------------------------------------------


def full_rank(rank: int) -> str:
    return " ".join(f"{file}{rank}" for file in "abcdefghjklmn")


def final(state: PluralityState) -> Outcome:
    outcome = GAME.outcome(state)
    assert outcome is not None
    return outcome


def test_white_wins_on_territory_plus_komi():
    outcome = final(play_all(position(white=full_rank(3)), "pass", "pass"))
    assert outcome.winners == (1,)
    assert outcome.scores == (0.0, 156 + 5.5)
    assert outcome.reason == "Black 0 to White 161.5 (komi 5.5 included)"


def test_black_wins_on_territory():
    outcome = final(play_all(position(black=full_rank(3)), "pass", "pass"))
    assert outcome.winners == (0,)
    assert outcome.scores == (156.0, 5.5)


def test_komi_decides_close_games():
    # the corner a1-b3 (6 points) touches a4, b4, c1 (Black) and c2, c3 (White);
    # the rest touches the same five and g7 (White): a 3-3 tie, neutral
    outcome = final(play_all(position("a4 b4 c1", "c2 c3 g7"), "pass", "pass"))
    assert outcome.scores == (6.0, 5.5) and outcome.winners == (0,)
    # a 5-point corner is not enough against White's 5.5
    outcome = final(play_all(position("a4 b3 c1", "c2 g7 k10"), "pass", "pass"))
    assert outcome.scores == (5.0, 5.5) and outcome.winners == (1,)


@pytest.mark.parametrize(
    ("options", "komi"),
    [
        ({}, 5.5),
        ({"size": "19"}, 6.5),
        ({"board": "hex"}, 0.5),
        ({"board": "hex", "size": "5"}, 0.5),
    ],
)
def test_komi_per_board(options, komi):
    outcome = final(play_all(GAME.new(options, PLAYERS), "pass", "pass"))
    assert outcome.scores == (0.0, komi)
    assert outcome.winners == (1,)  # half points: never a draw


# -- the board mail -----------------------------------------------------------------


def test_render_legend_tallies_and_last_move():
    state = GAME.play(position(black=full_rank(3)), 0, "d5,e5,*e6")
    rendered = GAME.render(state, None)
    assert "X  alice (Black)  territory " in rendered
    assert "O  bob (White)    territory " in rendered
    assert "+ -  territory of Black / White if the game ended now, . neutral" in rendered
    assert "<  marks the last drop: *e6,d5,e5 by alice (Black)" in rendered
    assert square_glyph(state, "a1") == "+"
    assert square_glyph(state, "e6") == "O<" and square_glyph(state, "a3") == "X"
    assert rendered == GAME.render(state, 0) == GAME.render(state, 1)  # nothing is secret


def test_render_says_who_moves_and_suggests_a_legal_drop():
    state = GAME.play(GAME.new({"board": "hex", "size": "5"}, PLAYERS), 0, "*g3,h3,i3")
    rendered = GAME.render(state, None)
    assert rendered.splitlines()[-1] == "Next: bob (White) sends a drop like *a1,a2,a3 (* = X) or pass."
    assert "*a1,a2,a3" == GAME.example_move(state, 1)
    # a board where only passing is left says so: every cell but a1 is taken
    grid = HexHexGrid(5)
    taken = " ".join(grid.label(cell) for cell in grid.cells if grid.label(cell) != "a1")
    blocked = position(board="hex", size=5, black=taken, turn=1)
    assert GAME.legal_moves(blocked, 1) == ["pass"]
    assert GAME.render(blocked, None).splitlines()[-1] == (
        "Next: bob (White) sends pass; no drop is possible any more."
    )


def test_render_of_a_finished_game_names_no_next_move_and_final_territory():
    state = play_all(position(black=full_rank(3)), "pass", "pass")
    rendered = GAME.render(state, None)
    assert "Next:" not in rendered and "if the game ended now" not in rendered
    assert "+ -  territory of Black / White at the end, . neutral" in rendered


def test_render_fits_72_columns():
    for options in ({}, {"size": "19"}, {"board": "hex", "size": "9"}):
        state = GAME.new(options, PLAYERS)
        state = GAME.play(state, 0, GAME.legal_moves(state, 0)[-2])
        assert max(len(line) for line in GAME.render(state, None).splitlines()) <= 72


# -- storing -------------------------------------------------------------------------


def test_encode_decode_round_trip():
    state = play_all(
        GAME.new({"size": "19", "ties": "parity"}, PLAYERS), "d4,e4,*e5", "k10,k11,*l11", "pass"
    )
    data = json.loads(json.dumps(GAME.encode(state)))
    assert data["black"] == ["l11", "d4", "e4"]  # reading order
    assert data["white"] == ["k11", "k10", "e5"]
    again = GAME.decode(data)
    assert again == state
    assert GAME.legal_moves(again, 1) == GAME.legal_moves(state, 1)
    assert GAME.render(again, None) == GAME.render(state, None)


# -- the hex board ---------------------------------------------------------------


def test_hex_drops_may_be_lines_bends_or_triangles():
    state = GAME.new({"board": "hex", "size": "5"}, PLAYERS)
    assert GAME.play(state, 0, "e1,e2,*e3").last_move == "e1,e2,*e3"  # line
    assert GAME.play(state, 0, "e1,e2,*d2").last_move == "*d2,e1,e2"  # bend
    assert GAME.play(state, 0, "e1,e2,*d1").last_move == "*d1,e1,e2"  # triangle
    reason = refusal(state, 0, "e1,e3,*e5")
    assert "e1, e3 and e5 do not form a tromino: a drop is three connected cells" in reason
    assert "f9 is off the board: row f has cells 1-8" in refusal(state, 0, "f9,f8,*f7")
    assert "d3,d4,*e4" in refusal(state, 0, "d3,d4,e4")


def test_hex_drop_may_not_form_a_rhombus():
    state = position("c3 d3", "d4", board="hex", size=5, turn=1, last="*d4,c3,d3")
    reason = refusal(state, 1, "c4,b3,*b4")
    assert "would fill the rhombus b3,b4,c3,c4" in reason
    assert "no four stones of any colours may form a rhombus" in reason
    assert frozenset({"b3", "b4", "c4"}) not in drops(state)
    rendered = GAME.render(state, None)
    assert "X<  O<" in rendered and "c3,d3" in rendered


def test_hex_territory_uses_hex_adjacency():
    # a1 touches only a2, b1 (Black) and b2 (White) on the hex board
    state = position("a2 b1", "b2", board="hex", size=5)
    lines = board_part(GAME.render(state, None))
    assert lines[1].split()[:3] == ["a", "+", "X"]
    assert "territory 58\n" in GAME.render(state, None)


# -- help ----------------------------------------------------------------------------


def test_help_covers_rules_moves_and_options():
    text = GAME.help()
    for fragment in (
        "d4,e4,*e5",
        "pass",
        "2x2 square",
        "rhombus",
        "-size=N",
        "13 or 19",
        "5 to 9 (default 8)",
        "-board=B",
        "-ties=T",
        "neutral (default)",
        "parity",
        "5.5",
        "6.5",
        "plurality challenge -size=19 alice bob",
    ):
        assert fragment in text
    assert max(len(line) for line in text.splitlines()) <= 72


# -- random games ------------------------------------------------------------------


def check_views(game, state) -> None:
    """Every seat sees the same board, within 72 columns, with one X or O
    per stone."""
    rendered = game.render(state, None)
    assert rendered == game.render(state, 0) == game.render(state, 1)
    assert max(len(line) for line in rendered.splitlines()) <= 72
    board = "\n".join(board_part(rendered))
    assert board.count("X") == state.black.bit_count()
    assert board.count("O") == state.white.bit_count()


def last_drop_again(state, seat):
    """The last drop's points are taken now: repeating it must be refused."""
    return [] if state.last_move in ("", "pass") else [state.last_move]


OPTION_SETS = [
    ({}, 15),
    ({"size": "19"}, 4),
    ({"ties": "parity"}, 8),
    ({"board": "hex"}, 8),
    ({"board": "hex", "size": "5", "ties": "parity"}, 15),
    ({"board": "hex", "size": "7"}, 6),
    ({"board": "hex", "size": "9"}, 3),
]


@pytest.mark.parametrize(("options", "examples"), OPTION_SETS)
def test_random_games(options, examples):
    @settings(max_examples=examples, deadline=None)
    @given(seed=st.integers(0, 2**32 - 1))
    def run(seed):
        state, outcome = check_random_game(
            GAME, options, seed, extra_refused=last_drop_again, check_views=check_views
        )
        assert isinstance(state, PluralityState) and outcome.scores is not None
        # no draws; the winner has the higher score; territory fits in the empty points
        (winner,) = outcome.winners
        assert outcome.scores[winner] > outcome.scores[1 - winner]
        points = state.size**2 if state.board == "square" else 3 * state.size * (state.size - 1) + 1
        komi = {"square": {13: 5.5, 19: 6.5}, "hex": {state.size: 0.5}}[state.board][state.size]
        empty = points - state.black.bit_count() - state.white.bit_count()
        assert sum(outcome.scores) - komi <= empty

    run()


def oracle_drops(state: PluralityState) -> set[frozenset[str]]:
    """The legal drops worked out from the rules alone."""
    grid: SquareGrid | HexHexGrid
    if state.board == "square":
        grid = SquareGrid(state.size, state.size, skip_i=True)
        blocks = [set(block) for block in grid.blocks2x2()]
    else:
        grid = HexHexGrid(state.size)
        blocks = [set(block) for block in grid.rhombi()]
    blocks_at: dict = {}
    for block in blocks:
        for cell in block:
            blocks_at.setdefault(cell, []).append(block)
    data = GAME.encode(state)
    stones = {grid.parse(label) for label in data["black"] + data["white"]}
    found = set()
    for middle in grid.cells:
        for ends in combinations(grid.neighbours(middle), 2):
            cells = {middle, *ends}
            if cells & stones:
                continue
            after = stones | cells
            if any(block <= after for cell in cells for block in blocks_at[cell]):
                continue
            found.add(frozenset(grid.label(cell) for cell in cells))
    return found


@pytest.mark.parametrize("options", [{}, {"board": "hex", "size": "5"}, {"board": "hex"}])
@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_listed_drops_are_exactly_the_rules_drops(options, seed):
    rng = random.Random(seed)
    state = GAME.new(options, PLAYERS)
    while GAME.outcome(state) is None:
        assert drops(state) == oracle_drops(state)
        (seat,) = GAME.to_move(state)
        state = GAME.play(state, seat, rng.choice(GAME.legal_moves(state, seat)))


@pytest.mark.parametrize("options", [{}, {"board": "hex", "size": "6"}])
def test_drops_listed_from_the_position_before_are_those_a_fresh_search_finds(options):
    rng = random.Random(7)
    state = GAME.new(options, PLAYERS)
    layout = layout_for(state.board, state.size)
    while GAME.outcome(state) is None:
        (seat,) = GAME.to_move(state)
        listed = GAME.legal_moves(state, seat)
        assert list(open_drops(layout, state)) == list(scan(layout, state.occupied))
        state = GAME.play(state, seat, rng.choice(listed))


def test_decode_leaves_the_open_drops_alone():
    """A real move never lists moves, so reading a stored board does no search."""
    state = play_all(GAME.new({"size": "19"}, PLAYERS), "d4,e4,*e5", "k10,k11,*k12")
    calls: list[Shape] = []
    is_open = Shape.is_open

    def counted_is_open(shape: Shape, occupied: int) -> bool:
        calls.append(shape)
        return is_open(shape, occupied)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Shape, "is_open", counted_is_open)
        decoded = GAME.decode(GAME.encode(state))
        GAME.apply(decoded, 0, GAME.read_move(decoded, 0, "a1,a2,*b1"))
    assert decoded == state
    assert calls == []
