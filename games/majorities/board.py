"""The board of Majorities and a position on it: the cells of each size
(dead ones included), its lines, the state, a turn's placement, and the
lines and directions each side has won."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, cached_property, lru_cache
from operator import itemgetter

from pbmserv.gamekit import HexHexGrid

EMPTY, DEAD = ".", "-"
SEAT_MARKS = ("0", "1")  # what the stored board holds for each seat's stones
GLYPHS = ("X", "O")  # what the rendered board shows for each seat's stones
SIDE_NAMES = ("Black", "White")
DIRECTION_TITLES = {"row": "rows", "ne-sw": "NE-SW", "nw-se": "NW-SE"}
DEAD_RAYS = ((1, -1, 0), (0, 1, -1), (-1, 0, 1))


def dead_cubes(size: int) -> frozenset[tuple[int, int, int]]:
    """The dead cells in cube coordinates: odd distances along three rays
    120 degrees apart, plus the centre when (size-1)/2 is odd."""
    dead = {
        (distance * x, distance * y, distance * z)
        for distance in range(1, size - 1, 2)
        for x, y, z in DEAD_RAYS
    }
    if (size - 1) // 2 % 2 == 1:
        dead.add((0, 0, 0))
    return frozenset(dead)


class Board:
    """Everything about one board size that never changes during a game.
    Cells are indexed in reading order, the order of HexHexGrid.cells."""

    def __init__(self, size: int):
        self.size = size
        self.grid = HexHexGrid(size)
        self.cells = self.grid.cells
        self.labels = tuple(self.grid.label(cell) for cell in self.cells)
        self.index_of_label = {label: i for i, label in enumerate(self.labels)}
        self.index_of_cell = {cell: i for i, cell in enumerate(self.cells)}
        dead = dead_cubes(size)
        every = range(len(self.cells))
        self.dead = frozenset(i for i in every if self.grid.cube(self.cells[i]) in dead)
        self.live = tuple(i for i in every if i not in self.dead)
        self.empty_board = "".join(DEAD if i in self.dead else EMPTY for i in every)
        #: direction -> its lines, each a tuple of live cell indices
        self.lines = {
            direction: tuple(
                tuple(self.index_of_cell[c] for c in line if self.index_of_cell[c] not in self.dead)
                for line in self.grid.lines(direction)
            )
            for direction in DIRECTION_TITLES
        }
        #: direction -> the name of each of its lines, as the board mail lists them
        self.line_names = {direction: tuple(map(self.grid.line_name, self.grid.lines(direction))) for direction in DIRECTION_TITLES}

    @cached_property
    def line_readers(self) -> dict[str, tuple[tuple[itemgetter, int], ...]]:
        """direction -> per line: a getter of its marks from a board string,
        and the number of stones that win it."""
        return {
            direction: tuple((itemgetter(*line), len(line) // 2 + 1) for line in lines)
            for direction, lines in self.lines.items()
        }

    @cached_property
    def placements(self) -> tuple[tuple[Placement, ...], ...]:
        """placements[a][b] is the turn that takes cells a < b, placements[a][a]
        the first turn's single stone on a: made once, as the bots list them
        in every position they search."""
        every = range(len(self.cells))
        return tuple(tuple(Placement((a,) if a == b else (a, b), self.size) for b in every) for a in every)


@cache
def board_for(size: int) -> Board:
    return Board(size)


@dataclass(frozen=True)
class DirectionTally:
    #: the seat that has won each line of the direction, None while it is open
    owners: tuple[int | None, ...]
    holder: int | None

    @property
    def lines_won(self) -> tuple[int, int]:
        return self.owners.count(0), self.owners.count(1)

    @property
    def open_lines(self) -> int:
        return self.owners.count(None)


@dataclass(frozen=True)
class MajoritiesState:
    size: int
    players: tuple[str, str]
    #: one character per cell in reading order: EMPTY, DEAD or a SEAT_MARK
    board: str
    #: cell indices of the stones placed by the last turn
    last_move: tuple[int, ...] = ()

    @property
    def stones_placed(self) -> int:
        return len(self.board) - self.board.count(EMPTY) - self.board.count(DEAD)

    @property
    def seat_to_play(self) -> int:
        # turn 0 places one stone, every later turn two
        return (self.stones_placed + 1) // 2 % 2

    @property
    def stones_this_turn(self) -> int:
        return 1 if self.stones_placed == 0 else 2


@dataclass(frozen=True)
class Placement:
    """One turn: the cells (indices, in reading order) that take the mover's stones."""

    cells: tuple[int, ...]
    size: int
    secret = False

    def __str__(self) -> str:
        labels = board_for(self.size).labels
        return ",".join(labels[i] for i in self.cells)


@lru_cache(maxsize=4096)
def tallies(size: int, board: str) -> dict[str, DirectionTally]:
    """Who has won each line, and who holds the direction, per direction (shared between callers: do not change it)."""
    result = {}
    for direction, lines in board_for(size).line_readers.items():
        owners = tuple(_owner(read_line(board), majority) for read_line, majority in lines)
        holder = next((seat for seat in (0, 1) if owners.count(seat) * 2 > len(lines)), None)
        result[direction] = DirectionTally(owners, holder)
    return result


def _owner(stones: tuple[str, ...], majority: int) -> int | None:
    if stones.count(SEAT_MARKS[0]) >= majority:
        return 0
    if stones.count(SEAT_MARKS[1]) >= majority:
        return 1
    return None




def winner(state: MajoritiesState) -> int | None:
    """The seat that holds two directions, if one does."""
    # only the mover gains lines, so two players never both reach two directions
    holders = [tally.holder for tally in tallies(state.size, state.board).values()]
    return next((seat for seat in (0, 1) if holders.count(seat) >= 2), None)
