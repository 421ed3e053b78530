"""What a viewer of a game of Plurality is shown: the drawing of the
position (`draw_state`), from which the board mail and the pictures are
made. Nothing is hidden, so every viewer sees the same drawing.

Each cell's mark carries as its glyph what the board mail prints for it:
X and O the stones (those of the last drop marked last), + and - the
territory of Black and White if the game ended now."""

from __future__ import annotations

from functools import lru_cache

from games.plurality.board import BLACK, SIDES, WHITE, Layout, bits_of, layout_for
from games.plurality.board_text import LAST_MOVE_MARK, NEUTRAL_GLYPH
from games.plurality.open_drops import example_drop
from games.plurality.state import PluralityState, territories, territory_points
from pbmserv.gamekit import Drawing, Ink, Kind, Mark, Outcome, Panel, Seat, Tally, filled

STONE_GLYPHS = ("X", "O")
# territory in marks of another shape than the stones, never the same letter
# in another case: in a plain-text mail x and X, o and O read alike
TERRITORY_GLYPHS = ("+", "-")
INKS = (Ink.BLACK, Ink.WHITE)
STONES = tuple((Mark(Kind.STONE, glyph, seat),) for seat, glyph in enumerate(STONE_GLYPHS))
LAST_STONES = tuple((Mark(Kind.STONE, glyph, seat, True),) for seat, glyph in enumerate(STONE_GLYPHS))
TERRITORY = tuple((Mark(Kind.TERRITORY, glyph, seat),) for seat, glyph in enumerate(TERRITORY_GLYPHS))


@lru_cache(maxsize=64)
def draw_state(state: PluralityState, outcome: Outcome | None) -> Drawing:
    layout = layout_for(state.board, state.size)
    cells = layout.cells
    marks = {}
    for territory in territories(layout, state):
        if territory.owner is not None:
            for i in territory.cells:
                marks[cells[i]] = TERRITORY[territory.owner]
    for seat, stones in ((BLACK, state.black), (WHITE, state.white)):
        for i in bits_of(stones):
            marks[cells[i]] = STONES[seat]
    last_mover = 1 - state.turn
    dropped = state.last_move not in ("", "pass")
    if dropped:
        for word in state.last_move.replace("*", "").split(","):
            i = layout.cell_index(word)
            marks[cells[i]] = LAST_STONES[WHITE if state.white >> i & 1 else BLACK]
    black, white = territory_points(layout, state)
    names = [f"{state.players[s]} ({SIDES[s]})" for s in (BLACK, WHITE)]
    width = max(len(name) for name in names)
    over = state.passes >= 2
    notes = [
        f"{STONE_GLYPHS[BLACK]}  {names[BLACK].ljust(width)}  territory {black}",
        f"{STONE_GLYPHS[WHITE]}  {names[WHITE].ljust(width)}  territory {white} + "
        f"{number(layout.komi)} komi = {number(white + layout.komi)}",
        f"{TERRITORY_GLYPHS[BLACK]} {TERRITORY_GLYPHS[WHITE]}  territory of Black / White "
        f"{'at the end' if over else 'if the game ended now'}, {NEUTRAL_GLYPH} neutral",
    ]
    last_move = ""
    if dropped:
        notes.append(f"{LAST_MOVE_MARK}  marks the last drop: {state.last_move} by {names[last_mover]}")
        last_move = f"{names[last_mover]} dropped {state.last_move}"
    elif state.last_move == "pass":
        notes.append(f"Last move: {names[last_mover]} passed.")
        last_move = f"{names[last_mover]} passed"
    if state.passes == 1:
        notes.append("One more pass in a row ends the game.")
    if not over:
        notes += filled(_next_move(layout, state, names[state.turn]), 72)
    return Drawing(
        title=_title(layout, state, names, outcome),
        seats=tuple(Seat(player, SIDES[s], STONE_GLYPHS[s], INKS[s]) for s, player in enumerate(state.players)),
        panels=(Panel(layout.grid, marks),),
        tally=Tally(
            ("territory", "komi", "total"),
            (
                (names[BLACK], (str(black), "0", str(black))),
                (names[WHITE], (str(white), number(layout.komi), number(white + layout.komi))),
            ),
        ),
        notes=tuple(notes),
        last_move=last_move,
    )


def _title(layout: Layout, state: PluralityState, names: list[str], outcome: Outcome | None) -> str:
    board = f"a {layout.size}x{layout.size} board" if layout.board == "square" else f"a hex board of {layout.size} cells a side"
    if outcome is None:
        status = f"{state.players[state.turn]} to move"
    else:
        status = f"game won by {state.players[outcome.winners[0]]}: {outcome.reason}"
    return f"Plurality on {board}: {names[BLACK]} against {names[WHITE]}, {status}"


def _next_move(layout: Layout, state: PluralityState, mover: str) -> str:
    """Who moves and what to send, with a drop that is legal now: the
    example move the board mail ends with (`Plurality.example_move`), so
    that one mail gives one example."""
    example = example_drop(layout, state)
    if example is None:
        return f"Next: {mover} sends pass; no drop is possible any more."
    opponent = STONE_GLYPHS[1 - state.turn]
    return f"Next: {mover} sends a drop like {example} (* = {opponent}) or pass."


def number(value: float) -> str:
    return f"{value:g}"
