"""The board mail of Parliament, laid out from its drawing alone: the
legend, then each position drawn (the final position of a round that has
just ended hung, then the position now) under its caption, its chambers
one below the other, then the notes."""

from __future__ import annotations

from functools import cache

from pbmserv.gamekit import Drawing, Kind, Panel, SquareGrid
from pbmserv.gamekit.drawing import Cell

SEAT_SLOT = "\x01\x01"  # stands for a seat's two characters while a chamber's template is made
CLAIMED_MARK = "<"  # the claimer's marker on the seat claimed last, printed after it
HIDDEN_MARK = "?"  # after the viewer's own hidden preference
CHANGED_MARK = "*"  # after a seat the last turn changed
MARKER, HIDDEN = Kind.MARKER, Kind.HIDDEN  # named once: an Enum member's lookup is slow next to the rest


def board_text(drawing: Drawing) -> str:
    panels = drawing.panels
    # the header ends with a caption per position, and each position has a panel per chamber
    positions = sum(panel.title == panels[0].title for panel in panels)
    per_position = len(panels) // positions
    lines = [*drawing.header[:-positions], ""]
    for number, caption in enumerate(drawing.header[-positions:]):
        chambers = panels[number * per_position : (number + 1) * per_position]
        # side by side the chambers would need more than 72 columns: one below the other
        lines += [caption, "\n\n".join(_chamber(panel) for panel in chambers), ""]
    lines += drawing.notes
    return "\n".join(lines) + "\n"


def _chamber(panel: Panel) -> str:
    if not isinstance(panel.grid, SquareGrid):
        raise TypeError("Parliament's chambers are square grids")
    template, place = _template(panel.title, panel.grid)
    glyphs = ["."] * len(place)
    for cell, layers in panel.marks.items():
        top = layers[-1]
        if top.last:
            # the claimer's marker stands on the seat claimed last
            glyphs[place[cell]] = layers[-2].glyph + top.glyph if top.kind is MARKER else top.glyph + CHANGED_MARK
        elif top.kind is HIDDEN:
            glyphs[place[cell]] = top.glyph + HIDDEN_MARK
        else:
            glyphs[place[cell]] = top.glyph
    return template % tuple(glyphs)


@cache
def _template(title: str, grid: SquareGrid) -> tuple[str, dict[Cell, int]]:
    """A chamber's text with a `%-2s` for each seat, and where each seat
    comes in it (reading order).

    A seat and its marker (R<, r?) stand in a cell three columns wide, so
    that a space always parts them from the next seat and from the row
    numbers on the right."""
    lines = [title, *grid.render(lambda cell: SEAT_SLOT, hole=" ", cell_width=3)]
    place = {cell: number for number, cell in enumerate(grid.cells)}
    return "\n".join(lines).replace("%", "%%").replace(SEAT_SLOT, "%-2s"), place
