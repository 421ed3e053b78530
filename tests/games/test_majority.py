"""Majority and Psychomachia (the rules `majority help` gives): hand-built positions for
every rule and option, the hidden-stone timing rules, leak checks, random games."""

from __future__ import annotations

import json
import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.majority import Majority, MajorityState, Psychomachia
from games.majority.moves import Hide, Place, Reveal
from games.majority.tricks import Completion, Trick, judge_trick, start_of, stone_of
from pbmserv.gamekit import IllegalMove, InvalidOption, Outcome
from tests.game_invariants import GARBAGE_MOVES, check_random_game

GAME = Majority()
PSYCHE = Psychomachia()
PLAYERS = ["alice", "bob"]
FILES = "abcdefghijklmn"
WHITE, BLACK = 0, 1


def plain(size: int = 6, stones: int | None = None) -> MajorityState:
    options = {"size": str(size)}
    if stones is not None:
        options["stones"] = str(stones)
    return GAME.new(options, PLAYERS)


def hidden(white: str, black: str, size: int = 6, stones: int | None = None) -> MajorityState:
    """A Psychomachia game after both hides (Black hides first, to show either order works)."""
    options = {"size": str(size)}
    if stones is not None:
        options["stones"] = str(stones)
    state = PSYCHE.new(options, PLAYERS)
    state = PSYCHE.play(state, BLACK, f"hide {black}")
    return PSYCHE.play(state, WHITE, f"hide {white}")


def run(state: MajorityState, *moves: str) -> MajorityState:
    for move in moves:
        (seat,) = GAME.to_move(state)
        state = GAME.play(state, seat, move)
    return state


def refusal(state: MajorityState, seat: int, text: str) -> str:
    with pytest.raises(IllegalMove) as caught:
        GAME.play(state, seat, text)
    return caught.value.message


def final(state: MajorityState) -> Outcome:
    outcome = GAME.outcome(state)
    assert outcome is not None
    return outcome


def board_cells(text: str, size: int) -> dict[str, str]:
    """Square label -> what the render prints on it."""
    margin = len(str(size))
    cells = {}
    for line in text.splitlines()[1 : size + 1]:
        rank = int(line[:margin])
        body = line[margin + 1 :]
        for file in range(size):
            cells[f"{FILES[file]}{rank}"] = body[2 * file : 2 * file + 2].strip()
    return cells


def row_marks(text: str, size: int) -> dict[int, str]:
    lines = text.splitlines()[1 : size + 1]
    return {int(line.split()[0]): line.split()[-1] for line in lines}


def column_marks(text: str, size: int) -> dict[str, str]:
    return dict(zip(FILES, text.splitlines()[size + 2].split()))


def trick(state: MajorityState, viewer: int | None, line: str) -> str:
    """The mark a viewer sees for `row 3` or `column c`."""
    text = GAME.render(state, viewer)
    kind, name = line.split()
    if kind == "row":
        return row_marks(text, state.size)[int(name)]
    return column_marks(text, state.size)[name]


def flat(text: str) -> str:
    """The render with its wrapped notes joined up again."""
    return " ".join(text.split())


def notes(state: MajorityState, viewer: int | None) -> str:
    return flat(GAME.render(state, viewer))


def tally(text: str, label: str) -> tuple[str, str]:
    (line,) = [line for line in text.splitlines() if line.startswith(label)]
    white, black = line[len(label) :].split()
    return white, black


# -- options --------------------------------------------------------------------------
def test_class_attributes():
    assert (GAME.name, GAME.title, GAME.side_names) == ("majority", "Majority", ("White", "Black"))
    assert (PSYCHE.name, PSYCHE.title) == ("psychomachia", "Psychomachia")
    assert PSYCHE.side_names == ("White", "Black")
    assert (GAME.min_players, GAME.max_players) == (2, 2)
    assert {option.name for option in GAME.options} == {"size", "stones", "hidden"}
    assert PSYCHE.fixed_options == {"hidden": None}


def test_defaults_are_a_10x10_board_with_40_stones_and_nothing_hidden():
    state = GAME.new({}, PLAYERS)
    assert (state.size, state.stones, state.hidden_variant) == (10, 40, False)
    assert state.players == ("alice", "bob")
    assert GAME.to_move(state) == frozenset({WHITE})


@pytest.mark.parametrize(
    ("size", "hide", "stones"),
    [(6, False, 14), (8, False, 25), (10, False, 40), (12, False, 40), (14, False, 40),
     (6, True, 14), (8, True, 25)],
)
def test_default_stones_where_40_do_not_fit_are_four_fifths_of_the_squares(size, hide, stones):
    options = {"size": str(size)} | ({"hidden": None} if hide else {})
    assert GAME.new(options, PLAYERS).stones == stones


@pytest.mark.parametrize("size", ["4", "5", "7", "16", "ten"])
def test_size_must_be_even_from_6_to_14(size):
    with pytest.raises(InvalidOption) as caught:
        GAME.new({"size": size}, PLAYERS)
    assert "-size" in caught.value.message


@pytest.mark.parametrize("size", ["6", "8", "10", "12", "14"])
def test_every_allowed_size_makes_a_square_board(size):
    state = GAME.new({"size": size}, PLAYERS)
    assert len(state.board) == int(size) ** 2
    assert len(GAME.legal_moves(state, WHITE)) == int(size) ** 2 // 2


def test_stones_range_and_cross_check_with_the_board():
    assert plain(6, 18).stones == 18
    assert plain(14, 98).stones == 98
    assert plain(6, 1).stones == 1
    for bad in ("0", "99", "many"):
        with pytest.raises(InvalidOption):
            GAME.new({"stones": bad}, PLAYERS)
    with pytest.raises(InvalidOption) as caught:
        plain(6, 19)
    assert "at most 18" in caught.value.message and "6x6" in caught.value.message


def test_the_hidden_stone_needs_a_spare_square():
    assert GAME.new({"size": "6", "stones": "17", "hidden": None}, PLAYERS).stones == 17
    with pytest.raises(InvalidOption) as caught:
        GAME.new({"size": "6", "stones": "18", "hidden": None}, PLAYERS)
    assert "at most 17" in caught.value.message and "hidden" in caught.value.message
    with pytest.raises(InvalidOption):
        PSYCHE.new({"size": "6", "stones": "18"}, PLAYERS)


def test_unknown_option_and_player_count_are_refused():
    with pytest.raises(InvalidOption) as caught:
        GAME.new({"colour": "red"}, PLAYERS)
    assert "-size" in caught.value.message
    with pytest.raises(InvalidOption):
        GAME.new({}, ["alice"])


def test_psychomachia_is_majority_with_hidden_always_on():
    assert PSYCHE.new({}, PLAYERS).hidden_variant
    assert PSYCHE.new({"hidden": "no"}, PLAYERS).hidden_variant
    assert GAME.new({"HIDDEN": None}, PLAYERS).hidden_variant
    assert not GAME.new({"hidden": "off"}, PLAYERS).hidden_variant


# -- colours, turns and move syntax ----------------------------------------------------------
def test_white_plays_the_dark_squares_and_moves_first():
    state = plain(6)
    white = GAME.legal_moves(state, WHITE)
    assert white[:3] == ["b6", "d6", "f6"] and "a1" in white and "b1" not in white
    assert len(white) == 18
    assert GAME.legal_moves(state, BLACK) == []
    state = run(state, "a1")
    black = GAME.legal_moves(state, BLACK)
    assert "b1" in black and "a1" not in black and "a2" in black
    assert GAME.to_move(state) == frozenset({BLACK})


def test_a_square_of_the_wrong_colour_is_refused_with_the_rule():
    state = plain(6)
    assert refusal(state, WHITE, "b1") == "b1 is a light square: White plays on dark squares."
    state = run(state, "a1")
    assert refusal(state, BLACK, "c1") == "c1 is a dark square: Black plays on light squares."


def test_taken_squares_off_board_and_garbage_are_refused():
    state = run(plain(6), "a1", "b1")
    assert "a1 already holds your stone" in refusal(state, WHITE, "a1")
    assert "off the board" in refusal(state, WHITE, "g1")
    assert "off the board" in refusal(state, WHITE, "a7")
    assert "not a square" in refusal(state, WHITE, "zz99")
    assert refusal(state, WHITE, "   ") == "Write the square for your stone, like e5."
    assert "no passing" in refusal(state, WHITE, "pass")
    assert "one stone per turn" in refusal(state, WHITE, "c1,e1")
    for text in GARBAGE_MOVES:
        refusal(state, WHITE, text)


def test_only_the_player_to_move_may_move():
    state = run(plain(6), "a1")
    assert refusal(state, WHITE, "c1") == "It is not your turn: bob (Black) is to move."


def test_hide_and_reveal_do_not_exist_without_the_hidden_option():
    state = plain(6)
    assert "not started with -hidden" in refusal(state, WHITE, "hide a1")
    assert "not started with -hidden" in refusal(state, WHITE, "reveal")
    assert "not started with -hidden" in refusal(state, WHITE, "reveal,a1")
    assert "reveal" not in GAME.legal_moves(state, WHITE)


def test_moves_are_read_case_and_space_insensitively():
    state = plain(6)
    assert str(GAME.read_move(state, WHITE, "  C 1 ")) == "c1"
    assert GAME.play(state, WHITE, " C1") == GAME.play(state, WHITE, "c 1")
    assert not GAME.read_move(state, WHITE, "c1").secret


# -- tricks and the end -------------------------------------------------------------------------
def test_completing_a_line_wins_its_trick_at_once():
    state = run(plain(6), "a1", "b1", "c1", "d1")
    assert trick(state, None, "row 1") == "."
    state = run(state, "e1")
    for viewer in (None, WHITE, BLACK):
        assert trick(state, viewer, "row 1") == "W"
    assert tally(GAME.render(state, None), "Tricks won") == ("1", "0")
    # 1 point plus the two black stones on the row, plus White's half point
    assert tally(GAME.render(state, None), "Points now") == ("3.5", "0")


def test_the_first_completion_keeps_the_trick_when_the_other_side_completes_later():
    state = run(plain(6), "a1", "b1", "c1", "d1", "e1", "f1")
    assert trick(state, None, "row 1") == "W"


def test_black_completes_a_column_first():
    # column b: light squares b1, b3, b5
    state = run(plain(6), "b2", "b1", "b4", "b3", "a1", "b5")
    assert trick(state, None, "column b") == "B"
    assert tally(GAME.render(state, None), "Points now") == ("0.5", "3")


def test_game_ends_when_both_have_placed_all_their_stones():
    state = run(plain(6, 2), "a1", "b1", "c1")
    assert GAME.outcome(state) is None
    state = run(state, "d3")
    assert GAME.to_move(state) == frozenset()
    assert GAME.legal_moves(state, WHITE) == GAME.legal_moves(state, BLACK) == []
    assert "game is over" in refusal(state, WHITE, "e1")
    assert GAME.outcome(state) is not None


def test_open_lines_go_to_the_majority_and_equal_counts_are_drawn():
    # W a1 c1, B b1 b3: row 1 is 2-1 for White, row 3 and column b Black's,
    # columns a and c White's; nothing else holds a stone.
    state = run(plain(6, 2), "a1", "b1", "c1", "b3")
    outcome = final(state)
    assert outcome.scores == (2 + 1 + 1 + 0.5, 1 + 1)
    assert outcome.winners == (WHITE,)
    assert all(isinstance(score, float) for score in outcome.scores or ())
    # W a1 c1, B b1 d1: row 1 is 2-2 and unfinished, so nobody gets it
    state = run(plain(6, 2), "a1", "b1", "c1", "d1")
    outcome = final(state)
    assert outcome.scores == (1 + 1 + 0.5, 1 + 1)
    assert outcome.winners == (WHITE,)
    assert "2.5 points to 2" in outcome.reason


def test_black_wins_with_more_points_and_the_half_point_breaks_no_tie_for_black():
    # Black completes row 1 (three white stones on it); White's stones lie apart
    state = run(plain(6, 3), "a1", "b1", "c1", "d1", "e1", "f1")
    assert final(state).scores == (1 + 3 + 1 + 1 + 1 + 0.5, 1 + 1 + 1)
    state = run(plain(6, 3), "a1", "b1", "c3", "d1", "e5", "f1")
    outcome = final(state)
    # row 1 Black's: 1 + 1 white stone; rows 3, 5 and columns a, c, e White's
    assert outcome.scores == (5 + 0.5, 2 + 1 + 1 + 1)
    assert outcome.winners == (WHITE,)
    state = run(plain(6, 3), "a1", "b1", "a3", "d1", "a5", "f1")
    outcome = final(state)
    # column a (White's completion: a1 a3 a5) 1, rows 3 and 5: 2 -> 3.5;
    # row 1 Black's completion: 1 + 1, columns b d f: 3 -> 5
    assert outcome.scores == (3.5, 5.0)
    assert outcome.winners == (BLACK,)
    assert outcome.reason.startswith("Black won 5 points to 3.5")


def test_render_shows_legend_tricks_tallies_and_last_move():
    state = run(plain(6), "a1", "b1", "c1", "b3", "e1")
    text = GAME.render(state, None)
    assert "W = alice (White)" in text and "B = bob (Black)" in text
    cells = board_cells(text, 6)
    assert (cells["a1"], cells["b1"], cells["e1"], cells["d1"], cells["c2"]) == ("W", "B", "W<", ".", ".")
    assert cells["b2"] == ":"
    assert row_marks(text, 6) == {6: ".", 5: ".", 4: ".", 3: ".", 2: ".", 1: "W"}
    assert column_marks(text, 6) == dict.fromkeys("abcdef", ".")
    assert "Last move: alice (White) played e1." in text
    assert tally(text, "Stones left") == ("11", "12")
    # row 1 (1 + b1) and columns a c e; column b and row 3 by majority
    assert tally(text, "If it ended now") == ("5.5", "2")
    assert max(len(line) for line in text.splitlines()) <= 72


def test_render_of_the_largest_board_fits_a_mail_line_and_lines_up_the_marks():
    state = run(GAME.new({"size": "14"}, PLAYERS), "a1", "b1", "c1", "d1", "e1", "f1", "g1")
    text = GAME.render(state, None)
    assert max(len(line) for line in text.splitlines()) <= 72
    mark_columns = {line.rindex(line.split()[-1]) for line in text.splitlines()[1:15]}
    assert len(mark_columns) == 1
    assert board_cells(text, 14)["g1"] == "W<"


def test_final_render_shows_every_award_and_the_final_points():
    state = run(plain(6, 2), "a1", "b1", "c1", "b3")
    text = GAME.render(state, None)
    assert tally(text, "Final points") == ("4.5", "2")
    assert tally(text, "Tricks won") == ("3", "2")
    assert row_marks(text, 6) == {6: ".", 5: ".", 4: ".", 3: "B", 2: ".", 1: "W"}
    assert column_marks(text, 6) == {"a": "W", "b": "B", "c": "W", "d": ".", "e": ".", "f": "."}


def test_encode_decode_round_trips():
    state = run(hidden("a1", "a6", stones=4), "c1", "reveal", "b1")
    data = json.loads(json.dumps(GAME.encode(state)))
    assert GAME.decode(data) == state


def test_help_explains_rules_moves_and_options():
    text = GAME.help()
    for needle in ("-size=N", "-stones=N", "-hidden", "default 10", "default 40", "hide e5",
                   "reveal,e5", "majority challenge", "psychomachia challenge", "half a point"):
        assert needle in text
    assert PSYCHE.help() == text


# -- the hidden stone: set-up ---------------------------------------------------------------------
def test_setup_lets_both_hide_in_either_order_before_white_moves():
    state = PSYCHE.new({"size": "6"}, PLAYERS)
    assert PSYCHE.to_move(state) == frozenset({WHITE, BLACK})
    assert PSYCHE.legal_moves(state, BLACK)[:2] == ["hide a6", "hide c6"]
    assert "First hide your stone" in refusal(state, WHITE, "a1")
    assert "First hide your stone" in refusal(state, WHITE, "reveal")
    white_first = PSYCHE.play(state, WHITE, "hide a1")
    assert PSYCHE.to_move(white_first) == frozenset({BLACK})
    assert "waiting for bob to hide" in refusal(white_first, WHITE, "hide c1")
    done = PSYCHE.play(white_first, BLACK, "hide b1")
    assert PSYCHE.to_move(done) == frozenset({WHITE})
    black_first = PSYCHE.play(PSYCHE.play(state, BLACK, "hide b1"), WHITE, "hide a1")
    assert black_first.hidden == done.hidden
    assert "only before the first move" in refusal(done, WHITE, "hide c1")


def test_a_stone_is_hidden_only_on_a_square_of_your_colour():
    state = PSYCHE.new({"size": "6"}, PLAYERS)
    assert refusal(state, WHITE, "hide b1") == "b1 is a light square: White hides on dark squares."
    assert refusal(state, BLACK, "hide a1") == "a1 is a dark square: Black hides on light squares."
    assert "not a square" in refusal(state, WHITE, "hide here")


def test_hiding_is_a_secret_move():
    state = PSYCHE.new({"size": "6"}, PLAYERS)
    assert PSYCHE.read_move(state, WHITE, " HIDE  A1").secret
    assert str(PSYCHE.read_move(state, WHITE, " HIDE  A 1")) == "hide a1"
    assert not PSYCHE.read_move(hidden("a1", "d5"), WHITE, "reveal").secret


def test_the_hidden_stone_is_shown_to_its_owner_only():
    state = hidden("a1", "d5")
    mine, theirs, public = (PSYCHE.render(state, v) for v in (WHITE, BLACK, None))
    assert board_cells(mine, 6)["a1"] == "w"
    assert board_cells(theirs, 6)["a1"] == board_cells(public, 6)["a1"] == ":"
    assert board_cells(theirs, 6)["d5"] == "b"
    assert board_cells(mine, 6)["d5"] == board_cells(public, 6)["d5"] == "."
    assert "on a1" in mine and "a1" not in theirs and "a1" not in public
    assert "bob's hidden stone is not revealed yet." in mine


def test_nobody_plays_on_a_hidden_stone_and_the_refusal_tells_the_opponent_nothing():
    state = hidden("a1", "d5")
    assert "a1 holds your hidden stone" in refusal(state, WHITE, "a1")
    assert "a1" not in PSYCHE.legal_moves(state, WHITE)
    state = run(state, "c1")
    assert refusal(state, BLACK, "a1") == refusal(state, BLACK, "c3").replace("c3", "a1")
    assert refusal(state, BLACK, "a1") == "a1 is a dark square: Black plays on light squares."


def test_legal_moves_list_reveal_alone_but_not_the_reveal_combinations():
    state = hidden("a1", "d5")
    moves = PSYCHE.legal_moves(state, WHITE)
    assert moves[-1] == "reveal" and moves.count("reveal") == 1
    assert not any(move.startswith("reveal,") for move in moves)
    assert len(moves) == 17 + 1
    state = PSYCHE.play(state, WHITE, "reveal")
    assert "reveal" not in PSYCHE.legal_moves(state, WHITE)


# -- revealing -----------------------------------------------------------------------------------
def test_reveal_alone_keeps_the_turn():
    state = PSYCHE.play(hidden("a1", "d5"), WHITE, "reveal")
    assert PSYCHE.to_move(state) == frozenset({WHITE})
    assert board_cells(PSYCHE.render(state, BLACK), 6)["a1"] == "W<"
    text = PSYCHE.render(state, None)
    assert "alice (White) revealed the hidden stone on a1." in flat(text)
    assert "alice has revealed and now sends the square" in flat(text)
    assert "revealed already" in refusal(state, WHITE, "reveal")
    assert "revealed already" in refusal(state, WHITE, "reveal,c1")
    state = PSYCHE.play(state, WHITE, "c1")
    assert PSYCHE.to_move(state) == frozenset({BLACK})


def test_reveal_and_place_in_one_move():
    state = hidden("a1", "d5")
    assert str(PSYCHE.read_move(state, WHITE, "Reveal , C1")) == "reveal,c1"
    state = PSYCHE.play(state, WHITE, "reveal c1")
    assert PSYCHE.to_move(state) == frozenset({BLACK})
    cells = board_cells(PSYCHE.render(state, BLACK), 6)
    assert (cells["a1"], cells["c1"]) == ("W", "W<")
    assert "revealed the hidden stone on a1 and played c1" in notes(state, None)


def test_reveal_naming_your_own_hidden_square_is_reveal_alone():
    state = hidden("a1", "d5")
    assert str(PSYCHE.read_move(state, WHITE, "reveal a1")) == "reveal"
    assert PSYCHE.play(state, WHITE, "reveal a1") == PSYCHE.play(state, WHITE, "reveal")


def test_examples_in_messages_name_a_square_the_player_can_play():
    # The help suggests "hide e5" and "reveal,e5"; a board mail that then
    # said "reveal,e5" would offer a reveal alone, not a reveal and a stone.
    state = hidden("e5", "d5")
    assert "or reveal and your stone's square together, like reveal,b6." in notes(state, WHITE)
    assert "together, like reveal,a6." in notes(state, BLACK)
    assert refusal(state, WHITE, "   ") == "Write the square for your stone, like b6."
    state = run(state, "b6", "c6")
    assert "like reveal,d6." in notes(state, WHITE)
    state = PSYCHE.play(state, WHITE, "reveal")
    assert "alice has revealed and now sends the square for this turn's stone, like d6." in notes(state, None)
    # e5 and d5 stay the examples while they can be played
    state = hidden("a1", "b1")
    assert "like reveal,e5." in notes(state, WHITE) and "like reveal,d5." in notes(state, BLACK)
    assert refusal(run(state, "c1"), BLACK, "   ") == "Write the square for your stone, like d5."


def test_a_bad_combined_move_changes_nothing():
    state = hidden("a1", "d5")
    assert refusal(state, WHITE, "reveal,b1") == "b1 is a light square: White plays on dark squares."
    assert "Reveal first" in refusal(state, WHITE, "c1,reveal")
    assert "one stone at most" in refusal(state, WHITE, "reveal,c1,e1")
    assert state.revealed_at == (None, None)


# -- the timing rules of the hidden stone ------------------------------------------------------------
def test_a_secret_completion_is_the_owners_once_revealed():
    state = run(hidden("a1", "a6", stones=4), "c1", "b1", "e1")
    assert trick(state, WHITE, "row 1") == "w"
    assert trick(state, BLACK, "row 1") == trick(state, None, "row 1") == "."
    assert "You completed row 1 with your hidden stone" in notes(state, WHITE)
    state = run(state, "d1", "reveal")
    for viewer in (None, WHITE, BLACK):
        assert trick(state, viewer, "row 1") == "W"


def contested() -> MajorityState:
    """White completes row 1 in secret (a1 hidden) on placement 2; Black completes it in public on 5."""
    state = run(hidden("a1", "a6", stones=4), "c1", "b1", "e1", "d1", "c3", "f1")
    assert trick(state, None, "row 1") == trick(state, BLACK, "row 1") == "B"
    assert trick(state, WHITE, "row 1") == "!"
    assert "bob completed row 1 after you did" in notes(state, WHITE)
    return state


@pytest.mark.parametrize("moves", [("reveal,e3",), ("reveal", "e3")])
def test_the_owner_keeps_a_line_by_revealing_on_the_next_move(moves):
    state = run(contested(), *moves)
    for viewer in (None, WHITE, BLACK):
        assert trick(state, viewer, "row 1") == "W"
        # the mail says why row 1 changed hands
        assert "hidden stone on a1 was revealed. With it alice completed and holds row 1." in notes(state, viewer)
    state = run(state, "b3")
    assert PSYCHE.outcome(state) is not None
    assert trick(state, None, "row 1") == "W"


def test_the_owner_loses_the_line_by_moving_without_revealing():
    state = run(contested(), "e3")
    assert trick(state, WHITE, "row 1") == "B"
    assert "did not reveal in time" in notes(state, WHITE)
    assert "did not reveal in time" not in notes(state, BLACK)
    state = run(state, "b3")
    assert PSYCHE.outcome(state) is not None
    assert trick(state, None, "row 1") == "B"
    text = PSYCHE.render(state, None)
    assert "alice completed row 1 first with the hidden stone but did not reveal in time" in flat(text)
    assert "With it" not in flat(text)


def test_a_line_the_opponent_completed_first_stays_theirs():
    state = run(hidden("a1", "a6", stones=5), "c1", "b1", "c3", "d1", "e3", "f1", "e1")
    assert trick(state, WHITE, "row 1") == "B"
    state = run(state, "b3", "reveal,c5")
    for viewer in (None, WHITE, BLACK):
        assert trick(state, viewer, "row 1") == "B"


def test_the_final_reveal_is_in_time_for_a_completion_on_the_very_last_move():
    state = run(hidden("a1", "a6", stones=3), "c1", "b1", "e1", "d1", "c3", "f1")
    outcome = final(state)
    assert trick(state, None, "row 1") == "W"
    # row 1: 1 + b1 d1 f1; row 3, columns c and e: 1 each; row 6 (a6) and
    # columns b d f Black's; column a is 1-1 with both hidden stones
    assert outcome.scores == (4 + 1 + 1 + 1 + 0.5, 1 + 1 + 1 + 1)
    text = PSYCHE.render(state, None)
    cells = board_cells(text, 6)
    assert (cells["a1"], cells["a6"]) == ("W", "B")
    assert "alice's hidden stone on a1 was revealed at the end. With it alice completed and holds row 1." in flat(text)


def test_the_final_reveal_is_late_once_the_owner_has_played_past_the_deadline():
    # Black completes row 1 in secret (b1 hidden) on 3, White in public on 4,
    # Black's last move (5) passes without a reveal
    start = hidden("e3", "b1", stones=3)
    state = run(start, "a1", "d1", "c1", "f1", "e1")
    assert trick(state, BLACK, "row 1") == "!"
    late = run(state, "b3")
    assert trick(late, None, "row 1") == "W"
    in_time = run(state, "reveal,b3")
    assert trick(in_time, None, "row 1") == "B"


@pytest.mark.parametrize(
    ("moves", "holder"),
    [(("c1", "d1", "e1", "f1", "c3", "b3"), "W"), (("c1", "d1", "c3", "f1", "e1", "b3"), "B")],
)
def test_two_secret_completions_go_to_the_first_at_the_final_reveal(moves, holder):
    state = run(hidden("a1", "b1", stones=3), *moves)
    assert PSYCHE.outcome(state) is not None
    assert trick(state, None, "row 1") == holder


def test_the_deadline_runs_from_when_the_opponents_completion_becomes_public():
    # both complete row 1 in secret, White first; Black reveals on 5
    state = run(hidden("a1", "b1", stones=4), "c1", "d1", "e1", "f1", "c3", "reveal,b3")
    assert trick(state, None, "row 1") == "B"
    assert trick(state, WHITE, "row 1") == "!"
    assert trick(run(state, "reveal,e3"), None, "row 1") == "W"
    assert trick(run(state, "e3", "d3"), None, "row 1") == "B"


# -- the trick rule, told in moments -------------------------------------------------------------------
def test_the_first_completion_wins_once_shown():
    assert judge_trick([], start_of(9)) == Trick()
    assert judge_trick([Completion(WHITE, 4, stone_of(4))], start_of(5)) == Trick(holder=WHITE)
    # resting on a hidden stone nobody else has seen yet: White's once revealed
    assert judge_trick([Completion(WHITE, 4, None)], start_of(5)) == Trick(waiting=WHITE)
    # a later completion that cannot be seen yet takes nothing away
    secret_rival = [Completion(WHITE, 4, None), Completion(BLACK, 7, None)]
    assert judge_trick(secret_rival, start_of(9)) == Trick(waiting=WHITE)


def test_a_first_completion_shown_by_the_next_turn_after_the_rival_was_shown_stands():
    rival = Completion(BLACK, 7, stone_of(7))  # the deadline: the start of turn 8, White's
    assert judge_trick([Completion(WHITE, 4, start_of(8)), rival], start_of(9)) == Trick(holder=WHITE)
    assert judge_trick([Completion(WHITE, 4, start_of(10)), rival], start_of(11)) == Trick(holder=BLACK, late=WHITE)
    # not revealed yet: White may still do it at the start of turn 8, not later
    assert judge_trick([Completion(WHITE, 4, None), rival], start_of(8)) == Trick(holder=BLACK, waiting=WHITE)
    assert judge_trick([Completion(WHITE, 4, None), rival], start_of(9)) == Trick(holder=BLACK, late=WHITE)
    # a rival shown by a reveal at the start of turn 7 sets the same deadline
    revealed_rival = Completion(BLACK, 5, start_of(7))
    assert judge_trick([Completion(WHITE, 4, start_of(8)), revealed_rival], start_of(9)) == Trick(holder=WHITE)


# -- moves as values ------------------------------------------------------------------------------------
def test_a_move_reads_into_a_value_whose_text_reads_back_into_it():
    setup = PSYCHE.new({"size": "6"}, PLAYERS)
    playing = hidden("a1", "d5")
    for state, text, canonical in [
        (setup, " HIDE  A 1", "hide a1"),
        (playing, "C 1", "c1"),
        (playing, "Reveal , C1", "reveal,c1"),
        (playing, "reveal", "reveal"),
        (playing, "reveal a1", "reveal"),  # the hidden stone's own square: a reveal alone
    ]:
        move = PSYCHE.read_move(state, WHITE, text)
        assert str(move) == canonical
        assert PSYCHE.read_move(state, WHITE, str(move)) == move
        assert PSYCHE.apply(state, WHITE, move) == PSYCHE.play(state, WHITE, text)
    assert PSYCHE.read_move(playing, WHITE, "reveal,c1") == Place(square=2, size=6, reveal=True)
    assert PSYCHE.read_move(playing, WHITE, "reveal") == Reveal()
    assert PSYCHE.read_move(setup, BLACK, "hide b1") == Hide(square=1, size=6)


def test_only_the_hiding_of_a_stone_is_a_secret_move():
    assert PSYCHE.read_move(PSYCHE.new({"size": "6"}, PLAYERS), BLACK, "hide d5").secret
    state = hidden("a1", "d5")
    for text in ("c1", "reveal", "reveal,c1"):
        assert not PSYCHE.read_move(state, WHITE, text).secret
    assert not GAME.read_move(plain(), WHITE, "c1").secret


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("b1", "b1 is a light square: White plays on dark squares."),
        ("a1", "a1 holds your hidden stone: play on another empty dark square."),
        ("c1,e1", "Place one stone per turn: write one square, like e5."),
        ("reveal,a1,c1", "Reveal and place one stone at most: write reveal, or reveal,e5."),
        ("hide c1", "Stones are hidden only before the first move: now place a stone, like e5."),
    ],
)
def test_read_move_refuses_what_the_rules_forbid_and_says_how_to_do_it_right(text, message):
    state = hidden("a1", "d5")
    with pytest.raises(IllegalMove) as caught:
        PSYCHE.read_move(state, WHITE, text)
    assert caught.value.message == message
    with pytest.raises(IllegalMove, match="not your turn"):
        PSYCHE.read_move(state, BLACK, "d1")


# -- leak checks --------------------------------------------------------------------------------------
def probes(size: int) -> list[str]:
    labels = [f"{FILES[f]}{r + 1}" for f in range(size) for r in range(size)]
    combined = [f"reveal,{label}" for label in labels[::7]]
    hides = [f"hide {label}" for label in labels[::5]]
    return labels + combined + hides + ["reveal", "pass", "hide", ""]


def answer(game, state, seat: int, text: str) -> str:
    try:
        game.play(state, seat, text)
    except IllegalMove as error:
        return error.message
    return "accepted"


def random_record(seed: int, options: dict) -> list[tuple[int, str]]:
    rng = random.Random(seed)
    state = PSYCHE.new(options, PLAYERS)
    record = []
    while PSYCHE.outcome(state) is None:
        seat = rng.choice(sorted(PSYCHE.to_move(state)))
        move = rng.choice(PSYCHE.legal_moves(state, seat))
        record.append((seat, move))
        state = PSYCHE.play(state, seat, move)
    return record


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), owner=st.sampled_from([WHITE, BLACK]),
       options=st.sampled_from([{"size": "6", "stones": "10"}, {}]))
def test_moving_the_hidden_stone_changes_nothing_the_opponent_or_public_sees(seed, owner, options):
    """Replay a random game with the owner's stone hidden elsewhere: until the
    owner reveals, the opponent's and the public's boards, the opponent's legal
    moves and every refusal the opponent can provoke stay exactly the same."""
    record = random_record(seed, options)
    size = PSYCHE.new(options, PLAYERS).size
    hide = next(move for seat, move in record if seat == owner and move.startswith("hide"))
    placed = {move.split(",")[-1] for seat, move in record if seat == owner and not move.startswith("hide")}
    squares = [move[5:] for move in PSYCHE.legal_moves(PSYCHE.new(options, PLAYERS), owner)]
    elsewhere = [square for square in squares if square not in placed and f"hide {square}" != hide]
    if not elsewhere:
        return
    twin = [(seat, f"hide {elsewhere[seed % len(elsewhere)]}" if (seat, move) == (owner, hide) else move)
            for seat, move in record]
    opponent = 1 - owner
    first, second = PSYCHE.new(options, PLAYERS), PSYCHE.new(options, PLAYERS)
    for (seat, move), (_, twin_move) in zip(record, twin):
        if first.revealed_at[owner] is not None:
            break
        assert PSYCHE.to_move(first) == PSYCHE.to_move(second)
        for viewer in (opponent, None):
            assert PSYCHE.render(first, viewer) == PSYCHE.render(second, viewer)
        assert PSYCHE.legal_moves(first, opponent) == PSYCHE.legal_moves(second, opponent)
        for text in probes(size):
            assert answer(PSYCHE, first, opponent, text) == answer(PSYCHE, second, opponent, text)
        first, second = PSYCHE.play(first, seat, move), PSYCHE.play(second, seat, twin_move)


def label(state: MajorityState, square: int) -> str:
    return f"{FILES[square % state.size]}{square // state.size + 1}"


def assert_hidden_stones_stay_hidden(game, state: object) -> None:
    """Also: the state survives JSON, and every view fits a 72-column mail."""
    assert isinstance(state, MajorityState)
    assert game.decode(json.loads(json.dumps(game.encode(state)))) == state
    views = {viewer: game.render(state, viewer) for viewer in (WHITE, BLACK, None)}
    for text in views.values():
        assert max(len(line) for line in text.splitlines()) <= 72
    for owner, square in enumerate(state.hidden):
        if square is None or state.revealed_at[owner] is not None:
            continue
        where = label(state, square)
        for viewer in (1 - owner, None):
            assert board_cells(views[viewer], state.size)[where] == ":."[owner]
            assert re.search(rf"\b{where}\b", views[viewer]) is None
        assert board_cells(views[owner], state.size)[where] == "wb"[owner]


def never_legal(state: object, seat: int) -> list[str]:
    """Texts `seat` may not play now: taken squares, its own hidden square,
    a reveal with nothing to reveal, a pass, a second stone."""
    assert isinstance(state, MajorityState)
    texts = ["pass", "c1,e1"]
    texts += [label(state, i) for i, mark in enumerate(state.board) if mark != "."][:4]
    own_hidden = state.hidden[seat]
    if own_hidden is not None:
        texts.append(label(state, own_hidden))
    if state.hidden[seat] is None or state.revealed_at[seat] is not None:
        texts.append("reveal")
    return texts


OPTION_SETS = [
    (GAME, {}),
    (GAME, {"size": "6"}),
    (GAME, {"size": "8"}),
    (GAME, {"size": "12"}),
    (GAME, {"size": "14", "stones": "30"}),
    (GAME, {"stones": "1"}),
    (GAME, {"size": "6", "stones": "18"}),
    (GAME, {"hidden": None}),
    (GAME, {"hidden": None, "size": "6", "stones": "17"}),
    (GAME, {"hidden": None, "size": "8", "stones": "3"}),
    (PSYCHE, {}),
    (PSYCHE, {"size": "14", "stones": "40"}),
]


@pytest.mark.parametrize(
    ("game", "options"), OPTION_SETS, ids=lambda value: getattr(value, "name", str(value))
)
@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_random_games_keep_the_contract(game, options, seed):
    state, outcome = check_random_game(
        game, options, seed, extra_refused=never_legal, check_views=assert_hidden_stones_stay_hidden
    )
    assert isinstance(state, MajorityState) and outcome.scores is not None
    assert state.placed == 2 * state.stones
    assert len(outcome.winners) == 1
    assert outcome.scores[WHITE] % 1 == 0.5 and outcome.scores[BLACK] % 1 == 0
    assert None not in [at for square, at in zip(state.hidden, state.revealed_at) if square is not None]
