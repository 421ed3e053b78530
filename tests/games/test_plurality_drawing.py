"""Plurality's drawing (issue 37): stones, the last drop and the territory
if the game ended now on square and hex boards, the tallies, and one
drawing for every viewer."""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping

from games.plurality import Plurality
from games.plurality.board import layout_for
from games.plurality.state import PluralityState, territories
from pbmserv.gamekit import Game, HexHexGrid, Ink, Kind, Mark, Seat, SquareGrid

GAME = Plurality()
PLAYERS = ["alice", "bob"]
BLACK, WHITE = 0, 1


def random_states(options: Mapping[str, str | None], seed: int) -> Iterator[PluralityState]:
    """Every state of one seeded random game, with a pass now and then."""
    rng = random.Random(seed)
    state = GAME.new(options, PLAYERS)
    yield state
    while GAME.outcome(state) is None:
        (mover,) = GAME.to_move(state)
        move = "pass" if rng.random() < 0.05 else rng.choice(GAME.legal_moves(state, mover))
        state = GAME.play(state, mover, move)
        yield state


def expected_marks(state: PluralityState) -> dict[tuple[int, int], tuple[Mark, ...]]:
    """Each cell's mark worked out from the rules: the stones (those of the
    last drop marked), and the empty regions a side owns."""
    layout = layout_for(state.board, state.size)
    dropped = set() if state.last_move in ("", "pass") else set(state.last_move.replace("*", "").split(","))
    marks: dict[tuple[int, int], tuple[Mark, ...]] = {}
    for index, cell in enumerate(layout.cells):
        for side, stones, glyph in ((BLACK, state.black, "X"), (WHITE, state.white, "O")):
            if stones >> index & 1:
                last = layout.labels[index] in dropped
                marks[cell] = (Mark(Kind.STONE, glyph, side, last),)
    for territory in territories(layout, state):
        if territory.owner is not None:
            for index in territory.cells:
                marks[layout.cells[index]] = (Mark(Kind.TERRITORY, "+-"[territory.owner], territory.owner),)
    return marks


def test_a_drop_shows_its_stones_as_the_last_move_and_the_territory_it_wins():
    state = GAME.play(GAME.new({}, PLAYERS), BLACK, "d4,e4,*e5")
    drawing = GAME.draw(state, None)
    (panel,) = drawing.panels
    grid = panel.grid
    assert isinstance(grid, SquareGrid) and (grid.width, grid.height) == (13, 13)
    assert panel.marks[grid.parse("d4")] == (Mark(Kind.STONE, "X", BLACK, True),)
    assert panel.marks[grid.parse("e4")] == (Mark(Kind.STONE, "X", BLACK, True),)
    assert panel.marks[grid.parse("e5")] == (Mark(Kind.STONE, "O", WHITE, True),)
    # the rest of the board is one region touching two Black stones and one White
    rest = {c: layers for c, layers in panel.marks.items() if layers[-1].kind is Kind.TERRITORY}
    assert len(rest) == 169 - 3 and set(rest.values()) == {(Mark(Kind.TERRITORY, "+", BLACK),)}
    assert drawing.seats == (Seat("alice", "Black", "X", Ink.BLACK), Seat("bob", "White", "O", Ink.WHITE))
    assert drawing.tally is not None
    assert drawing.tally.columns == ("territory", "komi", "total")
    assert drawing.tally.rows == (("alice (Black)", ("166", "0", "166")), ("bob (White)", ("0", "5.5", "5.5")))
    assert drawing.last_move == f"alice (Black) dropped {state.last_move}"
    assert drawing.title == "Plurality on a 13x13 board: alice (Black) against bob (White), bob to move"
    assert drawing.header == ()
    assert drawing.notes[0] == "X  alice (Black)  territory 166"


def test_a_pass_marks_no_stone_and_the_game_over_names_the_winner():
    state = GAME.play(GAME.new({"board": "hex", "size": "5"}, PLAYERS), BLACK, "c3,c4,*d4")
    passed = GAME.play(state, WHITE, "pass")
    drawing = GAME.draw(passed, None)
    assert isinstance(drawing.panels[0].grid, HexHexGrid)
    assert not any(layers[-1].last for layers in drawing.panels[0].marks.values())
    assert drawing.last_move == "bob (White) passed"
    over = GAME.play(passed, BLACK, "pass")
    outcome = GAME.outcome(over)
    assert outcome is not None
    assert GAME.draw(over, None).title == (
        f"Plurality on a hex board of 5 cells a side: alice (Black) against bob (White), "
        f"game won by {PLAYERS[outcome.winners[0]]}: {outcome.reason}"
    )


def test_marks_follow_the_stones_the_last_drop_and_the_territory_in_random_games():
    for options, seed in (({"size": "13"}, 1), ({"size": "19", "ties": "parity"}, 2), ({"board": "hex", "size": "6"}, 3)):
        for state in random_states(options, seed):
            (panel,) = GAME.draw(state, None).panels
            assert panel.grid is layout_for(state.board, state.size).grid
            assert dict(panel.marks) == expected_marks(state)


def test_every_viewer_gets_the_same_drawing_and_its_text_is_the_board_mail():
    assert type(GAME).render is Game.render
    for options, seed in (({"size": "13"}, 4), ({"board": "hex", "size": "9"}, 5)):
        for state in random_states(options, seed):
            drawing = GAME.draw(state, None)
            assert GAME.draw(state, BLACK) == GAME.draw(state, WHITE) == drawing
            for viewer in (None, BLACK, WHITE):
                assert GAME.text(GAME.draw(state, viewer)) == GAME.render(state, viewer)
            tally = drawing.tally
            assert tally is not None
            assert tuple(float(values[0]) for _, values in tally.rows) == GAME.tally(state)
