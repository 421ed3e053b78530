"""Bill Taylor's Majorities on the hexhex board (the rules `majorities help` gives).

A majority of stones wins a line, a majority of parallel lines wins a
direction, two of the three directions win the game.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, cached_property, lru_cache
from operator import itemgetter
from typing import Any

from pbmserv.gamekit import Game, HexHexGrid, IllegalMove, InvalidOption, Option, Outcome, from_data, to_data

EMPTY, DEAD = ".", "-"
SEAT_MARKS = ("0", "1")  # what the stored board holds for each seat's stones
GLYPHS = ("X", "O")  # what the rendered board shows for each seat's stones
DIRECTION_TITLES = {"row": "rows", "ne-sw": "NE-SW", "nw-se": "NW-SE"}
DEAD_RAYS = ((1, -1, 0), (0, 1, -1), (-1, 0, 1))
_SEPARATORS = re.compile(r"[\s,]+")
# stand-ins for the last move's stones, bracketed after the hexagon is drawn
_LAST_MOVE_PLACEHOLDERS = ("\x01", "\x02")
_BRACKET_ON_LABEL = re.compile(r"\)(?=\d)")


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


def _bracket_last_move(line: str) -> str:
    """Put the last move's stones in brackets: `(X)`, or `(X X)` for two
    neighbours in a row. The character on each side of a cell is always a
    space (or the end of the line), so the brackets never hide anything; a
    closing bracket right against the number that ends a row moves that
    number one place out, so the two never touch."""
    chars = [*line, " "]
    for column, char in enumerate(line):
        if char not in _LAST_MOVE_PLACEHOLDERS:
            continue
        chars[column] = GLYPHS[_LAST_MOVE_PLACEHOLDERS.index(char)]
        if line[column - 2] not in _LAST_MOVE_PLACEHOLDERS:
            chars[column - 1] = "("
        if column + 2 >= len(line) or line[column + 2] not in _LAST_MOVE_PLACEHOLDERS:
            chars[column + 1] = ")"
    return _BRACKET_ON_LABEL.sub(") ", "".join(chars).rstrip())


def _numbers_legend(size: int) -> list[str]:
    """What the numbers around the hexagon are: each stands at the end of a
    slant of cells that share that number, never on a cell of its own."""
    number = size + 1
    middle = chr(ord("a") + size - 1)
    return [
        "The numbers around the board are not cells: each ends a slant of the",
        f"cells with that number (the {number} right of row a: b{number} to {middle}{number}).",
    ]


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
    lines_won: tuple[int, int]
    open_lines: int
    holder: int | None


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
    """Lines won and holder per direction (shared between callers: do not change it)."""
    result = {}
    for direction, lines in board_for(size).line_readers.items():
        won = [0, 0]
        for read_line, majority in lines:
            stones = read_line(board)
            for seat, mark in enumerate(SEAT_MARKS):
                if stones.count(mark) >= majority:
                    won[seat] += 1
        holder = next((seat for seat in (0, 1) if won[seat] * 2 > len(lines)), None)
        result[direction] = DirectionTally((won[0], won[1]), len(lines) - won[0] - won[1], holder)
    return result


class Majorities(Game):
    name = "majorities"
    title = "Majorities"
    playout_moves = 6  # lines still open weigh more than lines held
    min_players = 2
    max_players = 2
    side_names = ("Black", "White")
    options = (Option("size", 5, (3, 5, 7), "cells along each edge of the hexagon"),)

    # -- the game ----------------------------------------------------------
    def new(self, options: Mapping[str, str | None], players: Sequence[str]) -> MajoritiesState:
        size = self.resolve_options(options)["size"]
        if len(players) != 2:
            raise InvalidOption("Majorities is a game for exactly two players.")
        return MajoritiesState(size, (players[0], players[1]), board_for(size).empty_board)

    def to_move(self, state: MajoritiesState) -> frozenset[int]:
        if self._winner(state) is not None:
            return frozenset()
        return frozenset({state.seat_to_play})

    def read_move(self, state: MajoritiesState, seat: int, text: str) -> Placement:
        outcome = self.outcome(state)
        if outcome is not None:
            winner = state.players[outcome.winners[0]]
            raise IllegalMove(f"The game is over: {winner} won {outcome.reason}.")
        if seat != state.seat_to_play:
            raise IllegalMove(
                f"It is not your turn: {state.players[state.seat_to_play]} is to move."
            )
        return Placement(self._parse_stones(state, text), state.size)

    def apply(self, state: MajoritiesState, seat: int, move: Placement) -> MajoritiesState:
        board = list(state.board)
        for i in move.cells:
            board[i] = SEAT_MARKS[seat]
        return MajoritiesState(state.size, state.players, "".join(board), move.cells)

    def moves(self, state: MajoritiesState, seat: int) -> list[Placement]:
        if seat not in self.to_move(state):
            return []
        placements = board_for(state.size).placements
        empty = [i for i, mark in enumerate(state.board) if mark == EMPTY]
        if state.stones_this_turn == 1:
            return [placements[i][i] for i in empty]
        return [placements[a][b] for n, a in enumerate(empty) for b in empty[n + 1 :]]

    def outcome(self, state: MajoritiesState) -> Outcome | None:
        winner = self._winner(state)
        if winner is None:
            return None
        counts = tallies(state.size, state.board)
        held = [direction for direction, tally in counts.items() if tally.holder == winner]
        scores = tuple(
            float(sum(1 for tally in counts.values() if tally.holder == seat)) for seat in (0, 1)
        )
        titles = [DIRECTION_TITLES[direction] for direction in held]
        names = " and ".join([", ".join(titles[:-1]), titles[-1]])
        # a phrase for "Game won by alice: ...", hence no full stop
        held_text = "all 3 directions" if len(held) == 3 else f"{len(held)} of the 3 directions"
        return Outcome(winners=(winner,), scores=scores, reason=f"{held_text} ({names})")

    def tally(self, state: MajoritiesState) -> tuple[float, ...]:
        """Lines won, a held direction counting as many more as it has lines
        (so two held directions always outweigh any lines the other holds)."""
        counts = tallies(state.size, state.board).values()
        per_direction = 2 * state.size - 1
        return tuple(
            float(sum(t.lines_won[seat] + per_direction * (t.holder == seat) for t in counts)) for seat in (0, 1)
        )

    def _winner(self, state: MajoritiesState) -> int | None:
        # only the mover gains lines, so two players never both reach two directions
        holders = [tally.holder for tally in tallies(state.size, state.board).values()]
        return next((seat for seat in (0, 1) if holders.count(seat) >= 2), None)

    # -- reading moves -------------------------------------------------------
    def _cell_index(self, state: MajoritiesState, word: str) -> int:
        board = board_for(state.size)
        index = board.index_of_label.get(word)
        if index is None:
            index = board.index_of_cell[board.grid.parse(word)]  # raises with the reason
        if index in board.dead:
            raise IllegalMove(
                f"{board.labels[index]} is not on the board: it is a dead cell, "
                "shown as - on the board."
            )
        return index

    def _parse_stones(self, state: MajoritiesState, text: str) -> tuple[int, ...]:
        words = [word for word in _SEPARATORS.split(text.lower()) if word]
        wanted = state.stones_this_turn
        example = f"like {self._example_move(state)}"
        if not words:
            raise IllegalMove(f"Send the cell for each stone you place, {example}.")
        stones = [self._cell_index(state, word) for word in words]
        if wanted == 1 and len(stones) != 1:
            raise IllegalMove(
                f"The first turn places one stone only, {example}; you gave {len(stones)} cells."
            )
        if wanted == 2 and len(stones) != 2:
            raise IllegalMove(
                f"Each turn after the first places exactly two stones, {example}; "
                f"you gave {len(stones)} cell{'s' if len(stones) != 1 else ''}."
            )
        labels = board_for(state.size).labels
        if len(set(stones)) != len(stones):
            raise IllegalMove(
                f"{labels[stones[0]]} is given twice: the two stones go on two different cells."
            )
        for i in stones:
            mark = state.board[i]
            if mark != EMPTY:
                owner = state.players[SEAT_MARKS.index(mark)]
                raise IllegalMove(
                    f"{labels[i]} already holds a stone of {owner}: place stones on empty cells."
                )
        return tuple(sorted(stones))

    def _example_move(self, state: MajoritiesState) -> str:
        """A move that is legal right now: the first empty cells in reading order."""
        labels = board_for(state.size).labels
        empty = [labels[i] for i, mark in enumerate(state.board) if mark == EMPTY]
        return ",".join(empty[: state.stones_this_turn])

    def example_move(self, state: MajoritiesState, seat: int) -> str:
        """The first of `moves`, without making every pair of cells."""
        if seat not in self.to_move(state) or state.board.count(EMPTY) < state.stones_this_turn:
            return ""
        return self._example_move(state)

    # -- showing the board ---------------------------------------------------
    def viewpoint(self, state: MajoritiesState, viewer: int | None) -> int | None:
        return None  # nothing is hidden

    def render(self, state: MajoritiesState, viewer: int | None) -> str:
        board = board_for(state.size)
        last = set(state.last_move)

        def glyph(cell: tuple[int, int]) -> str:
            i = board.index_of_cell[cell]
            mark = state.board[i]
            if mark in SEAT_MARKS:
                seat = SEAT_MARKS.index(mark)
                return _LAST_MOVE_PLACEHOLDERS[seat] if i in last else GLYPHS[seat]
            return mark

        hexagon = [_bracket_last_move(line) for line in board.grid.render(glyph)]
        lines = hexagon + [""] + self._legend(state) + [""] + self._tally_table(state)
        return "\n".join(lines)

    def move_hint(self, state: MajoritiesState) -> str:
        if self.outcome(state) is not None:
            return ""
        mover = state.seat_to_play
        who = f"{state.players[mover]} ({GLYPHS[mover]})"
        example = self._example_move(state)
        if state.stones_this_turn == 1:
            return f"{who} places one stone this turn, like {example}."
        return f"{who} places two stones on empty cells, like {example}."

    def _legend(self, state: MajoritiesState) -> list[str]:
        sides = "   ".join(
            f"{GLYPHS[seat]} = {state.players[seat]} ({self.side_names[seat]})" for seat in (0, 1)
        )
        lines = [sides, ". = empty   - = dead cell (not part of the board)", *_numbers_legend(state.size)]
        if state.last_move:
            labels = board_for(state.size).labels
            cells = ",".join(labels[i] for i in state.last_move)
            mover = SEAT_MARKS.index(state.board[state.last_move[0]])
            lines.append(f"({GLYPHS[mover]}) = last move, {state.players[mover]} {cells}")
        return lines

    def _tally_table(self, state: MajoritiesState) -> list[str]:
        counts = tallies(state.size, state.board)
        names = [f"{GLYPHS[seat]} {state.players[seat]}" for seat in (0, 1)]
        widths = [max(len(name), 3) for name in names]
        header = (
            f"{'Lines won':<10}  {names[0]:>{widths[0]}}  {names[1]:>{widths[1]}}  open  held by"
        )
        rows = [header]
        for direction, tally in counts.items():
            holder = "-" if tally.holder is None else state.players[tally.holder]
            rows.append(
                f"{DIRECTION_TITLES[direction]:<10}  {tally.lines_won[0]:>{widths[0]}}  "
                f"{tally.lines_won[1]:>{widths[1]}}  {tally.open_lines:>4}  {holder}"
            )
        line_count = 2 * state.size - 1
        rows.append(
            f"A direction needs {line_count // 2 + 1} of its {line_count} lines; "
            "the game needs 2 directions."
        )
        return rows

    # -- storage ---------------------------------------------------------------
    def encode(self, state: MajoritiesState) -> dict[str, Any]:
        """The default, with the last move's cells as their labels."""
        labels = board_for(state.size).labels
        return to_data(state) | {"last_move": [labels[i] for i in state.last_move]}

    def decode(self, data: dict[str, Any]) -> MajoritiesState:
        index_of_label = board_for(data["size"]).index_of_label
        last_move = tuple(index_of_label[label] for label in data["last_move"])
        return from_data(MajoritiesState, data, last_move=last_move)

    def help(self) -> str:
        return HELP


HELP = """\
Majorities (a game by Bill Taylor)

Sometimes a minority, well placed, carries the vote: win a majority of
the stones in a line, a majority of the lines in a direction, and a
majority of the directions.

The board is a hexagon of hexagonal cells. A few cells, drawn as -, are
dead: they are not part of the board, nobody plays there and they count
for nothing. They are placed so that every line has an odd number of
live cells.

Rows are lettered from the top (a, b, c, ...) and the cells of a row
are numbered from its left end, starting at 1: c1 is the first cell of
the third row. Row letters stand left of the board. The numbers above,
below and right of it are not cells: each ends a slant of cells that
all have that number in their rows (a 4 ends a slant like a4, b4, c4).
The last move's stones are shown in brackets, like (X).

Play
  The first player puts one stone on any empty cell. After that, each
  turn puts two stones on two different empty cells.

Lines and directions
  The cells form straight lines in three directions: the rows, the
  NE-SW diagonals and the NW-SE diagonals (dead cells are skipped, they
  do not cut a line). Each direction has 2*size-1 lines.
  - You win a line as soon as you hold more than half of its live
    cells, even before it is full.
  - You win a direction as soon as you have won more than half of its
    lines.
  - You win the game as soon as you hold two of the three directions.
  Won lines and directions are never lost again. The game always ends
  with a winner, at the latest when the board is full. The board mail
  counts, for each direction, the lines won by each player, the lines
  still open and who holds the direction.

Moves
  majorities move 101 alice secret e5     (the first turn: one stone)
  majorities move 101 bob secret a5,f3    (every later turn: two stones)
  (cells of the default board; the board mail suggests a legal move.)
  Case does not matter, the two cells may come in either order and may
  be separated by a comma or spaces: "F3, A5" is the same move as
  "a5,f3".

Options
  -size=N   cells along each edge of the hexagon: 3, 5 or 7 (default 5).
            Size 3 has 15 live cells, size 5 has 55, size 7 has 117.

Starting a game
  majorities challenge alice bob
  majorities challenge -size=7 alice bob
The first userid plays X (Black) and moves first.
"""
