"""The board mail of Plurality: nothing is hidden, so every viewer sees the same board."""

from __future__ import annotations

from functools import lru_cache

from games.plurality.board import BLACK, SIDES, WHITE, Layout, bits_of, layout_for
from games.plurality.open_drops import first_open_drop
from games.plurality.state import PluralityState, territories, territory_points
from pbmserv.gamekit import HexHexGrid, filled

STONE_GLYPHS = ("X", "O")
# territory in marks of another shape than the stones, never the same letter
# in another case: in a plain-text mail x and X, o and O read alike
TERRITORY_GLYPHS = ("+", "-")
NEUTRAL_GLYPH = "."
LAST_MOVE_MARK = "<"


@lru_cache(maxsize=64)
def render(state: PluralityState) -> str:
    layout = layout_for(state.board, state.size)
    texts = [NEUTRAL_GLYPH] * len(layout.cells)
    for territory in territories(layout, state):
        if territory.owner is not None:
            for i in territory.cells:
                texts[i] = TERRITORY_GLYPHS[territory.owner]
    for seat, stones in ((BLACK, state.black), (WHITE, state.white)):
        for i in bits_of(stones):
            texts[i] = STONE_GLYPHS[seat]
    last_mover = 1 - state.turn
    dropped = state.last_move not in ("", "pass")
    if dropped:
        for word in state.last_move.replace("*", "").split(","):
            texts[layout.cell_index(word)] += LAST_MOVE_MARK
    # cells far enough apart that a space always parts a last-move mark
    # from the next cell
    if isinstance(layout.grid, HexHexGrid):
        lines = layout.grid.render(lambda cell: texts[layout.index[cell]], wide=True)
    else:
        lines = layout.grid.render(lambda cell: texts[layout.index[cell]], cell_width=3)
    black, white = territory_points(layout, state)
    names = [f"{state.players[s]} ({SIDES[s]})" for s in (BLACK, WHITE)]
    width = max(len(name) for name in names)
    over = state.passes >= 2
    lines += [
        "",
        f"{STONE_GLYPHS[BLACK]}  {names[BLACK].ljust(width)}  territory {black}",
        f"{STONE_GLYPHS[WHITE]}  {names[WHITE].ljust(width)}  territory {white} + "
        f"{number(layout.komi)} komi = {number(white + layout.komi)}",
        f"{TERRITORY_GLYPHS[BLACK]} {TERRITORY_GLYPHS[WHITE]}  territory of Black / White "
        f"{'at the end' if over else 'if the game ended now'}, {NEUTRAL_GLYPH} neutral",
    ]
    if dropped:
        lines.append(f"{LAST_MOVE_MARK}  marks the last drop: {state.last_move} by {names[last_mover]}")
    elif state.last_move == "pass":
        lines.append(f"Last move: {names[last_mover]} passed.")
    if state.passes == 1:
        lines.append("One more pass in a row ends the game.")
    if not over:
        lines += filled(_next_move(layout, state, names[state.turn]), 72)
    return "\n".join(lines)


def _next_move(layout: Layout, state: PluralityState, mover: str) -> str:
    """Who moves and what to send, with a drop that is legal now (the first
    open one in reading order, its last point starred)."""
    first = first_open_drop(layout, state)
    if first is None:
        return f"Next: {mover} sends pass; no drop is possible any more."
    example = layout.moves[first][2]
    opponent = STONE_GLYPHS[1 - state.turn]
    return f"Next: {mover} sends a drop like {example} (* = {opponent}) or pass."


def number(value: float) -> str:
    return f"{value:g}"
