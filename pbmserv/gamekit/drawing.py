"""A drawing of a position as one viewer may see it: the one value from
which the text board and the pictures are both made.

A game's `draw(state, viewer)` is its observer. It decides what the viewer
(a seat, or None for the public) may know and describes only that: which
cells hold what, what was played last, the tallies and the lines of text
that go with the board. Nothing else in a game or in the server looks at a
state to show it, so a secret that is not in the drawing reaches neither a
mail nor a page nor a picture.

The geometry is the grid's: a panel names a `SquareGrid` (masked grids such
as Parliament's chambers included) or a `HexHexGrid`, and the pictures draw
its cells and coordinates once for every game.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum

from pbmserv.gamekit.hexagonal import HexHexGrid
from pbmserv.gamekit.square import SquareGrid

Cell = tuple[int, int]
Grid = SquareGrid | HexHexGrid


class Ink(Enum):
    """A side's colour in pictures, named as the rules name the side; the
    pictures choose colours that colour-blind players tell apart and also
    print each piece's letter, so colour is never the only cue."""

    BLACK = "black"
    WHITE = "white"
    RED = "red"
    BLUE = "blue"


class Kind(Enum):
    """What a mark on a cell is."""

    STONE = "stone"  # a piece of a side
    HIDDEN = "hidden"  # a piece the viewer knows of but others may not see (their own secret)
    PREFERENCE = "preference"  # a revealed preference or a lighter claim of a side
    TERRITORY = "territory"  # counted for a side if the game ended now
    MARKER = "marker"  # a token standing on a cell (Synch's markers), drawn over what lies there
    DEAD = "dead"  # not part of the board


@dataclass(frozen=True)
class Seat:
    """One seat as the drawing shows it: the player, the rules' name for
    the side, the letter the text board prints and the side's ink."""

    player: str
    side: str
    glyph: str
    ink: Ink


@dataclass(frozen=True)
class Mark:
    """One thing on a cell. `glyph` is what the text board prints for it;
    `last` says it was placed or changed by the last move."""

    kind: Kind
    glyph: str
    seat: int | None = None
    last: bool = False


@dataclass(frozen=True)
class Panel:
    """One board of the drawing (Parliament has two chambers).

    `marks` holds each cell's marks, bottom first; a cell not in it is
    empty. `chequered` shades the dark squares (`SquareGrid.is_dark`).
    `row_marks` and `column_marks` stand beside a row (by rank, or hex row)
    and under a column (by file): a line won, as Majority's tricks."""

    grid: Grid
    marks: Mapping[Cell, tuple[Mark, ...]]
    title: str = ""
    chequered: bool = False
    row_marks: Mapping[int, Mark] = field(default_factory=dict)
    column_marks: Mapping[int, Mark] = field(default_factory=dict)

    def top(self, cell: Cell) -> Mark | None:
        """The uppermost mark on `cell`, or None for an empty cell."""
        layers = self.marks.get(cell)
        return layers[-1] if layers else None


@dataclass(frozen=True)
class Tally:
    """The running tallies: a heading per column and rows of a label and a
    value per column (each already written as the game writes it)."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True)
class Drawing:
    """A position as one viewer sees it.

    `title` is one sentence that names the game and the position (the
    pictures' accessible title). `header` and `notes` are the lines of text
    above and below the boards (legends, the last move, what to send), as
    the text board prints them; `tally` the running tallies, which the
    pictures show beside the board."""

    title: str
    seats: tuple[Seat, ...]
    panels: tuple[Panel, ...] = ()
    tally: Tally | None = None
    header: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    last_move: str = ""


def plain_text(drawing: Drawing) -> str:
    """The text board of a drawing laid out in the plainest way: the header,
    each panel (its title, then its grid with each cell's uppermost glyph,
    `.` for an empty cell), the tally as a table and the notes. A game whose
    board mail has a layout of its own overrides `Game.text`."""
    lines = list(drawing.header)
    for panel in drawing.panels:
        if lines:
            lines.append("")
        if panel.title:
            lines.append(panel.title)

        def glyph(cell: Cell, panel: Panel = panel) -> str:
            mark = panel.top(cell)
            return "." if mark is None else mark.glyph

        lines += panel.grid.render(glyph)
    for block in (tally_table(drawing.tally) if drawing.tally else [], list(drawing.notes)):
        if block:
            lines += ["", *block] if lines else block
    return "\n".join(lines)


def tally_table(tally: Tally) -> list[str]:
    """`tally` as lines of a table, labels left, values right-aligned under
    their headings."""
    label_width = max((len(label) for label, _ in tally.rows), default=0)
    widths = [
        max([len(heading), *(len(values[column]) for _, values in tally.rows)])
        for column, heading in enumerate(tally.columns)
    ]
    heading = " " * label_width + "".join(f"  {text.rjust(width)}" for text, width in zip(tally.columns, widths))
    rows = [
        label.ljust(label_width) + "".join(f"  {text.rjust(width)}" for text, width in zip(values, widths))
        for label, values in tally.rows
    ]
    return [heading.rstrip(), *(row.rstrip() for row in rows)]
