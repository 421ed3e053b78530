"""The text board of Majority and Psychomachia, laid out from a drawing
alone (games.majority.view decides what it holds): the board with its
tricks beside the rows and under the columns, the notes, the tallies."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from pbmserv.gamekit import Drawing, Kind, SquareGrid, Tally

EMPTY_GLYPH = (":", ".")  # an empty dark / light square on the board
OPEN_TRICK = "."  # a trick nobody holds, beside its row or under its column
LAST_MARK = "<"
CELL_WIDTH = 2  # a square's text on the board: a stone, then room for LAST_MARK
#: the notes that explain the tallies: the text board prints them under the
#: table, the other notes above it
SCORING_NOTE = "A trick scores 1 + the opposing stones on it; White adds 0.5."
IF_ENDED_NOTE = "'If it ended now' gives open lines to the side with more stones there."


@dataclass(frozen=True)
class Layout:
    """The fixed text of one board size."""

    grid: SquareGrid
    #: by cell: its place in `empty_texts`, the board's squares in printed order
    place: dict[tuple[int, int], int]
    empty_texts: tuple[str, ...]  # each square empty, top row first
    #: by rank: spaces after its number (not padded on the right) that line up the trick marks
    mark_pads: tuple[str, ...]
    open_beside_rows: tuple[str, ...]  # by rank: the text beside a row whose trick is open


@cache
def layout(size: int) -> Layout:
    grid = SquareGrid(size, size)
    printed = [cell for row in grid.display_rows() for cell in row]
    pads = tuple(" " * (len(str(size)) - len(str(rank + 1))) for rank in range(size))
    return Layout(
        grid=grid,
        place={cell: place for place, cell in enumerate(printed)},
        empty_texts=tuple(EMPTY_GLYPH[0 if grid.is_dark(cell) else 1].ljust(CELL_WIDTH) for cell in printed),
        mark_pads=pads,
        open_beside_rows=tuple(pad + OPEN_TRICK for pad in pads),
    )


def text(drawing: Drawing) -> str:
    (panel,) = drawing.panels
    assert isinstance(panel.grid, SquareGrid)
    size = panel.grid.width
    fixed = layout(size)
    texts, place = list(fixed.empty_texts), fixed.place
    for cell, layers in panel.marks.items():
        top = layers[-1]
        # `<` follows the last stone; a hidden stone just hidden goes unmarked
        texts[place[cell]] = top.glyph + LAST_MARK if top.last and top.kind is Kind.STONE else top.glyph.ljust(CELL_WIDTH)
    beside_rows = list(fixed.open_beside_rows)
    for rank, mark in panel.row_marks.items():
        beside_rows[rank] = fixed.mark_pads[rank] + mark.glyph
    under_columns = [OPEN_TRICK] * size
    for file, mark in panel.column_marks.items():
        under_columns[file] = mark.glyph
    lines = fixed.grid.render_rows(
        [texts[start : start + size] for start in range(0, size * size, size)], right=beside_rows.__getitem__
    )
    lines.append(fixed.grid.under_files(under_columns.__getitem__))
    cut = drawing.notes.index(SCORING_NOTE)
    lines += ["", *drawing.notes[:cut], ""]
    assert drawing.tally is not None
    lines += tally_lines(drawing.tally)
    lines += drawing.notes[cut:]
    return "\n".join(lines) + "\n"


def tally_lines(tally: Tally) -> list[str]:
    """The table under the board: a column per side, values right-aligned."""
    rows = [("", tally.columns), *tally.rows]
    label_width = max([len(label) for label, _ in rows])
    width = max([len(value) for _, values in rows for value in values]) + 2
    return [(label.ljust(label_width) + "".join([value.rjust(width) for value in values])).rstrip() for label, values in rows]
