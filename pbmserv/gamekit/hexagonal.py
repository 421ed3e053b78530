"""The hexagon of hexagonal cells ("hexhex"), written as on the old server:
rows lettered from the top (`a`, `b`, ...), cells numbered from the left of
their row starting at 1, so `c1` is the first cell of the third row.

A cell is `(row, index)`, both 0-based. Internally the geometry uses axial
coordinates `(q, r)` with the centre at (0, 0), `r` growing downwards
(cube coordinates are `(q, -q - r, r)`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

from pbmserv.gamekit.refusals import IllegalMove

Cell = tuple[int, int]
Axial = tuple[int, int]

#: axial steps; `n`/`s` do not exist on pointy-topped hexes
HEX_STEPS: dict[str, Axial] = {
    "e": (1, 0),
    "w": (-1, 0),
    "ne": (1, -1),
    "nw": (0, -1),
    "se": (0, 1),
    "sw": (-1, 1),
}

#: the three line directions and the step that walks along each
LINE_DIRECTIONS: dict[str, Axial] = {"row": (1, 0), "ne-sw": (-1, 1), "nw-se": (0, 1)}

#: a pointy-topped cell one unit wide is 2 / SQRT3 tall; its rows stand SQRT3 / 2 apart
SQRT3 = math.sqrt(3)

_COORDINATE = re.compile(r"([a-z])(\d{1,2})")


@dataclass(frozen=True)
class HexHexGrid:
    size: int  # cells along each edge

    @property
    def radius(self) -> int:
        return self.size - 1

    @property
    def row_count(self) -> int:
        return 2 * self.size - 1

    def row_length(self, row: int) -> int:
        return self.row_count - abs(row - self.radius)

    # -- coordinates -----------------------------------------------------
    def to_axial(self, cell: Cell) -> Axial:
        row, index = cell
        r = row - self.radius
        return self._q_min(r) + index, r

    def from_axial(self, axial: Axial) -> Cell | None:
        q, r = axial
        radius = self.radius
        if max(abs(q), abs(r), abs(q + r)) > radius:
            return None
        return r + radius, q - self._q_min(r)

    def _q_min(self, r: int) -> int:
        return max(-self.radius, -self.radius - r)

    def cube(self, cell: Cell) -> tuple[int, int, int]:
        q, r = self.to_axial(cell)
        return q, -q - r, r

    @cached_property
    def cells(self) -> tuple[Cell, ...]:
        """Every cell in reading order."""
        return tuple(
            (row, index) for row in range(self.row_count) for index in range(self.row_length(row))
        )

    def __contains__(self, cell: object) -> bool:
        if not (isinstance(cell, tuple) and len(cell) == 2):
            return False
        row, index = cell
        if not (isinstance(row, int) and isinstance(index, int)):
            return False
        return 0 <= row < self.row_count and 0 <= index < self.row_length(row)

    def label(self, cell: Cell) -> str:
        row, index = cell
        return f"{chr(ord('a') + row)}{index + 1}"

    def parse(self, text: str) -> Cell:
        word = text.strip().lower()
        match = _COORDINATE.fullmatch(word)
        if match is None:
            raise IllegalMove(f"'{text.strip()}' is not a cell: {self.coordinate_hint()}.")
        row = ord(match.group(1)) - ord("a")
        index = int(match.group(2)) - 1
        if not 0 <= row < self.row_count:
            raise IllegalMove(f"{word} is off the board: {self.coordinate_hint()}.")
        if not 0 <= index < self.row_length(row):
            raise IllegalMove(
                f"{word} is off the board: row {match.group(1)} has cells 1-{self.row_length(row)}."
            )
        return row, index

    def coordinate_hint(self) -> str:
        last = chr(ord("a") + self.row_count - 1)
        return f"write a row letter a-{last} and a cell number counted from the left of that row, like c1"

    # -- geometry --------------------------------------------------------
    def centre(self, axial: Axial) -> tuple[float, float]:
        """Where the cell at `axial` (on the board or off it) stands in a
        picture of pointy-topped cells one unit wide, the board's centre at
        (0, 0) and rows going down."""
        q, r = axial
        return q + r / 2, r * SQRT3 / 2

    def step(self, cell: Cell, direction: str) -> Cell | None:
        q, r = self.to_axial(cell)
        dq, dr = HEX_STEPS[direction]
        return self.from_axial((q + dq, r + dr))

    def neighbours(self, cell: Cell) -> list[Cell]:
        q, r = self.to_axial(cell)
        found = (self.from_axial((q + dq, r + dr)) for dq, dr in HEX_STEPS.values())
        return [n for n in found if n is not None]

    def distance(self, a: Cell, b: Cell) -> int:
        return _axial_distance(self.to_axial(a), self.to_axial(b))

    def lines(self, direction: str) -> list[list[Cell]]:
        """Every maximal straight line of cells in one of LINE_DIRECTIONS,
        each walked from its first cell in reading order."""
        dq, dr = LINE_DIRECTIONS[direction]
        result: list[list[Cell]] = []
        for cell in self.cells:
            q, r = self.to_axial(cell)
            if self.from_axial((q - dq, r - dr)) is not None:
                continue
            line: list[Cell] = []
            current: Cell | None = cell
            while current is not None:
                line.append(current)
                cq, cr = self.to_axial(current)
                current = self.from_axial((cq + dq, cr + dr))
            result.append(line)
        return result

    def line_name(self, line: Sequence[Cell]) -> str:
        """A line of `lines` as a player finds it on the board: a row by its
        letter ("c"), a diagonal by its two end cells, the upper one first
        ("a2-d1")."""
        first, last = line[0], line[-1]
        if first[0] == last[0]:
            return chr(ord("a") + first[0])
        return f"{self.label(first)}-{self.label(last)}"

    def rhombi(self) -> list[frozenset[Cell]]:
        """Every rhombus of four cells: two triangles of mutually adjacent
        cells sharing an edge."""
        found: list[frozenset[Cell]] = []
        for cell in self.cells:
            q, r = self.to_axial(cell)
            for dq, dr in ((1, 0), (0, 1), (-1, 1)):  # each edge counted once
                other = (q + dq, r + dr)
                common = [
                    (q + a, r + b)
                    for a, b in HEX_STEPS.values()
                    if _axial_distance((q + a, r + b), other) == 1
                ]
                corners = [self.from_axial(a) for a in ((q, r), other, *common)]
                on_board = [corner for corner in corners if corner is not None]
                if len(on_board) == len(corners):
                    found.append(frozenset(on_board))
        return found

    # -- text ------------------------------------------------------------
    def render(self, glyph: Callable[[Cell], str], *, wide: bool | None = None) -> list[str]:
        """The hexagon as text. Row letters stand on the left; cell numbers
        stand where a diagonal leaves the board: along the top-right edge for
        the upper half (cell k of every upper row lies on one slant) and
        along the bottom-right edge for the lower half. Cells of a row stand
        two columns apart, four when `wide` (the default from 10 rows on)."""
        if wide is None:
            wide = self.row_count >= 10
        unit = 2 if wide else 1  # characters per half cell
        margin = 3
        # one extra text line above and below the board for numbers
        canvas: list[list[str]] = [[] for _ in range(self.row_count + 2)]

        def put(line: int, column: int, text: str) -> None:
            row = canvas[line]
            if len(row) < column + len(text):
                row.extend(" " * (column + len(text) - len(row)))
            row[column : column + len(text)] = list(text)

        def column_of(q: int, r: int) -> int:
            return margin + (2 * q + r + 2 * self.radius) * unit

        for cell in self.cells:
            row, index = cell
            q, r = self.to_axial(cell)
            put(row + 1, column_of(q, r), glyph(cell))
            if index == 0:
                put(row + 1, 0, chr(ord("a") + row))
        for (q, r), number in self.edge_numbers():
            put(r + self.radius + 1, column_of(q, r), number)
        return ["".join(line).rstrip() for line in canvas]

    def edge_numbers(self) -> list[tuple[Axial, str]]:
        """Where the cell numbers stand, off the board: cell k of an upper
        row (the middle row included) numbered beyond its north-east
        neighbour's place when that is off the board, cell k of a lower row
        (the middle one too) beyond its south-east one."""
        numbers: list[tuple[Axial, str]] = []
        for cell in self.cells:
            q, r = self.to_axial(cell)
            number = str(cell[1] + 1)
            if r <= 0 and self.from_axial((q + 1, r - 1)) is None:
                numbers.append(((q + 1, r - 1), number))
            if r >= 0 and self.from_axial((q, r + 1)) is None:
                numbers.append(((q, r + 1), number))
        return numbers


def _axial_distance(a: Axial, b: Axial) -> int:
    dq, dr = a[0] - b[0], a[1] - b[1]
    return max(abs(dq), abs(dr), abs(dq + dr))
