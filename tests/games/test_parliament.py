"""Parliament (the rules `parliament help` gives): the chambers, preferences, local
majorities and their order, the end of a round, hung rounds, the board mail,
secrecy of preferences, and random games."""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.parliament import Parliament
from games.parliament.cascade import EMPTY, PREFERENCE, settle
from games.parliament.chambers import LAYOUTS
from games.parliament.state import State
from pbmserv.gamekit import Game, IllegalMove, InvalidOption
from tests.game_invariants import check_random_game

GAME = Parliament()
PLAYERS = ["alice", "bob"]
RED, BLUE = 0, 1

# -- building positions --------------------------------------------------
# Pictures list a chamber's rows from the top: '-' is no seat, '.' empty,
# R/B a seat held by Red/Blue, r/b a revealed preference, x/o a hidden
# preference of Red/Blue, '+' a seat both players named (cancelled).

EMPTY_UPPER = ["-........-"] + [".........."] * 6 + ["-........-"]
EMPTY_LOWER = (
    ["---...........---"] + ["-...............-"] * 2 + ["................."] * 4
    + ["-...............-"] * 2 + ["---...........---"]
)
#: rows 1-4 Red, 5-8 Blue: 38 each, and no seat is due to flip
UPPER_TIE = ["-RRRRRRRR-"] + ["RRRRRRRRRR"] * 3 + ["BBBBBBBBBB"] * 3 + ["-BBBBBBBB-"]
#: as UPPER_TIE with a5 and b5 Red: Red 40, Blue 36, still settled
UPPER_RED = ["-RRRRRRRR-"] + ["RRRRRRRRRR"] * 3 + ["RRBBBBBBBB"] + ["BBBBBBBBBB"] * 2 + ["-BBBBBBBB-"]
#: rows 1-6 Red (92 seats), 7-10 Blue (58), settled
LOWER_RED = (
    ["---RRRRRRRRRRR---"] + ["-RRRRRRRRRRRRRRR-"] * 2 + ["RRRRRRRRRRRRRRRRR"] * 3
    + ["BBBBBBBBBBBBBBBBB"] + ["-BBBBBBBBBBBBBBB-"] * 2 + ["---BBBBBBBBBBB---"]
)
BOARD_MARK = {"R": "R", "B": "B", "r": "r", "b": "b", "x": EMPTY, "o": EMPTY, "+": EMPTY, ".": EMPTY}


def position(boards: str, *pictures: list[str], next_seat: int = RED, finished: tuple[str, ...] = ()) -> State:
    layout = LAYOUTS[boards]
    assert len(pictures) == len(layout.chambers)
    board: list[str] = []
    preferences: tuple[list[int], list[int]] = ([], [])
    for chamber, picture in zip(layout.chambers, pictures):
        grid = chamber.grid
        for rank, row in enumerate(picture):
            assert len(row) == grid.width
            for file, char in enumerate(row):
                assert (char == "-") == ((file, rank) not in grid), (row, file)
        for file, rank in grid.cells:
            char = picture[rank][file]
            seat = len(board)
            board.append(BOARD_MARK[char])
            if char in "rx+":
                preferences[RED].append(seat)
            if char in "bo+":
                preferences[BLUE].append(seat)
    return State(
        players=tuple(PLAYERS),
        boards=boards,
        preferences=(tuple(preferences[RED]), tuple(preferences[BLUE])),
        board="".join(board),
        next_seat=next_seat,
        finished_rounds=finished,
    )


def upper(*rows: str, next_seat: int = RED) -> State:
    return position("upper", with_rows(EMPTY_UPPER, rows), next_seat=next_seat)


def with_rows(base: list[str], rows: tuple[str, ...]) -> list[str]:
    """`base` with its first rows replaced by `rows`."""
    return list(rows) + base[len(rows) :]


def changed(picture: list[str], **seats: str) -> list[str]:
    """`picture` with single seats changed, e.g. changed(UPPER_TIE, e3='.')."""
    rows = [list(row) for row in picture]
    for name, char in seats.items():
        rows[int(name[1:]) - 1][ord(name[0]) - ord("a")] = char
    return ["".join(row) for row in rows]


def mark(state: State, seat: str) -> str:
    return state.board[state.layout.labels.index(seat)]


def assert_settled(state: State) -> None:
    """A hand-built position must not hold a seat already due to flip."""
    board = list(state.board)
    assert settle(state.layout.neighbours, board, state.hidden(), RED, (), range(state.layout.size)) == []


def refusal(state: State, seat: int, text: str) -> str:
    with pytest.raises(IllegalMove) as caught:
        GAME.play(state, seat, text)
    return caught.value.message


def started(boards: str = "both", red: str = "prefer none", blue: str = "prefer none") -> State:
    state = GAME.new({"boards": boards}, PLAYERS)
    state = GAME.play(state, BLUE, blue)
    return GAME.play(state, RED, red)


def flips(state: State) -> list[tuple[str, str]]:
    labels = state.layout.labels
    return [(labels[seat], new) for kind, seat, new in state.last_events if kind == "flip"]


# -- the chambers ----------------------------------------------------------


def neighbour_counts(boards: str) -> Counter[int]:
    return Counter(len(around) for around in LAYOUTS[boards].neighbours)


def test_lower_chamber_has_the_sheets_marginal_seats():
    assert neighbour_counts("lower") == {3: 4, 4: 8, 5: 22, 6: 8, 7: 8, 8: 100}


def test_upper_chamber_is_the_rectangle_less_its_corners():
    layout = LAYOUTS["upper"]
    assert layout.size == 76
    assert neighbour_counts("upper") == {4: 8, 5: 20, 7: 4, 8: 44}
    for corner in ("a1", "j1", "a8", "j8"):
        assert "cut off" in refusal(started("upper"), RED, corner)


def test_chamber_sizes_and_reading_order():
    assert [LAYOUTS[b].size for b in ("upper", "lower", "both")] == [76, 150, 226]
    both = LAYOUTS["both"]
    assert both.labels[:3] == ("u:b1", "u:c1", "u:d1")
    assert both.labels[76:78] == ("l:d1", "l:e1")
    assert both.labels[-1] == "l:n10"
    # rows count from the top: row 1 of the Lower chamber starts at column d
    assert LAYOUTS["lower"].labels[:2] == ("d1", "e1")
    assert set(both.neighbours[both.labels.index("l:d1")]) == {
        both.labels.index(s) for s in ("l:e1", "l:c2", "l:d2", "l:e2")
    }


def test_seat_spelling_errors():
    state = started("both")
    assert "needs its chamber" in refusal(state, RED, "c4")
    assert "U:c4" in refusal(state, RED, "c4")
    assert "off the board" in refusal(state, RED, "U:k4")
    assert "rows 1-8" in refusal(state, RED, "U:c9")
    assert "columns a-q" in refusal(state, RED, "L:r4")
    assert "cut off" in refusal(state, RED, "L:a1")
    assert "not a seat" in refusal(state, RED, "X:c4")
    only_lower = started("lower")
    assert "no Upper chamber" in refusal(only_lower, RED, "U:c4")
    assert GAME.play(only_lower, RED, "L:c4").board == GAME.play(only_lower, RED, "c4").board
    assert GAME.play(only_lower, RED, "lower: C4").board == GAME.play(only_lower, RED, "c4").board


# -- options -----------------------------------------------------------------


def test_boards_option():
    assert GAME.new({}, PLAYERS).boards == "both"
    for boards, size in (("upper", 76), ("lower", 150), ("both", 226)):
        state = GAME.new({"boards": boards.upper()}, PLAYERS)
        assert len(state.board) == size
    with pytest.raises(InvalidOption) as refused:
        GAME.new({"boards": "middle"}, PLAYERS)
    assert all(word in refused.value.message for word in ("middle", "upper", "lower", "both"))
    with pytest.raises(InvalidOption, match="-boards"):
        GAME.new({"size": "5"}, PLAYERS)
    with pytest.raises(InvalidOption, match="two players"):
        GAME.new({}, ["alice", "bob", "carol"])


def test_class_attributes():
    assert (GAME.name, GAME.title, GAME.side_names) == ("parliament", "Parliament", ("Red", "Blue"))
    assert (GAME.min_players, GAME.max_players) == (2, 2)
    assert [option.name for option in GAME.options] == ["boards"]


# -- preferences ---------------------------------------------------------------


def test_both_players_choose_preferences_in_either_order_before_red_claims():
    state = GAME.new({}, PLAYERS)
    assert GAME.to_move(state) == {RED, BLUE}
    assert "before the first claim" not in refusal(state, RED, "U:c4")
    assert "prefer" in refusal(state, RED, "U:c4")
    after_blue = GAME.play(state, BLUE, "prefer L:h5")
    assert GAME.to_move(after_blue) == {RED}
    assert GAME.legal_moves(after_blue, BLUE) == []
    assert "already sent your preferences" in refusal(after_blue, BLUE, "prefer none")
    assert "alice" in refusal(after_blue, BLUE, "prefer none")
    after_red = GAME.play(state, RED, "prefer none")
    assert GAME.to_move(after_red) == {BLUE}
    both = GAME.play(after_blue, RED, "prefer U:c4")
    assert GAME.to_move(both) == {RED}
    assert "is not your turn" in refusal(both, BLUE, "L:c4")
    assert "alice is to move" in refusal(both, BLUE, "L:c4")
    assert "before the first claim" in refusal(both, RED, "prefer U:d4")


def test_preference_limits_per_chamber():
    both = GAME.new({"boards": "both"}, PLAYERS)
    seven_upper = "prefer " + ",".join(f"U:{c}4" for c in "abcdefg")
    assert len(GAME.play(both, RED, seven_upper).preferences[RED]) == 7
    assert "at most 7" in refusal(both, RED, seven_upper + ",L:c4")
    upper = GAME.new({"boards": "upper"}, PLAYERS)
    assert len(GAME.play(upper, RED, "prefer c4 d4 e4").preferences[RED]) == 3
    assert "at most 3" in refusal(upper, RED, "prefer c4,d4,e4,f4")
    lower = GAME.new({"boards": "lower"}, PLAYERS)
    assert len(GAME.play(lower, BLUE, "prefer c4,d4,e4,f4").preferences[BLUE]) == 4
    assert "at most 4" in refusal(lower, BLUE, "prefer c4,d4,e4,f4,g4")


def test_preference_syntax_errors():
    state = GAME.new({}, PLAYERS)
    assert "named twice" in refusal(state, RED, "prefer U:c4,u:C4")
    assert "not both" in refusal(state, RED, "prefer none,U:c4")
    assert "prefer none" in refusal(state, RED, "prefer")
    assert "needs its chamber" in refusal(state, RED, "prefer c4")
    assert "cut off" in refusal(state, RED, "prefer U:a1")
    assert GAME.play(state, RED, "Preferences: L:h5 U:c4").preferences[RED] == (
        LAYOUTS["both"].labels.index("u:c4"),
        LAYOUTS["both"].labels.index("l:h5"),
    )
    assert GAME.play(state, RED, " PREFER   NONE ").preferences[RED] == ()
    upper = GAME.new({"boards": "upper"}, PLAYERS)
    assert GAME.play(upper, RED, "prefer U:c4").preferences == GAME.play(upper, RED, "prefer c4").preferences
    assert "no Lower chamber" in refusal(upper, RED, "prefer L:c4")


def test_setup_legal_moves_are_none_and_every_single_seat():
    state = GAME.new({}, PLAYERS)
    moves = GAME.legal_moves(state, RED)
    assert moves[0] == "prefer none"
    assert moves[1:] == [f"prefer {label}" for label in LAYOUTS["both"].shown]
    assert moves[1] == "prefer U:b1"
    assert len(moves) == 227
    assert GAME.legal_moves(GAME.new({"boards": "upper"}, PLAYERS), BLUE)[1] == "prefer b1"


def test_preference_moves_are_secret_and_canonical():
    state = GAME.new({}, PLAYERS)
    assert GAME.read_move(state, RED, "prefer U:c4").secret
    assert GAME.read_move(state, RED, "Prefer none").secret
    assert str(GAME.read_move(state, RED, "PREFER L:h5, U:c4")) == "prefer U:c4,L:h5"
    assert str(GAME.read_move(state, RED, "prefer  none")) == "prefer none"
    playing = started("both")
    assert not GAME.read_move(playing, RED, "L:c4").secret
    assert str(GAME.read_move(playing, RED, " claim l : C4 ")) == "L:c4"
    assert str(GAME.read_move(playing, RED, "L:c4 THEN L:e5 l:d5")) == "L:c4 then L:e5,L:d5"
    assert str(GAME.read_move(started("upper"), RED, "U:c4")) == "c4"


@pytest.mark.parametrize(
    ("boards", "text", "canonical", "secret"),
    [
        ("both", "PREFER L:h5, U:c4", "prefer U:c4,L:h5", True),
        ("both", "preferences: none", "prefer none", True),
        ("upper", "prefer c4 b2", "prefer b2,c4", True),
        ("both", " claim l : C4 ", "L:c4", False),
        ("both", "L:c4 THEN L:e5 l:d5", "L:c4 then L:e5,L:d5", False),
        ("upper", "claim U:c4", "c4", False),
    ],
)
def test_a_move_value_prints_its_canonical_text_and_reads_it_back(boards, text, canonical, secret):
    state = GAME.new({"boards": boards}, PLAYERS) if text.lower().startswith("pref") else started(boards)
    move = GAME.read_move(state, RED, text)
    assert str(move) == canonical
    assert move.secret is secret
    assert GAME.read_move(state, RED, str(move)) == move
    assert GAME.apply(state, RED, move) == GAME.play(state, RED, text)


def test_reading_a_bad_move_says_what_is_wrong_and_changes_nothing():
    state = started("upper")
    before = GAME.encode(state)
    with pytest.raises(IllegalMove, match="Claim one seat per turn"):
        GAME.read_move(state, RED, "c4 d4")
    with pytest.raises(IllegalMove, match="Preferences are chosen before the first claim"):
        GAME.read_move(state, RED, "prefer c4")
    with pytest.raises(IllegalMove, match="It is not your turn"):
        GAME.read_move(state, BLUE, "c4")
    with pytest.raises(IllegalMove, match="First choose your secret preferences"):
        GAME.read_move(GAME.new({"boards": "upper"}, PLAYERS), RED, "c4")
    assert GAME.encode(state) == before


def test_claiming_the_opponents_hidden_preference_reveals_it_and_spends_the_turn():
    state = upper("-........-", "..o.......")
    after = GAME.play(state, RED, "c2")
    assert mark(after, "c2") == "b"
    assert after.last_events[0][0] == "revealed"
    assert GAME.to_move(after) == {BLUE}
    assert "a hidden preference of bob" in GAME.render(after, None)
    assert "your own preference" in refusal(after, BLUE, "c2")
    assert "Blue's preference" in refusal(replace(after, next_seat=RED), RED, "c2")


def test_your_own_preference_cannot_be_claimed():
    state = upper("-........-", "..o.......", next_seat=BLUE)
    assert "your own hidden preference" in refusal(state, BLUE, "c2")
    assert "c2" not in GAME.legal_moves(state, BLUE)
    assert "c2" in GAME.legal_moves(replace(state, next_seat=RED), RED)


def test_both_naming_the_same_seat_cancels_the_preferences():
    state = started("both", red="prefer U:c4,L:h5", blue="prefer U:c4")
    assert state.cancelled() == {LAYOUTS["both"].labels.index("u:c4")}
    assert "U:c4" in GAME.legal_moves(state, RED)
    assert "l:h5" not in GAME.legal_moves(state, RED)
    for viewer in (RED, BLUE):
        assert "so an ordinary seat: U:c4" in GAME.render(state, viewer)
    assert "U:c4" not in GAME.render(state, None)
    assert "Your hidden preferences: L:h5." in GAME.render(state, RED)
    claimed = GAME.play(state, RED, "U:c4")
    assert mark(claimed, "u:c4") == "R"
    assert claimed.last_events == (("claim", LAYOUTS["both"].labels.index("u:c4"), "R"),)
    surrounded = upper("-........-", ".RRR......", ".R+.......", ".RRR......")
    assert_settled(surrounded)
    after = GAME.play(surrounded, RED, "d3")
    assert mark(after, "c3") == "R"  # an ordinary empty seat, surrounded by Red


# -- local majorities ----------------------------------------------------------


def test_an_empty_seat_takes_the_strict_majority_of_its_surrounding_seats():
    state = upper("-.R......-", "RR........", next_seat=BLUE)
    # b1 has four surrounding seats: c1, a2, b2, c2
    after = GAME.play(state, BLUE, "c2")
    assert mark(after, "b1") == "R"
    assert flips(after) == [("b1", "R")]


def test_a_tie_changes_nothing():
    state = upper("-.R......-", "RB........", next_seat=BLUE)
    after = GAME.play(state, BLUE, "c2")
    assert mark(after, "b1") == EMPTY
    held = upper("-BR......-", "RB........", next_seat=BLUE)
    assert mark(GAME.play(held, BLUE, "c2"), "b1") == "B"


def test_a_claimed_seat_can_be_lost_in_the_same_turn():
    # b1 is an empty seat in a tie; claiming it completes c2's surroundings,
    # c2 turns Blue, and then b1 has a Blue majority
    state = upper("-.BB.....-", "RBRB......", ".BBB......")
    assert_settled(state)
    after = GAME.play(state, RED, "b1")
    assert after.last_events[0][0] == "claim"
    assert flips(after) == [("c2", "B"), ("b1", "B")]
    assert mark(after, "b1") == "B"


def test_revealed_preferences_count_and_never_flip():
    state = upper("-.b......-", "bb........", next_seat=BLUE)
    assert mark(GAME.play(state, BLUE, "c2"), "b1") == "B"
    immutable = upper("-rB......-", "BB........", next_seat=BLUE)
    after = GAME.play(immutable, BLUE, "c2")
    assert mark(after, "b1") == "r"
    assert flips(after) == []


def test_a_hidden_preference_looks_empty_and_is_revealed_when_surrounded():
    # b1 is Blue's hidden preference; Red surrounds it with Red seats
    state = upper("-oR......-", "RR........")
    assert_settled(state)
    after = GAME.play(state, RED, "c2")
    assert mark(after, "b1") == "b"
    assert [kind for kind, _, _ in after.last_events] == ["claim", "surrounded"]
    assert "b1 revealed as Blue's preference (surrounded)" in GAME.render(after, None)
    # a hidden preference does not complete its neighbours' surroundings
    looks_empty = upper("-.o......-", "RRR.......", next_seat=BLUE)
    assert mark(GAME.play(looks_empty, BLUE, "d1"), "b1") == EMPTY


def test_a_reveal_can_complete_further_surroundings():
    state = upper("-oB......-", "RB........", "BB........")
    assert_settled(state)
    after = GAME.play(state, RED, "c2")
    assert [(kind, state.layout.labels[seat], new) for kind, seat, new in after.last_events] == [
        ("claim", "c2", "R"),
        ("surrounded", "b1", "b"),
        ("flip", "a2", "B"),
    ]


def test_claimers_flips_come_first_and_the_board_is_looked_at_again_after_each():
    # after Red claims c2: b1 (Red) is due to turn Blue, b2 (Blue) to turn Red.
    # Red's flip goes first and leaves b1 in a tie, so b1 stays Red.
    state = upper("-RB......-", "bB........", "RRR.......")
    assert_settled(state)
    after = GAME.play(state, RED, "c2")
    assert flips(after) == [("b2", "R")]
    assert mark(after, "b1") == "R"
    # the same claim by Blue: Blue's flip of b1 comes first, and b2 is no longer due
    by_blue = GAME.play(replace(state, next_seat=BLUE), BLUE, "c2")
    assert flips(by_blue) == [("b1", "B")]


def test_flips_go_in_reading_order_unless_the_claimer_names_an_order():
    # after Red claims c2 only Blue flips are due: b1 and c3.
    state = upper("-RB......-", "bB.B......", "RR.B......", ".BBB......")
    assert_settled(state)
    plain = GAME.play(state, RED, "c2")
    assert flips(plain) == [("b1", "B"), ("c3", "B")]
    assert mark(plain, "b2") == "B"
    # flipping c3 first completes b2's surroundings with a Red majority;
    # Red's flip of b2 then leaves b1 in a tie
    ordered = GAME.play(state, RED, "c2 then c3")
    assert flips(ordered) == [("c3", "B"), ("b2", "R")]
    assert (mark(ordered, "b1"), mark(ordered, "b2")) == ("R", "R")
    assert "Then, in order: c3 to Blue, b2 to Red." in GAME.render(ordered, BLUE)
    # named seats that never flip change nothing
    assert GAME.play(state, RED, "c2 then e5,b1").board == plain.board


def test_upper_flips_before_lower_in_reading_order():
    # U:b1 and L:d1 each have three Red surrounding seats and one Blue one
    layout = LAYOUTS["both"]
    index = layout.labels.index
    board = [EMPTY] * layout.size
    for seat in ("u:c1", "u:a2", "u:b2", "l:e1", "l:c2", "l:d2"):
        board[index(seat)] = "R"
    for seat in ("u:c2", "l:e2"):
        board[index(seat)] = "B"
    starts = [index("u:c2"), index("l:e2")]
    events = settle(layout.neighbours, list(board), {}, RED, (), starts)
    assert [layout.labels[seat] for _, seat, _ in events] == ["u:b1", "l:d1"]
    reordered = settle(layout.neighbours, list(board), {}, RED, [index("l:d1")], starts)
    assert [layout.labels[seat] for _, seat, _ in reordered] == ["l:d1", "u:b1"]


def test_claim_syntax_errors():
    state = started("both")
    assert "one seat per turn" in refusal(state, RED, "L:c4,L:d4")
    assert "after then" in refusal(state, RED, "L:c4 then")
    assert "then only once" in refusal(state, RED, "L:c4 then L:d5 then L:e5")
    assert "named twice" in refusal(state, RED, "L:c4 then L:d5,L:d5")
    assert "Send the seat" in refusal(state, RED, "  ")
    assert "not a seat" in refusal(state, RED, "a1;drop table")
    held = GAME.play(state, RED, "L:c4")
    assert "already held by Red" in refusal(held, BLUE, "L:c4")


# -- the end of a round ----------------------------------------------------------


def test_an_absolute_majority_of_seats_wins():
    state = position("upper", changed(UPPER_RED, e3=".", f3="."))
    assert_settled(state)
    after = GAME.play(state, RED, "e3")
    result = GAME.outcome(after)
    assert result is not None
    assert result.winners == (RED,)
    assert result.scores == (40, 36)
    assert result.reason == "Red holds 40 of 76 seats"
    assert GAME.to_move(after) == frozenset()
    assert GAME.legal_moves(after, BLUE) == []
    assert "game is over" in refusal(after, BLUE, "e3")
    assert "Game over: Red holds 40 of 76 seats." in GAME.render(after, None)
    assert refusal(after, BLUE, "e3") == "The game is over: Red holds 40 of 76 seats."


def test_preferences_do_not_count_toward_the_absolute_majority():
    # Red holds 38 seats and 2 preferences, Blue 36 seats: no majority
    state = position("upper", changed(UPPER_RED, b1="r", c1="r", e3=".", f3="."))
    assert_settled(state)
    after = GAME.play(state, RED, "e3")
    assert GAME.outcome(after) is None
    assert after.finished_rounds[0].count("R") == 38
    assert "Round 1 was hung: Red 38 seats, Blue 36 seats." in GAME.render(after, None)


def test_with_both_chambers_the_winner_must_hold_the_upper_chamber():
    blocked = position("both", UPPER_TIE, changed(LOWER_RED, h3=".", i3="."))
    assert_settled(blocked)
    after = GAME.play(blocked, RED, "L:h3")
    assert after.finished_rounds[0].count("R") == 130
    assert GAME.outcome(after) is None
    assert "Round 1 was hung: Red 130 seats (38 Upper), Blue 96 seats (38 Upper)." in GAME.render(after, None)
    winning = position("both", UPPER_RED, changed(LOWER_RED, h3=".", i3="."))
    result = GAME.outcome(GAME.play(winning, RED, "L:h3"))
    assert result is not None and result.winners == (RED,)
    assert result.scores == (132, 94)
    assert result.reason == "Red holds 132 of 226 seats, 40 of them Upper"


def test_the_round_ends_when_only_hidden_preferences_look_empty():
    # b1 (Red's) and c1 (Blue's) hide each other: neither is ever surrounded
    state = position("upper", changed(UPPER_TIE, b1="x", c1="o", h8=".", i8="."), next_seat=BLUE)
    assert_settled(state)
    after = GAME.play(state, BLUE, "i8")
    labels = after.layout.labels
    ending = [(kind, labels[seat], new) for kind, seat, new in after.last_events if kind == "round-end"]
    assert ending == [("round-end", "b1", "r"), ("round-end", "c1", "b")]
    final = after.finished_rounds[0]
    assert (final.count("R"), final.count("B")) == (36, 38)
    text = GAME.render(after, None)
    assert "That ended round 1; then, in order: b1 revealed as Red's preference, c1 revealed as Blue's" in " ".join(
        text.split()
    )


def test_preferences_revealed_at_the_end_still_swing_the_seats_they_surround():
    # Blue's hidden c1, a2 and b2 hide each other; once they show at the end,
    # b1 has three Blue surrounding seats, turns Blue and gives Blue 39 seats
    state = position("upper", changed(UPPER_TIE, c1="o", a2="o", b2="o", e3=".", f3="."))
    assert_settled(state)
    after = GAME.play(state, RED, "e3")
    labels = after.layout.labels
    assert [(kind, labels[seat]) for kind, seat, _ in after.last_events] == [
        ("claim", "e3"),
        ("flip", "f3"),
        ("round-end", "c1"),
        ("round-end", "a2"),
        ("round-end", "b2"),
        ("flip", "b1"),
    ]
    result = GAME.outcome(after)
    assert result is not None and result.winners == (BLUE,) and result.scores == (34, 39)
    assert "b2 revealed as Blue's preference, b1 to Blue." in " ".join(GAME.render(after, RED).split())


def test_a_hung_round_is_replayed_with_the_preferences_in_place_and_red_first():
    state = position("upper", changed(UPPER_TIE, b1="x", c1="o", h8=".", i8="."), next_seat=BLUE)
    after = GAME.play(state, BLUE, "i8")
    assert len(after.finished_rounds) == 1
    assert GAME.to_move(after) == {RED}
    assert after.board == position("upper", changed(EMPTY_UPPER, b1="r", c1="b")).board
    assert after.hidden() == {}
    assert "b1" not in GAME.legal_moves(after, RED)
    assert "your own preference" in refusal(after, RED, "b1")
    text = GAME.render(after, None)
    assert "Round 1 ended hung. Its final position:" in text
    assert "Round 2 of at most 3:" in text
    assert "Round 2 starts with the preferences in place." in text


def test_local_majorities_of_preferences_apply_from_the_start_of_a_new_round():
    upper_picture = changed(UPPER_TIE, c1="r", a2="r", b2="r", c2="r")
    state = position("both", upper_picture, changed(LOWER_RED, h3=".", i3="."))
    assert_settled(state)
    after = GAME.play(state, RED, "L:h3")
    assert GAME.outcome(after) is None
    assert mark(after, "u:b1") == "R"
    assert after.last_events[-2:] == (("round", 2, ""), ("flip", LAYOUTS["both"].labels.index("u:b1"), "R"))
    assert "Round 2 starts with the preferences in place; then, in order: U:b1 to Red." in " ".join(
        GAME.render(after, None).split()
    )


def test_three_hung_rounds_draw_the_game():
    state = position("upper", changed(UPPER_TIE, e3=".", f3="."))
    hung = position("upper", UPPER_TIE).board
    after = GAME.play(replace(state, finished_rounds=(hung,)), RED, "e3")
    assert GAME.outcome(after) is None and GAME.to_move(after) == {RED}
    last = GAME.play(replace(state, finished_rounds=(hung, hung)), RED, "e3")
    result = GAME.outcome(last)
    assert result is not None
    assert result.winners == ()
    assert result.scores == (38, 38)
    assert result.reason == "three hung rounds, nobody won a majority"
    assert GAME.to_move(last) == frozenset()
    assert last.board == hung


# -- the board mail ------------------------------------------------------------


def test_board_mail_shows_both_chambers_counts_thresholds_and_legend():
    state = started("both", red="prefer U:c4", blue="prefer L:h5")
    state = GAME.play(state, RED, "L:c4")
    text = GAME.render(state, RED)
    assert all(len(line) <= 72 for line in text.splitlines())
    assert "Upper chamber (76 seats)\n" in text and "\n\nLower chamber (150 seats)\n" in text
    assert "R = Red seat (alice)" in text and "B = Blue seat (bob)" in text
    assert "Upper: Red 0, Blue 0, empty 76" in text
    assert "Lower: Red 1, Blue 0, empty 149" in text
    assert "To win a round: 114 of all 226 seats and 39 of the 76 Upper seats" in text
    assert "Last turn: alice (Red) claimed L:c4." in text
    assert "Next: bob (Blue) claims" in text
    assert "r? = your hidden preference" in text
    assert "Your hidden preferences: U:c4." in text
    assert "4 .  .  r? .  ." in text  # U:c4 as Red sees it
    assert " 4 .  .  R< .  ." in text  # L:c4 marked as the last claim
    assert "r?" not in GAME.render(state, BLUE) and "b?" in GAME.render(state, BLUE)
    assert "?" not in GAME.render(state, None)
    assert "Your hidden preferences: L:h5." in GAME.render(state, BLUE)
    assert "U:c4" not in GAME.render(state, BLUE) and "U:c4" not in GAME.render(state, None)


def test_every_flip_of_the_last_turn_is_listed_and_marked():
    state = upper("-RB......-", "bB.B......", "RR.B......", ".BBB......")
    after = GAME.play(state, RED, "c2 then c3")
    text = GAME.render(after, None)
    assert "Then, in order: c3 to Blue, b2 to Red." in text
    assert "2 b  R* R< B" in text
    assert "3 R  R  B* B" in text


def test_a_marked_seat_in_the_last_column_keeps_clear_of_the_row_number():
    state = started("upper", red="prefer j4")
    state = GAME.play(state, RED, "j2")
    text = GAME.render(state, RED)
    assert "2 .  .  .  .  .  .  .  .  .  R< 2" in text
    assert "4 .  .  .  .  .  .  .  .  .  r? 4" in text
    assert "1    .  .  .  .  .  .  .  .     1" in text  # every row number in line
    both = GAME.render(GAME.play(started("both", red="prefer L:q5"), RED, "U:j6"), RED)
    assert "6 .  .  .  .  .  .  .  .  .  R< 6\n" in both
    assert ".  r? 5" in both
    assert all(len(line) <= 72 for line in both.splitlines())


def test_the_next_line_suggests_a_seat_that_can_be_claimed():
    # h5 is the usual example while it is empty
    assert "claims one empty seat, like h5." in GAME.render(upper(), None)
    assert "like L:h5." in GAME.render(started("both"), None)
    # once h5 is taken, the first empty seat in reading order
    taken = upper("-RB......-", "..........", "..........", ".......R..", ".......B..", next_seat=BLUE)
    assert mark(taken, "h5") == "B"
    assert "Next: bob (Blue) claims one empty seat, like d1." in GAME.render(taken, None)


def test_the_example_claim_never_points_at_or_away_from_a_hidden_preference():
    # Red's hidden preference on d1, the first empty seat, with h5 taken
    state = upper("-RBx.....-", "..........", "..........", "..........", ".......B..")
    # Red, to move, is not told to claim their own preference ...
    assert "Next: alice (Red) claims one empty seat, like e1." in GAME.render(state, RED)
    assert "d1" in GAME.render(state, RED)  # (Red sees it as r? and in the list)
    # ... while Blue and onlookers get the example from the public board alone
    for viewer in (BLUE, None):
        assert "Next: alice (Red) claims one empty seat, like d1." in GAME.render(state, viewer)
    # and Blue's hidden preference does not move Red's example either
    blue_hidden = upper("-RBo.....-", "..........", "..........", "..........", ".......B..")
    assert "like d1." in GAME.render(blue_hidden, RED)


def test_one_chamber_is_drawn_alone_with_its_threshold():
    text = GAME.render(started("lower"), None)
    assert "Upper" not in text
    assert "To win a round: 76 of all 150 seats\n(more than half; preferences do not count as seats)." in text
    assert all(len(line) <= 72 for line in text.splitlines())


def test_setup_render_says_what_to_send_and_keeps_choices_secret():
    state = GAME.play(GAME.new({}, PLAYERS), BLUE, "prefer L:h5,U:b1")
    assert "Still to send: alice." in " ".join(GAME.render(state, None).split())
    assert "Your hidden preferences: U:b1, L:h5." in GAME.render(state, BLUE)
    assert GAME.render(state, RED) == GAME.render(replace(state, preferences=(None, ())), RED)
    assert GAME.render(state, None) == GAME.render(replace(state, preferences=(None, ())), None)


def test_help_names_the_syntax_and_the_option():
    text = GAME.help()
    for needed in ("prefer U:c4,L:h5", "prefer none", "L:c4 then L:d5,L:e5", "-boards=upper|lower|both",
                   "default both", "parliament challenge"):
        assert needed in text
    assert all(len(line) <= 72 for line in text.splitlines())


def test_encode_decode_round_trip():
    state = GAME.play(started("both", red="prefer U:c4", blue="prefer U:c4,L:h5"), RED, "L:c4 then L:d4")
    data = json.loads(json.dumps(GAME.encode(state)))
    assert GAME.decode(data) == state


# -- cascades always end ---------------------------------------------------------


@st.composite
def random_boards(draw: st.DrawFn) -> tuple[str, list[str], dict[int, str], int, list[int]]:
    boards = draw(st.sampled_from(["upper", "lower", "both"]))
    size = LAYOUTS[boards].size
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    fill = rng.random()
    board = [rng.choice("RBrb") if rng.random() < fill else EMPTY for _ in range(size)]
    hidden = {s: rng.choice(PREFERENCE) for s in range(size) if board[s] == EMPTY and rng.random() < 0.05}
    order = rng.sample(range(size), rng.randint(0, 10))
    return boards, board, hidden, rng.randrange(2), order


def looks_empty(board: list[str]) -> int:
    return board.count(EMPTY)


def disagreements(neighbours: tuple[tuple[int, ...], ...], board: list[str]) -> int:
    colour = {"R": 0, "r": 0, "B": 1, "b": 1}
    return sum(
        1
        for seat, around in enumerate(neighbours)
        for other in around
        if board[seat] in colour and board[other] in colour and colour[board[seat]] != colour[board[other]]
    )


@settings(max_examples=60, deadline=None)
@given(random_boards())
def test_cascades_end_with_every_step_lowering_the_potential(case):
    boards, board, hidden, claimer, order = case
    neighbours = LAYOUTS[boards].neighbours
    replay = list(board)
    working, still_hidden = list(board), dict(hidden)
    events = settle(neighbours, working, still_hidden, claimer, order, range(len(board)))
    potential = (looks_empty(replay), disagreements(neighbours, replay))
    for kind, seat, new in events:
        assert replay[seat] not in "rb"
        replay[seat] = new
        lowered = (looks_empty(replay), disagreements(neighbours, replay))
        assert lowered < potential, (kind, seat)
        potential = lowered
    assert replay == working
    # and the result is settled: nothing due, no hidden preference surrounded
    for seat, around in enumerate(neighbours):
        marks = [working[n] for n in around]
        if EMPTY in marks:
            continue
        assert seat not in still_hidden
        reds = sum(m in "Rr" for m in marks)
        blues = len(marks) - reds
        if working[seat] not in "rb" and reds != blues:
            assert working[seat] == ("R" if reds > blues else "B")


# -- secrecy and random games -------------------------------------------------------


def without_secrets(state: State, owners: tuple[int, ...]) -> State:
    """`state` with the unrevealed preferences of `owners` taken away (and,
    when both are hidden from the viewer, the cancelled seats of round 1)."""
    if state.in_setup:
        return replace(
            state,
            preferences=tuple(() if seat in owners and p is not None else p for seat, p in enumerate(state.preferences)),
        )
    secret = set(state.hidden())
    if len(owners) == 2 and not state.finished_rounds:
        secret |= state.cancelled()
    preferences = tuple(
        tuple(s for s in p if s not in secret) if seat in owners and p is not None else p
        for seat, p in enumerate(state.preferences)
    )
    return replace(state, preferences=preferences)


def attempt(state: State, seat: int, text: str) -> str:
    """'accepted', or the refusal the player would read."""
    try:
        GAME.play(state, seat, text)
    except IllegalMove as error:
        return error.message
    return "accepted"


def check_secrets(game: Game, state: object) -> None:
    assert isinstance(state, State)
    for viewer, owners in ((None, (RED, BLUE)), (RED, (BLUE,)), (BLUE, (RED,))):
        text = game.render(state, viewer)
        assert all(len(line) <= 72 for line in text.splitlines())
        blind = without_secrets(state, owners)
        assert text == game.render(blind, viewer)
        if viewer is None:
            continue
        assert game.legal_moves(state, viewer) == game.legal_moves(blind, viewer)
        if viewer in game.to_move(state) and not state.in_setup:
            secrets = {s for s in state.hidden() if s in (state.preferences[owners[0]] or ())}
            for seat in sorted(secrets)[:2]:
                label = state.layout.labels[seat]
                for text_sent in (label, f"{label} then {label}"):
                    assert attempt(state, viewer, text_sent) == attempt(blind, viewer, text_sent)


def too_many_preferences(state: object, seat: int) -> list[str]:
    """Texts a player should not be able to send: too many preferences."""
    assert isinstance(state, State)
    if not state.in_setup:
        return []
    labels = state.layout.labels
    return ["prefer " + ",".join(labels[: state.layout.preference_limit + 1])]


@pytest.mark.parametrize(("boards", "examples"), [("upper", 12), ("lower", 8), ("both", 6)])
def test_random_games(boards: str, examples: int):
    @settings(max_examples=examples, deadline=None)
    @given(seed=st.integers(0, 2**32 - 1))
    def play(seed: int) -> None:
        check_random_game(GAME, {"boards": boards}, seed, extra_refused=too_many_preferences, check_views=check_secrets)

    play()


def test_random_games_with_many_preferences_reveal_nothing():
    """Random legal preference sets of every size, then random claims."""
    for boards in ("upper", "lower", "both"):
        rng = random.Random(boards)
        for _ in range(2):
            state = GAME.new({"boards": boards}, PLAYERS)
            labels = state.layout.labels
            for seat in (BLUE, RED):
                limit = state.layout.preference_limit
                chosen = rng.sample(labels, rng.randint(0, limit))
                blue_preferences = state.preferences[BLUE]
                if seat == RED and blue_preferences:
                    shared = labels[blue_preferences[0]]  # so that one pair cancels
                    chosen = ([shared] + [label for label in chosen if label != shared])[:limit]
                state = GAME.play(state, seat, "prefer " + (",".join(chosen) or "none"))
            while GAME.outcome(state) is None:
                check_secrets(GAME, state)
                (seat,) = GAME.to_move(state)
                state = GAME.play(state, seat, rng.choice(GAME.legal_moves(state, seat)))
