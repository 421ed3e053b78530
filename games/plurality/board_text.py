"""The board mail of Plurality, laid out from its drawing alone: the board,
then the notes."""

from __future__ import annotations

from collections import OrderedDict
from functools import cache

from pbmserv.gamekit import Drawing, HexHexGrid
from pbmserv.gamekit.drawing import Cell, Grid

CELL_SLOT = "\x01\x01"  # stands for a cell's two characters while a board's template is made
LAST_MOVE_MARK = "<"  # after each stone of the last drop
NEUTRAL_GLYPH = "."  # an empty point no side owns

#: the texts of the drawings laid out last, by the drawing's identity (each
#: entry keeps its drawing alive, so no other drawing takes its id): the game
#: draws a position once and gives the same drawing to every render of it
#: while it is among the positions drawn lately
_laid_out: OrderedDict[int, tuple[Drawing, str]] = OrderedDict()
_LAID_OUT_LIMIT = 64


def board_text(drawing: Drawing) -> str:
    known = _laid_out.get(id(drawing))
    if known is not None:
        return known[1]
    text = _lay_out(drawing)
    _laid_out[id(drawing)] = (drawing, text)
    if len(_laid_out) > _LAID_OUT_LIMIT:
        _laid_out.popitem(last=False)
    return text


def _lay_out(drawing: Drawing) -> str:
    (panel,) = drawing.panels
    template, place = _template(panel.grid)
    glyphs = [NEUTRAL_GLYPH] * len(place)
    for cell, layers in panel.marks.items():
        top = layers[-1]
        glyphs[place[cell]] = top.glyph + LAST_MOVE_MARK if top.last else top.glyph
    return "\n".join([template % tuple(glyphs), "", *drawing.notes])


@cache
def _template(grid: Grid) -> tuple[str, dict[Cell, int]]:
    """The board's text with a `%-2s` for each cell (`%s` for one that ends
    its line, which is printed without trailing spaces) and where each cell
    comes in it (reading order).

    Cells stand far enough apart that a space always parts a last-move mark
    (X<) from the next cell."""
    if isinstance(grid, HexHexGrid):
        lines = grid.render(lambda cell: CELL_SLOT, wide=True)
    else:
        lines = grid.render(lambda cell: CELL_SLOT, cell_width=3)
    text = "\n".join(lines).replace("%", "%%").replace(CELL_SLOT + "\n", "%s\n").replace(CELL_SLOT, "%-2s")
    return text, {cell: number for number, cell in enumerate(grid.cells)}
