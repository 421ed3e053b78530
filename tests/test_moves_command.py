"""`GAME moves board [userid password]`: the parser, the grouping of the
list, and the password kept out of what is quoted."""

from __future__ import annotations

import pytest

from pbmserv.gamekit import get_game
from pbmserv.protocol import parse_command, parse_request
from pbmserv.protocol.commands import Moves
from pbmserv.protocol.errors import BadArgument, MissingArgument, ParseError
from pbmserv.service.commands.legal import MOST_LINES, compact, moves_lines

GAMES = ("majorities", "psychomachia", "toy")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("majorities moves 101", Moves("majorities", 101)),
        ("Majorities MOVES 7 Alice Secret1", Moves("majorities", 7, "alice", "Secret1")),
    ],
)
def test_moves_is_read(text: str, expected: Moves) -> None:
    assert parse_command(text, GAMES) == expected


@pytest.mark.parametrize(
    ("text", "error", "says"),
    [
        ("toy moves", MissingArgument, "needs the board number"),
        ("toy moves x1", BadArgument, "not a board number"),
        ("toy moves 101 alice", MissingArgument, "no password"),
        ("toy moves 101 alice pw more", BadArgument, "'more' is one word too many"),
        ("toy moves 101 al!ce pw", BadArgument, "userid"),
    ],
)
def test_bad_moves_lines_explain(text: str, error: type[ParseError], says: str) -> None:
    with pytest.raises(error) as raised:
        parse_command(text, GAMES)
    assert says in raised.value.message
    assert "toy moves board [userid password]" in raised.value.fix


def test_the_password_of_moves_is_masked_and_none_is_not_a_password() -> None:
    assert parse_request("toy moves 101 alice Secret1", "", GAMES).passwords == ("Secret1",)
    assert parse_request("toy moves 101", "", GAMES).passwords == ()
    # a line that could not be read still has its probable password masked
    assert "Secret1" in parse_request("toy moves 101 alice Secret1 x", "", GAMES).passwords


def test_cells_are_grouped_by_their_letters_numbers_in_order() -> None:
    assert compact(["b10", "a3", "a1", "reveal", "b2"]) == ["  reveal", "  a: 1 3", "  b: 2 10"]


def test_moves_of_several_words_are_grouped_by_the_first() -> None:
    assert compact(["hide c1", "hide a2", "prefer none", "prefer U:b1", "prefer U:b2"]) == [
        "  hide ...", "    a: 2", "    c: 1", "  prefer ...", "    none", "    U:b: 1 2",
    ]


def test_every_pair_of_some_cells_is_listed_once_as_any_two() -> None:
    game = get_game("majorities")
    state = game.new({}, ["alice", "bob"])
    state = game.play(state, 0, "e5")
    legal = game.legal_moves(state, 1)
    lines = compact(legal)
    assert lines[0] == f"  any two of these, such as {legal[0]}:"
    assert "e5" not in legal[0] and len(lines) == 10  # 9 rows of cells
    assert "    e: 1 2 3 4 7 9" in lines  # e5 taken, e6 and e8 dead


def test_pairs_that_are_not_every_pair_are_listed_as_they_are() -> None:
    assert compact(["a1,a2", "a1,a3"]) == ["  a1,a2, a1,a3"]


def test_a_list_too_long_is_cut_saying_how_much_is_left_out() -> None:
    game = get_game("plurality")
    state = game.new({}, ["alice", "bob"])
    lines = moves_lines(game.legal_moves(state, 0))
    assert len(lines) == MOST_LINES + 1
    assert lines[-1].startswith("  ... and ") and lines[-1].endswith("more lines, not listed here.")
    assert all(len(line) <= 72 for line in lines)
