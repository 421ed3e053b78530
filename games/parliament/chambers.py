"""The two chambers of Parliament and how seats are numbered and written.

Every seat in play has one index: Upper seats first, then Lower, each chamber
in reading order (row 1 at the top, then left to right). That order is also
the rules' reading order for flips.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pbmserv.gamekit import IllegalMove, SquareGrid

UPPER_MASK = (
    ".########.",
    "##########",
    "##########",
    "##########",
    "##########",
    "##########",
    "##########",
    ".########.",
)
LOWER_MASK = (
    "...###########...",
    ".###############.",
    ".###############.",
    "#################",
    "#################",
    "#################",
    "#################",
    ".###############.",
    ".###############.",
    "...###########...",
)

PREFERENCES_PER_CHAMBER = {"Upper": 3, "Lower": 4}

_SEAT = re.compile(r"(?:(upper|lower|u|l):)?([a-z])(\d{1,2})")


@dataclass(frozen=True)
class Chamber:
    prefix: str  # "U" or "L"
    name: str  # "Upper" or "Lower"
    grid: SquareGrid
    first: int  # index of its first seat
    size: int

    @property
    def needed(self) -> int:
        """Seats that are more than half of the chamber."""
        return self.size // 2 + 1

    def count(self, board: str, mark: str) -> int:
        return board.count(mark, self.first, self.first + self.size)


class Layout:
    """The chambers of one `-boards` choice, with every seat's neighbours."""

    def __init__(self, chamber_names: tuple[str, ...]):
        masks = {"Upper": UPPER_MASK, "Lower": LOWER_MASK}
        chambers = []
        first = 0
        for name in chamber_names:
            grid = SquareGrid.from_mask(masks[name], ranks_from_top=True)
            chambers.append(Chamber(name[0], name, grid, first, len(grid.cells)))
            first += len(grid.cells)
        self.chambers: tuple[Chamber, ...] = tuple(chambers)
        self.prefixed = len(chambers) > 1
        #: with both chambers a winner must also hold more than half of this one
        self.must_hold: Chamber | None = self.chambers[0] if self.prefixed else None
        self.size = first
        self.total_needed = self.size // 2 + 1
        #: 3 in the Upper, 4 in the Lower, 7 anywhere when both are played
        self.preference_limit = sum(PREFERENCES_PER_CHAMBER[name] for name in chamber_names)

        index: dict[tuple[int, tuple[int, int]], int] = {}
        labels: list[str] = []
        chamber_of: list[int] = []
        for number, chamber in enumerate(self.chambers):
            for cell in chamber.grid.cells:
                index[(number, cell)] = len(labels)
                coordinate = chamber.grid.label(cell)
                labels.append(f"{chamber.prefix.lower()}:{coordinate}" if self.prefixed else coordinate)
                chamber_of.append(number)
        self.index = index
        #: lower-case seat names, the keys the code looks seats up by
        self.labels: tuple[str, ...] = tuple(labels)
        #: seat names as board, help and move texts write them, like U:c4
        self.shown: tuple[str, ...] = tuple(label.upper()[:2] + label[2:] if self.prefixed else label for label in labels)
        self.chamber_of: tuple[int, ...] = tuple(chamber_of)
        self.neighbours: tuple[tuple[int, ...], ...] = tuple(
            tuple(index[(number, n)] for n in chamber.grid.neighbours(cell, diagonal=True))
            for number, chamber in enumerate(self.chambers)
            for cell in chamber.grid.cells
        )

    def example(self, coordinate: str = "c4") -> str:
        return f"L:{coordinate}" if self.prefixed else coordinate

    def seat_hint(self) -> str:
        if self.prefixed:
            return "write the chamber and the seat, like U:c4 or L:h5"
        return "write a column letter and a row, like c4"

    def parse(self, text: str) -> int:
        """The index of the seat written as `text` (spaces around `:` allowed)."""
        word = re.sub(r"\s*:\s*", ":", text.strip().lower())
        match = _SEAT.fullmatch(word)
        if match is None:
            raise IllegalMove(f"'{text.strip()}' is not a seat: {self.seat_hint()}.")
        prefix, letter, number = match.groups()
        coordinate = f"{letter}{number}"
        if prefix is None:
            if self.prefixed:
                raise IllegalMove(
                    f"{coordinate} needs its chamber: write U:{coordinate} for the Upper "
                    f"chamber or L:{coordinate} for the Lower chamber."
                )
            chamber_number = 0
        else:
            wanted = prefix[0].upper()
            numbers = [n for n, c in enumerate(self.chambers) if c.prefix == wanted]
            if not numbers:
                only = self.chambers[0].name
                missing = "Upper" if wanted == "U" else "Lower"
                raise IllegalMove(
                    f"There is no {missing} chamber in this game: only the {only} chamber "
                    f"is played, so write seats like {coordinate}."
                )
            chamber_number = numbers[0]
        chamber = self.chambers[chamber_number]
        shown = f"{chamber.prefix}:{coordinate}" if self.prefixed else coordinate
        grid = chamber.grid
        cell = (ord(letter) - ord("a"), int(number) - 1)
        if not (0 <= cell[0] < grid.width and 0 <= cell[1] < grid.height):
            last = chr(ord("a") + grid.width - 1)
            raise IllegalMove(
                f"{shown} is off the board: the {chamber.name} chamber has columns a-{last} "
                f"and rows 1-{grid.height}."
            )
        if cell not in grid:
            raise IllegalMove(f"{shown} is not a seat: that corner of the {chamber.name} chamber is cut off.")
        return self.index[(chamber_number, cell)]


LAYOUTS: dict[str, Layout] = {
    "upper": Layout(("Upper",)),
    "lower": Layout(("Lower",)),
    "both": Layout(("Upper", "Lower")),
}
