"""The drawing of Majority and Psychomachia (issue 37): the marks of a
position played with the game's moves, the last move, the tricks beside
the rows and under the columns, the tallies, the text board laid out from
the drawing alone, and the hidden stones, which only their owner's
drawing holds."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from games.majority import Majority, MajorityState, Psychomachia
from games.majority.moves import Reveal
from games.majority.rules import geometry
from pbmserv.gamekit import Drawing, Ink, Kind, Mark, Seat, Tally

GAME = Majority()
PSYCHE = Psychomachia()
PLAYERS = ["alice", "bob"]
WHITE, BLACK = 0, 1
VIEWERS = (None, WHITE, BLACK)


def run(state: MajorityState, *moves: str) -> MajorityState:
    for move in moves:
        (seat,) = GAME.to_move(state)
        state = GAME.play(state, seat, move)
    return state


def hidden(white: str, black: str, size: int = 6, stones: int = 6) -> MajorityState:
    state = PSYCHE.new({"size": str(size), "stones": str(stones)}, PLAYERS)
    state = PSYCHE.play(state, BLACK, f"hide {black}")
    return PSYCHE.play(state, WHITE, f"hide {white}")


def cell(label: str) -> tuple[int, int]:
    return geometry(6).grid.parse(label)


def marks(drawing: Drawing) -> dict[str, tuple[Mark, ...]]:
    """The drawing's marks by square label."""
    (panel,) = drawing.panels
    return {panel.grid.label(where): layers for where, layers in panel.marks.items()}


def stone(seat: int, last: bool = False) -> tuple[Mark, ...]:
    return (Mark(Kind.STONE, "WB"[seat], seat, last),)


def hidden_stone(seat: int, last: bool = False) -> tuple[Mark, ...]:
    return (Mark(Kind.HIDDEN, "wb"[seat], seat, last),)


# -- the position ------------------------------------------------------------------------
def test_a_new_board_has_no_marks_and_names_its_seats():
    state = GAME.new({"size": "6"}, PLAYERS)
    drawing = GAME.draw(state, None)
    (panel,) = drawing.panels
    assert panel.marks == {} and panel.row_marks == {} and panel.column_marks == {}
    assert panel.chequered and panel.grid == geometry(6).grid
    assert drawing.seats == (Seat("alice", "White", "W", Ink.WHITE), Seat("bob", "Black", "B", Ink.BLACK))
    assert drawing.last_move == ""
    assert drawing.title == "Majority, 6x6: alice (White) against bob (Black), alice to move"


def test_every_stone_is_a_mark_and_the_last_one_says_so():
    state = run(GAME.new({"size": "6"}, PLAYERS), "a1", "b1", "c3", "c6")
    for viewer in VIEWERS:
        drawing = GAME.draw(state, viewer)
        assert marks(drawing) == {"a1": stone(WHITE), "b1": stone(BLACK), "c3": stone(WHITE), "c6": stone(BLACK, last=True)}
        assert drawing.last_move == "bob c6"
        assert drawing.title.endswith("alice to move")
    # the text board: `<` after the last stone, empty squares by colour
    board = GAME.render(state, None).splitlines()
    assert board[1] == "6 . : B<: . : 6  ."
    assert board[6] == "1 W B : . : . 1  ."


def test_tricks_won_stand_beside_their_row_and_under_their_column():
    state = run(GAME.new({"size": "6", "stones": "8"}, PLAYERS), "a1", "b1", "c1", "b3", "e1", "b5")
    (panel,) = GAME.draw(state, None).panels
    assert panel.row_marks == {0: Mark(Kind.STONE, "W", WHITE)}  # row 1: a1, c1, e1
    assert panel.column_marks == {1: Mark(Kind.STONE, "B", BLACK)}  # column b: b1, b3, b5
    tally = GAME.draw(state, None).tally
    assert tally == Tally(
        columns=("alice (W)", "bob (B)"),
        rows=(("Stones left", ("5", "5")), ("Tricks won", ("1", "1")), ("Points now", ("2.5", "1")), ("If it ended now", ("5.5", "3"))),
    )


def test_the_finished_board_awards_every_trick_and_says_who_won():
    state = run(GAME.new({"size": "6", "stones": "1"}, PLAYERS), "a1", "b1")
    drawing = GAME.draw(state, None)
    (panel,) = drawing.panels
    # row 1 holds one stone each: nobody's; column a is White's, column b Black's
    assert panel.row_marks == {}
    assert panel.column_marks == {0: Mark(Kind.STONE, "W", WHITE), 1: Mark(Kind.STONE, "B", BLACK)}
    assert drawing.tally is not None and drawing.tally.rows[-1] == ("Final points", ("1.5", "1"))
    assert drawing.title == "Majority, 6x6: alice (White) against bob (Black), alice won 1.5 points to 1"


# -- hidden stones ------------------------------------------------------------------------
def test_a_hidden_stone_is_in_its_owners_drawing_only():
    state = run(hidden("c1", "d5"), "a1", "b1")
    assert marks(PSYCHE.draw(state, WHITE))["c1"] == hidden_stone(WHITE)
    assert marks(PSYCHE.draw(state, BLACK))["d5"] == hidden_stone(BLACK)
    assert "d5" not in marks(PSYCHE.draw(state, WHITE)) and "c1" not in marks(PSYCHE.draw(state, BLACK))
    public = PSYCHE.draw(state, None)
    assert set(marks(public)) == {"a1", "b1"}
    assert "c1" not in repr(public) and "d5" not in repr(public)


def test_hiding_is_the_last_move_only_for_the_one_who_hid():
    state = hidden("c1", "d5")  # alice hid last
    assert marks(PSYCHE.draw(state, WHITE)) == {"c1": hidden_stone(WHITE, last=True)}
    assert PSYCHE.draw(state, WHITE).last_move == "alice hide c1"
    for viewer in (None, BLACK):
        assert PSYCHE.draw(state, viewer).last_move == "alice (secret)"
        assert "c1" not in marks(PSYCHE.draw(state, viewer))
    # the text board marks no hidden stone with `<`
    assert "w<" not in PSYCHE.render(state, WHITE)


def test_a_trick_completed_in_secret_shows_to_its_owner_only_until_revealed():
    state = run(hidden("c1", "d5"), "a1", "b1", "e1")  # with c1 alice holds row 1 once she reveals
    assert PSYCHE.draw(state, WHITE).panels[0].row_marks == {0: Mark(Kind.HIDDEN, "w", WHITE)}
    assert PSYCHE.draw(state, None).panels[0].row_marks == {}
    assert PSYCHE.draw(state, BLACK).panels[0].row_marks == {}
    # bob completes row 1 too: his now, unless alice reveals by her next move
    contested = run(state, "d1", "a3", "f1")
    assert PSYCHE.draw(contested, WHITE).panels[0].row_marks == {0: Mark(Kind.HIDDEN, "!", WHITE)}
    assert PSYCHE.draw(contested, None).panels[0].row_marks == {0: Mark(Kind.STONE, "B", BLACK)}
    revealed = run(contested, "reveal")
    for viewer in VIEWERS:
        drawing = PSYCHE.draw(revealed, viewer)
        assert drawing.panels[0].row_marks == {0: Mark(Kind.STONE, "W", WHITE)}
        assert marks(drawing)["c1"] == stone(WHITE, last=True)  # a reveal alone: the stone it showed
        assert drawing.last_move == "alice reveal"


def test_a_reveal_with_a_stone_marks_the_stone_placed_as_last():
    state = run(hidden("c1", "d5"), "a1", "b1", "reveal,e1")
    for viewer in VIEWERS:
        drawing = PSYCHE.draw(state, viewer)
        assert marks(drawing)["c1"] == stone(WHITE) and marks(drawing)["e1"] == stone(WHITE, last=True)
        assert drawing.last_move == "alice reveal,e1"
    assert PSYCHE.render(state, None).splitlines()[6] == "1 W B W . W<. 1  W"


def test_the_set_up_title_names_who_still_hides():
    state = PSYCHE.new({"size": "8"}, PLAYERS)
    assert PSYCHE.draw(state, None).title == "Psychomachia, 8x8: alice (White) against bob (Black), alice and bob to hide a stone"
    state = PSYCHE.play(state, WHITE, "hide e5")
    assert PSYCHE.draw(state, BLACK).title.endswith("bob to hide a stone")


def twin_games(size: int, owner: int, squares: tuple[int, int], owner_hides_first: bool, seed: int):
    """Pairs of Psychomachia states, move after move, that differ only in
    where `owner` hid their stone (`squares`): the same moves played on
    both, never on either square, and the owner never reveals."""
    rng = random.Random(seed)
    other = 1 - owner
    twins = [PSYCHE.new({"size": str(size)}, PLAYERS) for _ in squares]
    other_square = rng.choice(geometry(size).side_cells[other])
    order = (owner, other) if owner_hides_first else (other, owner)
    for seat in order:
        twins = [
            PSYCHE.play(state, seat, f"hide {geometry(size).labels[square if seat == owner else other_square]}")
            for state, square in zip(twins, squares)
        ]
        yield twins[0], twins[1]
    while True:
        (seat,) = PSYCHE.to_move(twins[0])
        moves = [
            move
            for move in PSYCHE.moves(twins[0], seat)
            if getattr(move, "square", None) not in squares and not (seat == owner and isinstance(move, Reveal))
        ]
        move = rng.choice(moves)
        twins = [PSYCHE.apply(state, seat, move) for state in twins]
        if twins[0].over:  # the final reveal shows every hidden stone
            return
        yield twins[0], twins[1]


@settings(max_examples=12, deadline=None)
@given(
    size=st.sampled_from((6, 8, 10)),
    owner=st.sampled_from((WHITE, BLACK)),
    owner_hides_first=st.booleans(),
    picks=st.tuples(st.integers(0, 10**6), st.integers(0, 10**6)),
    seed=st.integers(0, 10**6),
)
def test_twins_that_differ_only_in_a_hidden_stone_look_alike_to_everyone_but_its_owner(
    size, owner, owner_hides_first, picks, seed
):
    side_cells = geometry(size).side_cells[owner]
    first = side_cells[picks[0] % len(side_cells)]
    second = side_cells[(picks[0] + 1 + picks[1] % (len(side_cells) - 1)) % len(side_cells)]
    cells = [(square % size, square // size) for square in (first, second)]
    glyph = "wb"[owner]
    for one, two in twin_games(size, owner, (first, second), owner_hides_first, seed):
        for viewer in (None, 1 - owner):
            assert PSYCHE.draw(one, viewer) == PSYCHE.draw(two, viewer)
            assert PSYCHE.render(one, viewer) == PSYCHE.render(two, viewer)
        for state, where in zip((one, two), cells):
            assert where not in PSYCHE.draw(state, None).panels[0].marks
            if state.hidden[owner] is not None:
                (panel,) = PSYCHE.draw(state, owner).panels
                hid_last = state.last == (owner, "hide", state.hidden[owner])
                assert panel.top(where) == Mark(Kind.HIDDEN, glyph, owner, last=hid_last)


# -- the text board from the drawing ---------------------------------------------------------
def random_states(game: Majority, seed: int):
    rng = random.Random(seed)
    size = rng.choice((6, 8, 10, 12, 14))
    state = game.new({"size": str(size), "stones": str(rng.randint(1, 12))}, PLAYERS)
    yield state
    while seats := sorted(game.to_move(state)):
        seat = rng.choice(seats)
        state = game.apply(state, seat, rng.choice(game.moves(state, seat)))
        yield state


def test_the_text_board_is_the_text_of_the_drawing_and_shows_its_marks():
    for game in (GAME, PSYCHE):
        for seed in range(6):
            for state in random_states(game, seed):
                for viewer in VIEWERS:
                    drawing = game.draw(state, viewer)
                    text = game.text(drawing)
                    assert text == game.render(state, viewer)
                    (panel,) = drawing.panels
                    grid = geometry(state.size).grid
                    assert panel.grid is grid
                    size, margin = state.size, len(str(state.size))
                    for line, row in zip(text.splitlines()[1 : size + 1], grid.display_rows()):
                        for file, where in enumerate(row):
                            printed = line[margin + 1 + 2 * file : margin + 3 + 2 * file].rstrip()
                            top = panel.top(where)
                            if top is None:
                                assert printed == (":" if grid.is_dark(where) else ".")
                            else:
                                last = top.last and top.kind is Kind.STONE
                                assert printed == top.glyph + ("<" if last else "")
                        beside = panel.row_marks.get(row[0][1])
                        assert line.split()[-1] == ("." if beside is None else beside.glyph)
                    assert all(note in text for note in drawing.notes)
