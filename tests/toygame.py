"""Noughts and crosses: the small test-only game that drives the service tests.

With `-secret` each player first names a square secretly (`bonus b2`), in
either order, which exercises simultaneous set-up moves and hidden
information in mails.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from pbmserv.gamekit import Drawing, Game, IllegalMove, Ink, Kind, Mark, Option, Outcome, Panel, Seat, SquareGrid


@dataclass(frozen=True)
class ToyState:
    players: tuple[str, ...]
    size: int
    marks: tuple[tuple[str, ...], ...]  # marks[rank][file]: "", "X" or "O"
    bonus: tuple[str | None, ...] | None  # each seat's secret square, None = not chosen
    turn: int
    last: str | None = None


@dataclass(frozen=True)
class ToyMove:
    """A mark on a square, or (secret) the naming of one's bonus square."""

    square: str
    secret: bool = False

    def __str__(self) -> str:
        return f"bonus {self.square}" if self.secret else self.square


class Toy(Game):
    name = "toy"
    title = "Toy"
    state_type = ToyState
    side_names = ("X", "O")
    draws = True
    options = (
        Option("size", 3, (3, 4), "board size"),
        Option("secret", False, description="each player first names a secret square"),
    )

    def new(self, options: Mapping[str, str | None], players: Sequence[str]) -> ToyState:
        values = self.resolve_options(options)
        size = values["size"]
        return ToyState(
            tuple(players), size, tuple(("",) * size for _ in range(size)),
            (None, None) if values["secret"] else None, 0,
        )

    def grid(self, state: ToyState) -> SquareGrid:
        return SquareGrid(state.size, state.size)

    def _setting_up(self, state: ToyState) -> bool:
        return state.bonus is not None and None in state.bonus

    def to_move(self, state: ToyState) -> frozenset[int]:
        if self.outcome(state) is not None:
            return frozenset()
        if self._setting_up(state):
            return frozenset(seat for seat, square in enumerate(state.bonus or ()) if square is None)
        return frozenset({state.turn})

    def read_move(self, state: ToyState, seat: int, text: str) -> ToyMove:
        if seat not in self.to_move(state):
            raise IllegalMove("It is not your turn.")
        words = text.lower().split()
        grid = self.grid(state)
        if self._setting_up(state):
            if len(words) != 2 or words[0] != "bonus":
                raise IllegalMove("First name your secret square, like 'bonus b2'.")
            grid.parse(words[1])
            return ToyMove(words[1], secret=True)
        if len(words) != 1:
            raise IllegalMove("A move is one square, like b2.")
        file, rank = grid.parse(words[0])
        if state.marks[rank][file]:
            raise IllegalMove(f"{words[0]} is taken: choose an empty square.")
        return ToyMove(words[0])

    def apply(self, state: ToyState, seat: int, move: ToyMove) -> ToyState:
        if move.secret:
            bonus = list(state.bonus or ())
            bonus[seat] = move.square
            return replace(state, bonus=tuple(bonus))
        file, rank = self.grid(state).parse(move.square)
        marks = [list(row) for row in state.marks]
        marks[rank][file] = self.side_names[seat]
        return replace(state, marks=tuple(tuple(r) for r in marks), turn=1 - seat, last=move.square)

    def legal_moves(self, state: ToyState, seat: int) -> list[str]:
        if seat not in self.to_move(state):
            return []
        grid = self.grid(state)
        if self._setting_up(state):
            return [f"bonus {grid.label(cell)}" for cell in grid.cells]
        return [grid.label(c) for c in grid.cells if not state.marks[c[1]][c[0]]]

    def _lines(self, state: ToyState) -> list[list[tuple[int, int]]]:
        n = state.size
        lines = [[(f, r) for f in range(n)] for r in range(n)] + [[(f, r) for r in range(n)] for f in range(n)]
        return lines + [[(i, i) for i in range(n)], [(i, n - 1 - i) for i in range(n)]]

    def outcome(self, state: ToyState) -> Outcome | None:
        for line in self._lines(state):
            marks = {state.marks[r][f] for f, r in line}
            if len(marks) == 1 and "" not in marks:
                winner = self.side_names.index(marks.pop())
                return Outcome((winner,), None, "three in a row" if state.size == 3 else "four in a row")
        if all(all(row) for row in state.marks):
            return Outcome((), None, "the board is full")
        return None

    def draw(self, state: ToyState, viewer: int | None) -> Drawing:
        grid = self.grid(state)
        marks = {
            (file, rank): (Mark(Kind.STONE, mark, self.side_names.index(mark), last=grid.label((file, rank)) == state.last),)
            for rank, row in enumerate(state.marks)
            for file, mark in enumerate(row)
            if mark
        }
        notes = [f"X = {state.players[0]}, O = {state.players[1]}" + (f"; last move {state.last}" if state.last else "")]
        if state.bonus is not None and viewer is not None and state.bonus[viewer]:
            notes.append(f"Your secret square: {state.bonus[viewer]}")
        seats = tuple(Seat(player, side, side, ink) for player, side, ink in zip(state.players, self.side_names, (Ink.BLACK, Ink.WHITE)))
        return Drawing(
            f"Toy, {state.size}x{state.size}: {state.players[0]} (X) against {state.players[1]} (O)",
            seats, (Panel(grid, marks),), notes=tuple(notes), last_move=state.last or "",
        )

    def text(self, drawing: Drawing) -> str:
        panel = drawing.panels[0]

        def glyph(cell: tuple[int, int]) -> str:
            mark = panel.top(cell)
            return "." if mark is None else mark.glyph

        return "\n".join([*panel.grid.render(glyph), *drawing.notes]) + "\n"

    def help(self) -> str:
        return "Noughts and crosses for testing. A move is one square, like b2."


class Stuck(Toy):
    """Toy with a bug: the move `forever` never returns (for the watchdog of
    `serve`, which must not let one such mail hold up all the others)."""

    name = "stuck"
    title = "Stuck"

    def read_move(self, state: ToyState, seat: int, text: str) -> ToyMove:
        while text.strip().lower() == "forever":
            time.sleep(0.5)
        return super().read_move(state, seat, text)
