"""Bill Taylor's Majorities on the hexhex board (the rules `majorities help` gives).

A majority of stones wins a line, a majority of parallel lines wins a
direction, two of the three directions win the game.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import games.majorities.view as view
from games.majorities.board import (
    DIRECTION_TITLES,
    EMPTY,
    GLYPHS,
    SEAT_MARKS,
    SIDE_NAMES,
    MajoritiesState,
    Placement,
    board_for,
    tallies,
    winner,
)
from pbmserv.gamekit import Drawing, Game, IllegalMove, InvalidOption, Option, Outcome, from_data, to_data

_SEPARATORS = re.compile(r"[\s,]+")


class Majorities(Game):
    name = "majorities"
    title = "Majorities"
    playout_moves = 6  # lines still open weigh more than lines held
    min_players = 2
    max_players = 2
    side_names = SIDE_NAMES
    options = (Option("size", 5, (3, 5, 7), "cells along each edge of the hexagon"),)

    # -- the game ----------------------------------------------------------
    def new(self, options: Mapping[str, str | None], players: Sequence[str]) -> MajoritiesState:
        size = self.resolve_options(options)["size"]
        if len(players) != 2:
            raise InvalidOption("Majorities is a game for exactly two players.")
        return MajoritiesState(size, (players[0], players[1]), board_for(size).empty_board)

    def to_move(self, state: MajoritiesState) -> frozenset[int]:
        if winner(state) is not None:
            return frozenset()
        return frozenset({state.seat_to_play})

    def read_move(self, state: MajoritiesState, seat: int, text: str) -> Placement:
        outcome = self.outcome(state)
        if outcome is not None:
            won_by = state.players[outcome.winners[0]]
            raise IllegalMove(f"The game is over: {won_by} won {outcome.reason}.")
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
        won_by = winner(state)
        if won_by is None:
            return None
        counts = tallies(state.size, state.board)
        held = [direction for direction, tally in counts.items() if tally.holder == won_by]
        scores = tuple(
            float(sum(1 for tally in counts.values() if tally.holder == seat)) for seat in (0, 1)
        )
        titles = [DIRECTION_TITLES[direction] for direction in held]
        names = " and ".join([", ".join(titles[:-1]), titles[-1]])
        # a phrase for "Game won by alice: ...", hence no full stop
        held_text = "all 3 directions" if len(held) == 3 else f"{len(held)} of the 3 directions"
        return Outcome(winners=(won_by,), scores=scores, reason=f"{held_text} ({names})")

    def tally(self, state: MajoritiesState) -> tuple[float, ...]:
        """Lines won, a held direction counting as many more as it has lines
        (so two held directions always outweigh any lines the other holds)."""
        counts = tallies(state.size, state.board).values()
        per_direction = 2 * state.size - 1
        return tuple(
            float(sum(t.lines_won[seat] + per_direction * (t.holder == seat) for t in counts)) for seat in (0, 1)
        )

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

    def draw(self, state: MajoritiesState, viewer: int | None) -> Drawing:
        return view.draw(state)

    def text(self, drawing: Drawing) -> str:
        return view.text(drawing)

    def move_hint(self, state: MajoritiesState) -> str:
        if self.outcome(state) is not None:
            return ""
        mover = state.seat_to_play
        who = f"{state.players[mover]} ({GLYPHS[mover]})"
        example = self._example_move(state)
        if state.stones_this_turn == 1:
            return f"{who} places one stone this turn, like {example}."
        return f"{who} places two stones on empty cells, like {example}."

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
below and right of it are not cells: the cells with one number form
a slant that bends at the middle row, and the number stands at both of
its ends (the 1 above row a and the 1 below the last row: a1 down the
left edge to the middle row's 1, and on down to the last row's 1).
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
  still open and who holds the direction, and names every line won
  and open: a row by its letter (c), a diagonal by its end cells, the
  upper one first (a2-d1).

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
