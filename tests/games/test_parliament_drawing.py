"""Parliament's drawing (issue 37): the marks of every seat as the viewer
may see them, the last turn's marks, the captions of a hung round, the
tallies, and that a seat's hidden preferences reach no other drawing."""

from __future__ import annotations

import random
from collections.abc import Iterator

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from games.parliament import Parliament
from games.parliament.cascade import EMPTY
from games.parliament.chambers import LAYOUTS
from games.parliament.state import State
from pbmserv.gamekit import Drawing, Game, Ink, Kind, Mark, Seat

GAME = Parliament()
PLAYERS = ["alice", "bob"]
RED, BLUE = 0, 1
SIDE_OF = {"R": RED, "B": BLUE, "r": RED, "b": BLUE}
KIND_OF = {"R": Kind.STONE, "B": Kind.STONE, "r": Kind.PREFERENCE, "b": Kind.PREFERENCE}


def upper(*rows: str, preferences: tuple[tuple[int, ...], tuple[int, ...]] = ((), ()), next_seat: int = RED) -> State:
    """The Upper chamber alone, its rows from the top as pictures ('.' an
    empty seat, R/B held, r/b a revealed preference; the cut corners
    written as anything), the rows not given empty."""
    layout = LAYOUTS["upper"]
    picture = list(rows) + ["." * 10] * (8 - len(rows))
    board = "".join(picture[rank][file] for file, rank in layout.chambers[0].grid.cells)
    return State(tuple(PLAYERS), "upper", preferences, board, next_seat=next_seat)


def seat(state: State, label: str) -> int:
    return state.layout.labels.index(label.lower())


def cell(state: State, label: str) -> tuple[int, int]:
    chamber = state.layout.chambers[state.layout.chamber_of[seat(state, label)]]
    return chamber.grid.parse(label.lower().split(":")[-1])


def expected_marks(state: State, viewer: int | None) -> dict[int, tuple[Mark, ...]]:
    """What each seat of the position now should show `viewer`, by seat
    index, worked out from the rules: every seat held or revealed, the
    viewer's own preferences while they are hidden, and the last turn's
    marks (those after a hung round's restart when a round ended hung)."""
    events = list(state.last_events)
    restart = [number for number, (kind, _, _) in enumerate(events) if kind == "round"]
    if restart:
        events = events[restart[0] + 1 :]
    claimed = events[0][1] if events and events[0][0] in ("claim", "revealed") else None
    changed = {s for _, s, _ in events}
    marks: dict[int, tuple[Mark, ...]] = {}
    for number, mark in enumerate(state.board):
        if mark != EMPTY:
            marks[number] = (Mark(KIND_OF[mark], mark, SIDE_OF[mark], number in changed),)
            if number == claimed:
                marks[number] += (Mark(Kind.MARKER, "<", state.last_claimer, True),)
    if viewer is not None:
        own = state.preferences[viewer] or () if state.in_setup else state.live_preferences(viewer)
        for number in own:
            if state.board[number] == EMPTY:
                marks[number] = (Mark(Kind.HIDDEN, "rb"[viewer], viewer),)
    return marks


def drawn_marks(state: State, drawing: Drawing) -> dict[int, tuple[Mark, ...]]:
    """The marks of the drawing's position now (its last panel per chamber), by seat index."""
    layout = state.layout
    panels = drawing.panels[-len(layout.chambers) :]
    return {
        layout.index[(number, c)]: layers for number, panel in enumerate(panels) for c, layers in panel.marks.items()
    }


def random_states(boards: str, seed: int) -> Iterator[State]:
    """Every state of one seeded random game, several preferences each."""
    rng = random.Random(seed)
    state = GAME.new({"boards": boards}, PLAYERS)
    yield state
    layout = state.layout
    for side in rng.sample((RED, BLUE), 2):
        chosen = sorted(rng.sample(range(layout.size), rng.randint(0, layout.preference_limit)))
        text = "prefer " + (",".join(layout.shown[s] for s in chosen) or "none")
        state = GAME.play(state, side, text)
        yield state
    while GAME.outcome(state) is None:
        (mover,) = GAME.to_move(state)
        state = GAME.play(state, mover, rng.choice(GAME.legal_moves(state, mover)))
        yield state


# -- what a claim shows ------------------------------------------------------


def test_the_claimed_seat_is_marked_claimed_last_and_a_flipped_seat_changed_last():
    # b1's surroundings are c1, a2, b2 and c2: Red's claim of c2 completes them, three Blue to one
    state = upper(".-B.......", "BB........")
    after = GAME.play(state, RED, "c2")
    assert after.board[seat(after, "b1")] == "B"
    (panel,) = GAME.draw(after, None).panels
    assert dict(panel.marks) == {
        cell(after, "c2"): (Mark(Kind.STONE, "R", RED, True), Mark(Kind.MARKER, "<", RED, True)),
        cell(after, "b1"): (Mark(Kind.STONE, "B", BLUE, True),),
        cell(after, "c1"): (Mark(Kind.STONE, "B", BLUE),),
        cell(after, "a2"): (Mark(Kind.STONE, "B", BLUE),),
        cell(after, "b2"): (Mark(Kind.STONE, "B", BLUE),),
    }
    assert panel.title == "Upper chamber (76 seats)"
    assert panel.grid is after.layout.chambers[0].grid


def test_claiming_a_hidden_preference_reveals_it_as_the_seat_claimed_last():
    state = upper(preferences=((), (seat(upper(), "e4"),)))
    after = GAME.play(state, RED, "e4")
    drawing = GAME.draw(after, None)
    # Blue's preference, under Red's marker: Red claimed it
    assert drawing.panels[0].marks == {
        cell(after, "e4"): (Mark(Kind.PREFERENCE, "b", BLUE, True), Mark(Kind.MARKER, "<", RED, True))
    }
    assert drawing.last_move == "alice (Red) claimed e4"


def test_a_hung_round_shows_its_final_position_then_the_new_round():
    tie = ["-RRRRRRRR-"] + ["RRRRRRRRRR"] * 3 + ["BBBBBBBBBB"] * 3 + ["-BBBBBBBB-"]
    state = upper(*tie[:2], "RRRR.RRRRR", *tie[3:])
    after = GAME.play(state, RED, "e3")
    drawing = GAME.draw(after, BLUE)
    hung, now = drawing.panels
    assert hung.title == now.title == "Upper chamber (76 seats)"
    assert len(hung.marks) == 76 and now.marks == {}
    assert hung.marks[cell(after, "e3")] == (Mark(Kind.STONE, "R", RED, True), Mark(Kind.MARKER, "<", RED, True))
    assert [c for c, layers in hung.marks.items() if layers[-1].last] == [cell(after, "e3")]
    assert drawing.header[-2:] == ("Round 1 ended hung. Its final position:", "Round 2 of at most 3:")
    assert drawing.title == "Parliament, round 2 of at most 3: alice (Red) against bob (Blue), alice to move"


def test_the_drawing_names_the_seats_tallies_and_position():
    state = GAME.play(GAME.play(GAME.new({}, PLAYERS), RED, "prefer none"), BLUE, "prefer none")
    state = GAME.play(GAME.play(state, RED, "U:c4"), BLUE, "L:h5")
    drawing = GAME.draw(state, None)
    assert drawing.seats == (Seat("alice", "Red", "R", Ink.RED), Seat("bob", "Blue", "B", Ink.BLUE))
    assert [panel.title for panel in drawing.panels] == ["Upper chamber (76 seats)", "Lower chamber (150 seats)"]
    assert drawing.tally is not None
    assert drawing.tally.columns == ("Upper", "Lower", "Both")
    assert drawing.tally.rows == (("alice (Red)", ("1", "0", "1")), ("bob (Blue)", ("0", "1", "1")))
    assert drawing.title == "Parliament, round 1 of at most 3: alice (Red) against bob (Blue), alice to move"
    assert drawing.last_move == "bob (Blue) claimed L:h5"
    assert drawing.header[-1] == "Round 1 of at most 3:"
    assert drawing.notes[-1].startswith("Next: alice (Red) claims one empty seat")


def test_before_the_first_claim_the_title_says_who_still_chooses():
    state = GAME.play(GAME.new({"boards": "upper"}, PLAYERS), BLUE, "prefer c4")
    drawing = GAME.draw(state, None)
    assert drawing.title == (
        "Parliament, before the first claim: alice (Red) against bob (Blue), preferences still to come from alice"
    )
    assert drawing.last_move == ""
    assert drawing.panels[0].marks == {}
    assert GAME.draw(state, BLUE).panels[0].marks == {cell(state, "c4"): (Mark(Kind.HIDDEN, "b", BLUE),)}


# -- every position of random games ---------------------------------------------


def test_marks_follow_the_board_and_the_last_turn_in_random_games():
    for boards, seed in (("upper", 1), ("lower", 2), ("both", 3)):
        for state in random_states(boards, seed):
            for viewer in (None, RED, BLUE):
                assert drawn_marks(state, GAME.draw(state, viewer)) == expected_marks(state, viewer)


def test_text_of_the_drawing_is_the_board_mail_for_every_viewer():
    assert type(GAME).render is Game.render
    for boards, seed in (("upper", 4), ("both", 5)):
        for state in random_states(boards, seed):
            for viewer in (None, RED, BLUE):
                assert GAME.text(GAME.draw(state, viewer)) == GAME.render(state, viewer)


# -- hidden preferences ------------------------------------------------------------

LOWER_SEATS = range(LAYOUTS["both"].chambers[1].first, LAYOUTS["both"].size)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.sampled_from(LOWER_SEATS), min_size=1, max_size=4, unique=True),
    st.lists(st.sampled_from(LOWER_SEATS), min_size=1, max_size=4, unique=True),
    st.lists(st.sampled_from(LOWER_SEATS), max_size=3, unique=True),
    st.integers(0, 2**32),
)
def test_hidden_preferences_reach_only_their_owners_drawing(first, second, blues, seed):
    """Twin games in which Red named different Lower seats, Blue the same
    (none of Red's), and the same claims in the Upper chamber, which leave
    the Lower as it is: the public and Blue see equal drawings, and Red
    sees their own preferences as hidden marks."""
    assume(set(first) != set(second) and not set(blues) & (set(first) | set(second)))
    layout = LAYOUTS["both"]
    upper_seats = range(layout.chambers[0].size)

    def play(reds: list[int]) -> State:
        rng = random.Random(seed)
        state = GAME.new({}, PLAYERS)
        state = GAME.play(state, BLUE, "prefer " + (",".join(layout.shown[s] for s in blues) or "none"))
        state = GAME.play(state, RED, "prefer " + ",".join(layout.shown[s] for s in reds))
        for _ in range(12):
            claim = rng.choice([s for s in upper_seats if state.board[s] == EMPTY])
            state = GAME.play(state, state.next_seat, layout.shown[claim])
        return state

    one, two = play(first), play(second)
    assert GAME.draw(one, None) == GAME.draw(two, None)
    assert GAME.draw(one, BLUE) == GAME.draw(two, BLUE)
    assert GAME.render(one, BLUE) == GAME.render(two, BLUE)
    for state, reds in ((one, first), (two, second)):
        lower = GAME.draw(state, RED).panels[1]
        hidden = {c: layers for c, layers in lower.marks.items() if layers[-1].kind is Kind.HIDDEN}
        assert hidden == {
            layout.chambers[1].grid.cells[s - layout.chambers[1].first]: (Mark(Kind.HIDDEN, "r", RED),) for s in reds
        }
        for viewer in (None, BLUE):
            for panel in GAME.draw(state, viewer).panels:
                assert all(layers[-1].seat != RED for layers in panel.marks.values() if layers[-1].kind is Kind.HIDDEN)
