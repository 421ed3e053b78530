"""`Game.tally` (issue 20, bot strength): each seat's standing as the public
board's running tallies show it. Even at the start, on the winner's side at
the end, and blind to a hidden stone nobody else can see. And `Game.judge`,
the bots' reading of a position: the tally, but Plurality's and
Parliament's own estimates and Psychomachia's tally with the hidden
stones revealed."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import pytest

from games.majority import MajorityState, Psychomachia
from games.majority.rules import geometry
from games.parliament import Parliament
from games.plurality.board import layout_for
from pbmserv.gamekit import Game, get_game
from tests.games.test_majority import hidden as hidden_position
from tests.games.test_majority import run as hidden_run
from tests.games.test_parliament import EMPTY_UPPER, LOWER_RED, UPPER_RED, UPPER_TIE, changed, with_rows
from tests.games.test_parliament import position as parliament_position
from tests.games.test_plurality import position as plurality_position

PLAYERS = ["alice", "bob"]
PSYCHE = Psychomachia()
PLURALITY = get_game("plurality")
PARLIAMENT = Parliament()

OPTION_SETS: list[tuple[str, Mapping[str, str | None]]] = [
    ("majorities", {"size": "3"}),
    ("majorities", {"size": "5"}),
    ("majority", {"size": "6"}),
    ("majority", {}),
    ("psychomachia", {"size": "6"}),
    ("plurality", {"size": "13"}),
    ("plurality", {"board": "hex", "size": "5"}),
    ("parliament", {"boards": "upper"}),
    ("parliament", {"boards": "both"}),
    ("synch", {"size": "4"}),
    ("synch", {"size": "8", "order": "direction-first"}),
]


def ids(value: object) -> str:
    if isinstance(value, Mapping):
        return ",".join(f"{name}={option}" for name, option in value.items()) or "defaults"
    return str(value)


def played_out(game: Game, state: Any, rng: random.Random) -> Any:
    while movers := game.to_move(state):
        seat = rng.choice(sorted(movers))
        state = game.play(state, seat, rng.choice(game.legal_moves(state, seat)))
    return state


def handicap(word: str, state: Any) -> tuple[float, float]:
    """What the rules add to a side's score that the tally leaves out, so
    that a new game is even: White's half point in Majority, the komi in
    Plurality. Only with it added does the winner always lead the tally."""
    if word in ("majority", "psychomachia"):
        return 0.5, 0.0
    if word == "plurality":
        return 0.0, layout_for(state.board, state.size).komi
    return 0.0, 0.0


@pytest.mark.parametrize(("word", "options"), OPTION_SETS, ids=ids)
def test_a_new_game_is_even(word: str, options: Mapping[str, str | None]) -> None:
    game = get_game(word)
    tally = game.tally(game.new(options, PLAYERS))
    assert tally is not None and len(tally) == 2 and tally[0] == tally[1]


def test_a_tied_territory_that_goes_to_white_shows_at_once() -> None:
    # -ties=parity is the one option under which a new game is not even: the
    # empty 13x13 board is one tied territory of odd size, which is White's
    plurality = get_game("plurality")
    assert plurality.tally(plurality.new({"ties": "parity"}, PLAYERS)) == (0.0, 169.0)


@pytest.mark.parametrize(("word", "options"), OPTION_SETS, ids=ids)
def test_the_winner_leads_the_tally_at_the_end(word: str, options: Mapping[str, str | None]) -> None:
    game = get_game(word)
    rng = random.Random(5)
    for _ in range(3):
        state = played_out(game, game.new(options, PLAYERS), rng)
        outcome = game.outcome(state)
        tally = game.tally(state)
        assert outcome is not None and tally is not None
        if not outcome.winners:
            continue  # a drawn Synch or Parliament: nobody to lead
        (winner,) = outcome.winners
        extra = handicap(word, state)
        assert tally[winner] + extra[winner] > tally[1 - winner] + extra[1 - winner]
        if word in ("majority", "psychomachia", "plurality", "synch"):
            # there the tally is the game's own score, the handicap aside
            assert outcome.scores == (tally[0] + extra[0], tally[1] + extra[1])


def test_majorities_counts_lines_and_held_directions() -> None:
    majorities = get_game("majorities")
    state = majorities.new({"size": "3"}, PLAYERS)
    turns = [(0, "a1"), (1, "e1,e2"), (0, "a2,a3"), (1, "c1,d1"), (0, "b1,b3"), (1, "e3,d4")]
    for seat, move in turns:
        state = majorities.play(state, seat, move)
    # lines won, as the board's table shows them: Black 2+2+1, White 2+1+1, no direction held
    assert majorities.tally(state) == (5.0, 4.0)
    state = majorities.play(state, 0, "c2,c5")
    # Black takes a third line in every direction: 9 lines and 3 held directions of 5 lines
    assert majorities.tally(state) == (9.0 + 3 * 5, 4.0)


def twin_psyche_games(rng: random.Random, moves: int) -> tuple[MajorityState, MajorityState]:
    """Two games whose only difference is where Black hid their stone, not
    yet revealed; White's own hidden stone is revealed at some point."""
    geo = geometry(6)
    white_square = rng.choice(geo.side_cells[0])
    first, second = rng.sample(geo.side_cells[1], 2)
    games = []
    for black_square in (first, second):
        state = PSYCHE.new({"size": "6", "stones": "8"}, PLAYERS)
        state = PSYCHE.play(state, 1, f"hide {geo.labels[black_square]}")
        games.append(PSYCHE.play(state, 0, f"hide {geo.labels[white_square]}"))
    hidden = (geo.labels[first], geo.labels[second])
    for _ in range(moves):
        (mover,) = PSYCHE.to_move(games[0])
        legal = [m for m in PSYCHE.legal_moves(games[0], mover) if not any(label in m for label in hidden)]
        if mover == 1:
            legal = [m for m in legal if not m.startswith("reveal")]
        if not legal:
            break
        move = rng.choice(legal)
        games = [PSYCHE.play(game, mover, move) for game in games]
    return games[0], games[1]


def test_a_hidden_stone_never_moves_the_tally() -> None:
    rng = random.Random(11)
    for moves in range(16):
        one, other = twin_psyche_games(rng, moves)
        assert one != other
        assert PSYCHE.render(one, None) == PSYCHE.render(other, None)
        assert PSYCHE.tally(one) == PSYCHE.tally(other)


def test_a_revealed_hidden_stone_counts() -> None:
    state = PSYCHE.new({"size": "6", "stones": "8"}, PLAYERS)
    state = PSYCHE.play(state, 1, "hide b1")
    state = PSYCHE.play(state, 0, "hide a1")
    hidden = PSYCHE.tally(state)
    assert hidden == (0.0, 0.0)
    revealed = PSYCHE.tally(PSYCHE.play(state, 0, "reveal"))
    assert revealed[0] > revealed[1]  # White's stone now leads row 1 and file a


# -- Game.judge: how the bots read a position the tally reads badly -----------------


def test_every_game_is_judged_by_its_tally_but_those_with_an_estimate_of_their_own() -> None:
    rng = random.Random(3)
    for word, options in OPTION_SETS:
        game = get_game(word)
        state = game.new(options, PLAYERS)
        for _ in range(6):
            if not (movers := game.to_move(state)):
                break
            seat = min(movers)
            state = game.play(state, seat, rng.choice(game.legal_moves(state, seat)))
            if word not in ("plurality", "parliament", "psychomachia"):
                assert game.judge(state) == game.tally(state)


def test_psychomachia_judges_with_both_hidden_stones_revealed_now() -> None:
    state = hidden_position("a1", "b3", stones=8)
    assert PSYCHE.tally(state) == (0.0, 0.0)
    # each stone leads its row and its file: 1 point for each line
    assert PSYCHE.judge(state) == (2.0, 2.0)


def test_psychomachia_judges_a_hidden_completion_lost_once_its_owner_missed_the_deadline() -> None:
    # White completed row 1 in secret and Black in public after: White keeps
    # it by revealing at this turn's start, and loses it by placing without
    state = hidden_run(hidden_position("a1", "a6", stones=4), "c1", "b1", "e1", "d1", "c3", "f1")
    # row 1 is worth 4 to either: the trick and the other side's three stones on it
    assert PSYCHE.judge(state) == PSYCHE.judge(hidden_run(state, "reveal", "e3")) == (7.0, 4.0)
    assert PSYCHE.judge(hidden_run(state, "e3")) == (7.0 - 4, 4.0 + 4)


def test_plurality_splits_an_open_region_between_the_nearer_stones() -> None:
    # one region touching one stone of each side: neutral by the tally
    corners = plurality_position("a1", "n13")
    assert PLURALITY.tally(corners) == (0.0, 0.0)
    # the 13 points of the diagonal between are as near to both
    assert PLURALITY.judge(corners) == (77.0, 77.0)
    assert PLURALITY.judge(plurality_position("g7", "a1")) == (128.0, 20.0)
    assert PLURALITY.judge(PLURALITY.new({}, PLAYERS)) == (0.0, 0.0)


def test_plurality_judges_a_region_that_takes_no_drop_by_its_owner() -> None:
    # a1 and b1, closed off by a2 and b2 (Black) and c1 (White), are Black's,
    # though b1 is as near to c1 as to b2; the rest is open (Black's by the
    # tally, two stones to one) and split by nearness
    state = plurality_position("a2 b2", "c1")
    assert PLURALITY.tally(state) == (166.0, 0.0)
    assert PLURALITY.judge(state) == (24.0, 10.0)
    rng = random.Random(8)
    for options in ({"size": "13"}, {"board": "hex", "size": "5"}, {"ties": "parity"}):
        state = PLURALITY.new(options, PLAYERS)
        while (drops := PLURALITY.legal_moves(state, state.turn)) != ["pass"]:
            state = PLURALITY.play(state, state.turn, rng.choice(drops[:-1]))
        assert PLURALITY.judge(state) == PLURALITY.tally(state)  # nothing is open any more


def test_parliament_judges_a_filled_round_by_its_tally_and_an_empty_one_even() -> None:
    for boards, pictures in (
        ("upper", [UPPER_TIE]),
        ("upper", [UPPER_RED]),
        ("both", [UPPER_RED, LOWER_RED]),
    ):
        state = parliament_position(boards, *pictures)
        assert PARLIAMENT.judge(state) == PARLIAMENT.tally(state)
    assert PARLIAMENT.judge(PARLIAMENT.new({"boards": "upper"}, PLAYERS)) == (38.0, 38.0)
    # the Upper chamber counts twice, as in the tally
    assert PARLIAMENT.judge(PARLIAMENT.new({"boards": "both"}, PLAYERS)) == (151.0, 151.0)


def test_parliament_counts_the_open_seats_the_surroundings_lean_to() -> None:
    # rows 1-3 Red, the rest empty: row 4 touches three Red seats each, and
    # every seat left open goes either way with even chances
    state = parliament_position("upper", with_rows(EMPTY_UPPER, ("-RRRRRRRR-", "RRRRRRRRRR", "RRRRRRRRRR")))
    assert PARLIAMENT.tally(state) == (28.0, 0.0)
    assert PARLIAMENT.judge(state) == (55.875, 20.125)


def test_parliament_counts_a_hidden_preference_around_it_and_not_as_a_seat() -> None:
    # the judge reads the whole state it is given: the bots give it states
    # drawn from what their seat can see (Game.determinize)
    state = parliament_position("upper", changed(EMPTY_UPPER, e4="x"))
    assert PARLIAMENT.tally(state) == (0.0, 0.0)
    red, blue = PARLIAMENT.judge(state)
    assert red + blue == 75  # e4 is no seat
    assert red - blue == pytest.approx(2.1875)  # its eight neighbours lean Red


@pytest.mark.parametrize("boards", ["upper", "lower", "both"])
def test_parliament_shares_out_exactly_the_seats_in_play(boards: str) -> None:
    rng = random.Random(5)
    state = PARLIAMENT.new({"boards": boards}, PLAYERS)
    seats = 302 if boards == "both" else 76 if boards == "upper" else 150
    while movers := PARLIAMENT.to_move(state):
        seat = min(movers)
        state = PARLIAMENT.play(state, seat, rng.choice(PARLIAMENT.legal_moves(state, seat)))
        preferences = sum(len(state.live_preferences(player)) for player in (0, 1)) if not state.in_setup else 0
        doubled = sum(1 for s in range(76) if boards == "both" and any(s in state.live_preferences(p) for p in (0, 1)))
        assert sum(PARLIAMENT.judge(state)) == pytest.approx(seats - preferences - doubled)
