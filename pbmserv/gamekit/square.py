"""Square grids: coordinates like `c4`, neighbours, directions, lines, text boards.

A cell is `(file, rank)`, both 0-based: `file` counts from the left, `rank`
counts in the direction the labels count (from the bottom on chess and Go
style boards, from the top when `ranks_from_top` is set). Only cells in
`cells` exist, so masked shapes (a chamber with its corners cut) are grids
too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache

from pbmserv.gamekit.refusals import IllegalMove

Cell = tuple[int, int]

#: compass steps as (file, rank) deltas on a board whose ranks count upwards
COMPASS: dict[str, Cell] = {
    "n": (0, 1),
    "ne": (1, 1),
    "e": (1, 0),
    "se": (1, -1),
    "s": (0, -1),
    "sw": (-1, -1),
    "w": (-1, 0),
    "nw": (-1, 1),
}
OPPOSITE = {"n": "s", "ne": "sw", "e": "w", "se": "nw", "s": "n", "sw": "ne", "w": "e", "nw": "se"}
ORTHOGONAL_STEPS: tuple[Cell, ...] = ((1, 0), (-1, 0), (0, 1), (0, -1))
KING_STEPS: tuple[Cell, ...] = tuple(COMPASS.values())

_COORDINATE = re.compile(r"([a-z])(\d{1,2})")


@cache
def _file_letters(files: str, margin: int, cell_width: int) -> str:
    """The line of file letters above and below a rendered board."""
    return " " * (margin + 1) + "".join(letter.ljust(cell_width) for letter in files).rstrip()


@dataclass(frozen=True)
class SquareGrid:
    width: int
    height: int
    skip_i: bool = False
    ranks_from_top: bool = False
    mask: frozenset[Cell] | None = None
    _files: str = field(init=False, repr=False, compare=False)
    #: the printed lines, top first: (rank, each cell of the line or None for a hole)
    _printed: tuple[tuple[int, tuple[Cell | None, ...]], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        letters = "abcdefghjklmnopqrstuvwxyz" if self.skip_i else "abcdefghijklmnopqrstuvwxyz"
        if self.width > len(letters):
            raise ValueError(f"a square grid is at most {len(letters)} files wide")
        object.__setattr__(self, "_files", letters[: self.width])
        printed = tuple(
            (row[0][1], tuple(cell if cell in self else None for cell in row)) for row in self.display_rows()
        )
        object.__setattr__(self, "_printed", printed)

    @classmethod
    def from_mask(cls, rows: Iterable[str], **kwargs: bool) -> SquareGrid:
        """A grid from a picture, top row first: `#` is a cell, anything else a hole."""
        picture = list(rows)
        height, width = len(picture), max(len(row) for row in picture)
        ranks_from_top = bool(kwargs.get("ranks_from_top", False))
        cells: set[Cell] = set()
        for line_number, row in enumerate(picture):
            rank = line_number if ranks_from_top else height - 1 - line_number
            cells.update((file, rank) for file, char in enumerate(row) if char == "#")
        return cls(width, height, mask=frozenset(cells), **kwargs)

    # -- cells -----------------------------------------------------------
    def __contains__(self, cell: object) -> bool:
        if not (isinstance(cell, tuple) and len(cell) == 2):
            return False
        file, rank = cell
        if not (0 <= file < self.width and 0 <= rank < self.height):
            return False
        return self.mask is None or cell in self.mask

    @property
    def cells(self) -> tuple[Cell, ...]:
        """Every cell in reading order: the top line first, left to right."""
        return tuple(cell for line in self.display_rows() for cell in line if cell in self)

    def display_rows(self) -> list[list[Cell]]:
        """Cells (holes included) line by line as printed, top line first."""
        ranks = range(self.height) if self.ranks_from_top else range(self.height - 1, -1, -1)
        return [[(file, rank) for file in range(self.width)] for rank in ranks]

    # -- coordinates -----------------------------------------------------
    def label(self, cell: Cell) -> str:
        file, rank = cell
        return f"{self._files[file]}{rank + 1}"

    def file_letter(self, file: int) -> str:
        return self._files[file]

    def line_of(self, rank: int) -> int:
        """Which printed line, counted from the top, holds `rank`."""
        return rank if self.ranks_from_top else self.height - 1 - rank

    def parse(self, text: str) -> Cell:
        """The cell written as `text` (case-insensitive); IllegalMove if there is none."""
        word = text.strip().lower()
        match = _COORDINATE.fullmatch(word)
        if match is None:
            raise IllegalMove(f"'{text.strip()}' is not a square: {self.coordinate_hint()}.")
        letter, number = match.groups()
        file, rank = self._files.find(letter), int(number) - 1
        if file < 0 or not 0 <= rank < self.height:
            raise IllegalMove(f"{word} is off the board: {self.coordinate_hint()}.")
        if (file, rank) not in self:
            raise IllegalMove(f"{word} is not on the board: it is outside the playing area.")
        return file, rank

    def coordinate_hint(self) -> str:
        first, last = self._files[0], self._files[-1]
        return (
            f"write a file letter {first}-{last} and a rank 1-{self.height}, "
            f"like {self.label((min(2, self.width - 1), min(3, self.height - 1)))}"
        )

    # -- geometry --------------------------------------------------------
    def offset(self, cell: Cell, delta: Cell) -> Cell | None:
        moved = (cell[0] + delta[0], cell[1] + delta[1])
        return moved if moved in self else None

    def step(self, cell: Cell, direction: str) -> Cell | None:
        """One step by compass direction (`n` is up the printed board), or None off the board."""
        dx, dy = COMPASS[direction]
        if self.ranks_from_top:
            dy = -dy
        return self.offset(cell, (dx, dy))

    def neighbours(self, cell: Cell, diagonal: bool = False) -> list[Cell]:
        steps = KING_STEPS if diagonal else ORTHOGONAL_STEPS
        return [n for n in (self.offset(cell, step) for step in steps) if n is not None]

    def files(self) -> list[list[Cell]]:
        """Each column's cells, bottom to top as labelled."""
        return [[(f, r) for r in range(self.height) if (f, r) in self] for f in range(self.width)]

    def ranks(self) -> list[list[Cell]]:
        """Each row's cells, left to right, in label order."""
        return [[(f, r) for f in range(self.width) if (f, r) in self] for r in range(self.height)]

    def blocks2x2(self) -> list[tuple[Cell, Cell, Cell, Cell]]:
        """Every 2x2 square of cells, as (lower-left, lower-right, upper-left, upper-right)."""
        blocks = []
        for file, rank in self.cells:
            block = ((file, rank), (file + 1, rank), (file, rank + 1), (file + 1, rank + 1))
            if all(cell in self for cell in block):
                blocks.append(block)
        return blocks

    def is_dark(self, cell: Cell) -> bool:
        """Chequering with a1 dark (as on a chess board)."""
        return (cell[0] + cell[1]) % 2 == 0

    # -- text ------------------------------------------------------------
    def render(
        self,
        glyph: Callable[[Cell], str],
        *,
        hole: str = " ",
        right: Callable[[int], str] | None = None,
        cell_width: int = 2,
    ) -> list[str]:
        """The board as text lines with file letters above and below and rank
        numbers on both sides. `glyph(cell)` gives each cell's text (at most
        `cell_width` characters); `right(rank)` may add text after a line.
        When a cell of the last column fills its width (a stone and a
        marker), every rank number on the right moves one place out, so
        that none touches the board and they stay in line."""
        rows = [
            [(hole if cell is None else glyph(cell)).ljust(cell_width) for cell in row]
            for _, row in self._printed
        ]
        return self.render_rows(rows, right=right, cell_width=cell_width)

    def render_rows(
        self,
        rows: Sequence[Sequence[str]],
        *,
        right: Callable[[int], str] | None = None,
        cell_width: int = 2,
    ) -> list[str]:
        """`render` for cell texts made in bulk: `rows` holds each printed
        line's texts, top line first (as `display_rows`), holes included,
        every text exactly `cell_width` characters wide."""
        margin = len(str(self.height))
        letters = _file_letters(self._files, margin, cell_width)
        gap = " " if any(texts and not texts[-1].endswith(" ") for texts in rows) else ""
        lines = [letters]
        for (rank, _), texts in zip(self._printed, rows):
            number = str(rank + 1)
            line = f"{number.rjust(margin)} {''.join(texts)}{gap}{number}"
            if right is not None:
                extra = right(rank)
                if extra:
                    line = f"{line}  {extra}"
            lines.append(line.rstrip())
        lines.append(letters)
        return lines

    def under_files(self, text: Callable[[int], str], *, cell_width: int = 2) -> str:
        """A line to print below `render`'s board (same `cell_width`) with
        `text(file)` under each file letter, e.g. a tally per column."""
        margin = len(str(self.height))
        entries = "".join(text(file).ljust(cell_width) for file in range(self.width))
        return (" " * (margin + 1) + entries).rstrip()
