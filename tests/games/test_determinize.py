"""`Game.determinize` (issue 20, fair bots): a whole state drawn from what
one seat can know. The opponent's secret is drawn, never read: states that
differ only in it give the same draws; a draw looks the same to the seat
as the real state, plays on to the end, keeps the seat's own secrets, and
every possibility the seat cannot rule out comes up about equally often."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace
from itertools import combinations
from typing import Any

import pytest

from games.majority import MajorityState, Psychomachia
from games.majority.rules import geometry
from games.majority.state import EMPTY as NO_STONE
from games.majority.state import STONE
from games.parliament import Parliament
from games.parliament.cascade import EMPTY
from games.parliament.state import State
from pbmserv.gamekit import Game, get_game

PSYCHE = Psychomachia()
PARLIAMENT = Parliament()
PLAYERS = ["alice", "bob"]
WHITE, BLACK = 0, 1
RED, BLUE = 0, 1


def play_out(game: Game, state: Any, rng: random.Random) -> Any:
    """Random legal moves until the game is over."""
    while movers := game.to_move(state):
        seat = rng.choice(sorted(movers))
        state = game.play(state, seat, rng.choice(game.legal_moves(state, seat)))
    assert game.outcome(state) is not None
    return state


def test_games_without_secrets_give_the_state_itself() -> None:
    rng = random.Random(1)
    for name in ("majorities", "majority", "plurality", "synch"):
        game = get_game(name)
        state = game.new({}, PLAYERS)
        assert game.determinize(state, 0, rng) is state


# -- psychomachia -----------------------------------------------------------------------
def psyche(white_hides: str, black_hides: str, *moves: str, stones: int = 8) -> MajorityState:
    state = PSYCHE.new({"size": "6", "stones": str(stones)}, PLAYERS)
    state = PSYCHE.play(state, BLACK, f"hide {black_hides}")
    state = PSYCHE.play(state, WHITE, f"hide {white_hides}")
    for move in moves:
        (seat,) = PSYCHE.to_move(state)
        state = PSYCHE.play(state, seat, move)
    return state


def twin_psyche_games(rng: random.Random, viewer: int) -> tuple[MajorityState, MajorityState]:
    """Two games with the same public moves whose only difference is where
    the viewer's opponent hid their stone; the opponent never reveals."""
    other = 1 - viewer
    geo = geometry(6)
    own, first, second = rng.choice(geo.side_cells[viewer]), *rng.sample(geo.side_cells[other], 2)
    hides = [(own, first), (own, second)] if viewer == WHITE else [(first, own), (second, own)]
    games = [psyche(geo.labels[white], geo.labels[black]) for white, black in hides]
    for _ in range(rng.randrange(16)):
        (mover,) = PSYCHE.to_move(games[0])
        moves = [m for m in PSYCHE.legal_moves(games[0], mover) if m not in (geo.labels[first], geo.labels[second])]
        if mover == other:
            moves = [m for m in moves if m != "reveal"]
        move = rng.choice(moves)
        games = [PSYCHE.play(game, mover, move) for game in games]
    return games[0], games[1]


@pytest.mark.parametrize("viewer", [WHITE, BLACK])
def test_psychomachia_draws_never_depend_on_the_opponent_s_real_square(viewer: int) -> None:
    rng = random.Random(20 + viewer)
    for _ in range(60):
        first, second = twin_psyche_games(rng, viewer)
        assert first != second and PSYCHE.render(first, viewer) == PSYCHE.render(second, viewer)
        for seed in range(5):
            drawn = PSYCHE.determinize(first, viewer, random.Random(seed))
            assert drawn == PSYCHE.determinize(second, viewer, random.Random(seed))


def test_a_psychomachia_draw_looks_the_same_to_the_seat_and_plays_to_the_end() -> None:
    rng = random.Random(5)
    for _ in range(40):
        viewer = rng.choice([WHITE, BLACK])
        state, _ = twin_psyche_games(rng, viewer)
        other = 1 - viewer
        drawn = PSYCHE.determinize(state, viewer, rng)
        assert PSYCHE.render(drawn, viewer) == PSYCHE.render(state, viewer)
        square = drawn.hidden[other]
        assert square is not None and drawn.board[square] == NO_STONE
        assert geometry(6).sides[square] == other
        # the seat's own stone and completions are untouched
        assert drawn.hidden[viewer] == state.hidden[viewer]
        assert drawn.completed_at[viewer] == state.completed_at[viewer]
        assert drawn.revealed_at == state.revealed_at
        # the drawn stone completes exactly the lines it fills up
        geo = geometry(6)
        for line in geo.lines_through[square]:
            full = drawn.board[geo.line_slices[line]].count(STONE[other]) + 1 == 3
            assert (drawn.completed_at[other][line] is not None) == full
        finished = play_out(PSYCHE, drawn, rng)
        assert PSYCHE.render(finished, None)  # the final reveal renders


def test_a_draw_on_the_real_square_gives_back_the_real_state() -> None:
    # alice completes row 1 with her hidden a1 on her last stone, e1
    state = psyche("a1", "d5", "c1", "b1", "e1")
    assert state.completed_at[WHITE][0] == 2
    hits = [d for seed in range(200) if (d := PSYCHE.determinize(state, BLACK, random.Random(seed))).hidden[WHITE] == 0]
    assert hits and all(drawn == state for drawn in hits)


def test_psychomachia_draws_every_possible_square_about_equally() -> None:
    state = psyche("a1", "d5", "c1", "b1", "e1", "d1", "c3")
    empty = [i for i in geometry(6).side_cells[WHITE] if state.board[i] == NO_STONE]
    assert len(empty) == 15
    rng = random.Random(9)
    counts = Counter(PSYCHE.determinize(state, BLACK, rng).hidden[WHITE] for _ in range(300 * len(empty)))
    assert set(counts) == set(empty)
    assert all(200 < count < 400 for count in counts.values())


def test_psychomachia_setup_and_revealed_stones() -> None:
    rng = random.Random(3)
    state = PSYCHE.new({"size": "6"}, PLAYERS)
    only_black = PSYCHE.play(state, BLACK, "hide d5")
    # White has not hidden: nothing to draw for Black; for White, Black's stone anywhere light
    assert PSYCHE.determinize(only_black, BLACK, rng) is only_black
    squares = {PSYCHE.determinize(only_black, WHITE, rng).hidden[BLACK] for _ in range(2000)}
    assert squares == set(geometry(6).side_cells[BLACK])
    drawn = PSYCHE.determinize(only_black, WHITE, rng)
    assert PSYCHE.render(drawn, WHITE) == PSYCHE.render(only_black, WHITE)
    play_out(PSYCHE, PSYCHE.play(drawn, WHITE, "hide c1"), rng)
    revealed = psyche("a1", "d5", "reveal,c1")
    assert PSYCHE.determinize(revealed, BLACK, rng) is revealed


# -- parliament -------------------------------------------------------------------------
def parliament(boards: str, red: str, blue: str) -> State:
    state = PARLIAMENT.new({"boards": boards}, PLAYERS)
    state = PARLIAMENT.play(state, BLUE, blue)
    return PARLIAMENT.play(state, RED, red)


def prefer(state: State, seats: list[int]) -> str:
    return "prefer " + (",".join(state.layout.shown[s] for s in seats) if seats else "none")


def twin_parliaments(rng: random.Random, viewer: int, claims: int) -> tuple[State, State]:
    """Two Upper-chamber games with the same claims whose only difference
    is the viewer's opponent's preferences, still hidden in both."""
    base = PARLIAMENT.new({"boards": "upper"}, PLAYERS)
    seats = rng.sample(range(base.layout.size), 9)
    own, first, second = seats[:3], seats[3:6], seats[6 : 6 + rng.randrange(4)]
    games = []
    for theirs in (first, second):
        red, blue = (own, theirs) if viewer == RED else (theirs, own)
        games.append(parliament("upper", prefer(base, red), prefer(base, blue)))
    for _ in range(claims):
        mover = games[0].next_seat
        moves = [m for m in PARLIAMENT.legal_moves(games[0], mover) if base.layout.parse(m) not in first + second]
        move = rng.choice(moves)
        after = [PARLIAMENT.play(game, mover, move) for game in games]
        if PARLIAMENT.render(after[0], viewer) != PARLIAMENT.render(after[1], viewer):
            break  # a hidden preference was surrounded: the two games part
        games = after
    return games[0], games[1]


@pytest.mark.parametrize("viewer", [RED, BLUE])
def test_parliament_draws_never_depend_on_the_opponent_s_real_preferences(viewer: int) -> None:
    rng = random.Random(40 + viewer)
    for _ in range(40):
        first, second = twin_parliaments(rng, viewer, rng.randrange(60))
        assert first.preferences != second.preferences
        for seed in range(5):
            drawn = PARLIAMENT.determinize(first, viewer, random.Random(seed))
            assert drawn == PARLIAMENT.determinize(second, viewer, random.Random(seed))


def could_be_hidden(state: State, viewer: int) -> list[int]:
    """Seats that may hold the opponent's hidden preference, as the rules say."""
    own = set(state.live_preferences(viewer))
    neighbours = state.layout.neighbours
    return [
        s
        for s, mark in enumerate(state.board)
        if mark == EMPTY and s not in own and any(state.board[n] == EMPTY for n in neighbours[s])
    ]


@pytest.mark.parametrize("boards", ["upper", "lower", "both"])
def test_a_parliament_draw_looks_the_same_to_the_seat_and_plays_to_the_end(boards: str) -> None:
    rng = random.Random(boards)
    size = PARLIAMENT.new({"boards": boards}, PLAYERS).layout.size
    for _ in range(6):
        base = PARLIAMENT.new({"boards": boards}, PLAYERS)
        state = parliament(boards, prefer(base, rng.sample(range(size), 3)), prefer(base, rng.sample(range(size), 3)))
        for _ in range(rng.randrange(size - 10)):
            if not PARLIAMENT.to_move(state):
                break
            state = PARLIAMENT.play(state, state.next_seat, rng.choice(PARLIAMENT.legal_moves(state, state.next_seat)))
        viewer = rng.choice([RED, BLUE])
        other = 1 - viewer
        drawn = PARLIAMENT.determinize(state, viewer, rng)
        assert PARLIAMENT.render(drawn, viewer) == PARLIAMENT.render(state, viewer)
        assert drawn.preferences[viewer] == state.preferences[viewer]
        hidden = set(drawn.live_preferences(other)) & {s for s, mark in enumerate(drawn.board) if mark == EMPTY}
        assert hidden <= set(could_be_hidden(state, viewer))
        assert len(drawn.preferences[other] or ()) <= drawn.layout.preference_limit
        play_out(PARLIAMENT, drawn, rng)


def late_parliament() -> State:
    """An Upper-chamber game where Blue's preferences hide among a few seats."""
    rng = random.Random(77)
    while True:
        state = parliament("upper", "prefer a2", "prefer c3,h6,e8")
        while PARLIAMENT.to_move(state) and len(could_be_hidden(state, RED)) > 5:
            hidden = set(state.hidden())
            moves = [m for m in PARLIAMENT.legal_moves(state, state.next_seat) if state.layout.parse(m) not in hidden]
            state = PARLIAMENT.play(state, state.next_seat, rng.choice(moves))
        if PARLIAMENT.to_move(state) and any(s in state.hidden() for s in state.preferences[BLUE] or ()):
            return state


def test_parliament_draws_every_possible_choice_about_equally() -> None:
    state = late_parliament()
    seats = could_be_hidden(state, RED)
    known = [s for s in state.preferences[BLUE] or () if state.board[s] != EMPTY]
    looks_empty = [s for s, mark in enumerate(state.board) if mark == EMPTY and s not in state.live_preferences(RED)]
    most = min(3 - len(known), len(looks_empty) - 1)
    choices = [frozenset(c) for k in range(most + 1) for c in combinations(seats, k)]
    rng = random.Random(11)
    draws = 200 * len(choices)
    counts = Counter(
        frozenset(PARLIAMENT.determinize(state, RED, rng).preferences[BLUE] or ()) - frozenset(known)
        for _ in range(draws)
    )
    assert set(counts) == set(choices)
    assert all(120 < count < 280 for count in counts.values())
    real = frozenset(state.hidden()) & frozenset(state.preferences[BLUE] or ())
    assert real in counts


def test_parliament_setup_draws_any_choice_and_cancels_nothing_known() -> None:
    rng = random.Random(8)
    state = PARLIAMENT.play(PARLIAMENT.new({"boards": "upper"}, PLAYERS), BLUE, "prefer c3,h6,e8")
    assert PARLIAMENT.determinize(state, BLUE, rng) is state  # Red has not chosen: nothing to draw
    sizes = Counter(len(PARLIAMENT.determinize(state, RED, rng).preferences[BLUE] or ()) for _ in range(500))
    assert set(sizes) <= {0, 1, 2, 3} and sizes[3] > 400  # most choices name three seats
    drawn = PARLIAMENT.determinize(state, RED, rng)
    assert PARLIAMENT.render(drawn, RED) == PARLIAMENT.render(state, RED)
    play_out(PARLIAMENT, PARLIAMENT.play(drawn, RED, "prefer a2"), rng)
    # a hung round puts every preference in place: nothing is secret any more
    hung = replace(parliament("upper", "prefer a2", "prefer c3"), finished_rounds=("R" * 38 + "B" * 38,))
    assert PARLIAMENT.determinize(hung, RED, rng) is hung
