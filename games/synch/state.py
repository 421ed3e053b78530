"""What a game of Move In Synch, In Opposition is at one moment, and the
board it is played on."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from pbmserv.gamekit import COMPASS, SquareGrid

Cell = tuple[int, int]

MODE_FIRST = "mode-first"
DIRECTION_FIRST = "direction-first"
SYNCH = "synch"
OPPOSITION = "opposition"
MODES = (SYNCH, OPPOSITION)
DIRECTIONS = tuple(COMPASS)  # n ne e se s sw w nw

TITLE = "Move In Synch, In Opposition"
SIDE_NAMES = ("X", "O")
SYMBOLS = ("x", "o")
EMPTY = "."


@cache
def grid_for(size: int) -> SquareGrid:
    return SquareGrid(size, size)


@cache
def cells_by_index(size: int) -> tuple[Cell, ...]:
    """Each square in the order of `SynchState.marks`."""
    return tuple((i % size, i // size) for i in range(size * size))


@cache
def steps_for(size: int) -> dict[tuple[Cell, str], Cell | None]:
    """Every one-square step on the board, looked up often enough to be worth a table."""
    grid = grid_for(size)
    return {(cell, d): grid.step(cell, d) for cell in grid.cells for d in DIRECTIONS}


@dataclass(frozen=True)
class LastMove:
    """What the previous placement or move did, for the board mail."""

    number: int  # 0 for a placement, else the number of the round
    seat: int  # the placing seat, or the directioner of a move
    direction: str | None = None
    mode: str | None = None  # None on a move: the decider could not step
    start: tuple[Cell | None, Cell | None] | None = None  # markers before the move
    drawn: tuple[Cell, ...] = ()


@dataclass(frozen=True)
class SynchState:
    size: int
    order: str
    players: tuple[str, str]
    markers: tuple[Cell | None, Cell | None]
    marks: str  # one character per square (EMPTY or a symbol), index rank * size + file
    moves_done: int
    pending: str | None  # the first half of the move under way, if sent
    quiet_moves: int  # rounds in a row that drew no new symbol
    last: LastMove | None

    def step(self, cell: Cell, direction: str) -> Cell | None:
        return steps_for(self.size)[cell, direction]

    def is_empty(self, cell: Cell) -> bool:
        return self.marks[index(self, cell)] == EMPTY

    def counts(self) -> tuple[int, int]:
        return self.marks.count(SYMBOLS[0]), self.marks.count(SYMBOLS[1])


def index(state: SynchState, cell: Cell) -> int:
    return cell[1] * state.size + cell[0]


def marked(state: SynchState, drawn: Mapping[Cell, int]) -> str:
    """The marks with each drawn cell holding its seat's symbol."""
    if not drawn:
        return state.marks
    marks = list(state.marks)
    for cell, seat in drawn.items():
        marks[index(state, cell)] = SYMBOLS[seat]
    return "".join(marks)


def reading_order(cell: Cell) -> tuple[int, int]:
    return -cell[1], cell[0]
