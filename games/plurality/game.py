"""Plurality by João Pedro Neto: drop trominoes of two own stones and one of
the opponent's; empty regions belong to whoever has more stones around them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import games.plurality.view as view
from games.plurality.board import (
    BLACK,
    DEFAULT_HEX_SIZE,
    HEX_SIZES,
    SIDES,
    SQUARE_SIZES,
    WHITE,
    bits_of,
    layout_for,
    mask_of,
)
from games.plurality.board_text import board_text
from games.plurality.moves import Pass, PluralityMove, drops_for, read_drop
from games.plurality.open_drops import example_drop, open_drops
from games.plurality.state import PluralityState, estimated_points, territory_points
from pbmserv.gamekit import Drawing, Game, IllegalMove, InvalidOption, Option, Outcome, from_data, to_data


class Plurality(Game):
    name = "plurality"
    title = "Plurality"
    playout_moves = 6  # territory still open weighs more than territory held
    min_players = 2
    max_players = 2
    side_names = SIDES
    options = (
        Option(
            "size",
            SQUARE_SIZES[0],
            HEX_SIZES + SQUARE_SIZES,
            "points a side of the square board: 13 or 19 (default 13); "
            f"on -board=hex cells per edge: 5 to 9 (default {DEFAULT_HEX_SIZE})",
        ),
        Option("board", "square", ("square", "hex"), "square Go board or hexhex board"),
        Option(
            "ties",
            "neutral",
            ("neutral", "parity"),
            "a tied territory is neutral, or (parity) Black's when even-sized, White's when odd",
        ),
    )

    # -- setting up ----------------------------------------------------------
    def new(self, options: Mapping[str, str | None], players: Sequence[str]) -> PluralityState:
        values = self.resolve_options(options)
        board, size = values["board"], values["size"]
        size_given = any(name.lower() == "size" for name in options)
        if board == "hex":
            if not size_given:
                size = DEFAULT_HEX_SIZE
            elif size not in HEX_SIZES:
                raise InvalidOption(
                    f"-size={size} does not fit the hex board: it has 5 to 9 cells per edge "
                    f"(default {DEFAULT_HEX_SIZE})."
                )
        elif size not in SQUARE_SIZES:
            raise InvalidOption(
                f"-size={size} is a hex board size: the square board is 13 or 19 points a side "
                "(add -board=hex for a hex board)."
            )
        if len(players) != 2:
            raise InvalidOption("Plurality is played by exactly two players.")
        return PluralityState(
            players=(players[0], players[1]),
            board=board,
            size=size,
            ties=values["ties"],
            black=0,
            white=0,
            turn=BLACK,
            passes=0,
            last_move="",
        )

    # -- playing ---------------------------------------------------------------
    def to_move(self, state: PluralityState) -> frozenset[int]:
        return frozenset() if state.passes >= 2 else frozenset({state.turn})

    def moves(self, state: PluralityState, seat: int) -> list[PluralityMove]:
        if seat not in self.to_move(state):
            return []
        drops = drops_for(state.board, state.size)
        return [drop for k in open_drops(layout_for(state.board, state.size), state) for drop in drops[k]] + [Pass()]

    def example_move(self, state: PluralityState, seat: int) -> str:
        """The first of `moves`, without listing the open drops."""
        if seat not in self.to_move(state):
            return ""
        return example_drop(layout_for(state.board, state.size), state) or "pass"

    def read_move(self, state: PluralityState, seat: int, text: str) -> PluralityMove:
        if state.passes >= 2:
            raise IllegalMove("The game is over: both players passed, so no more moves are taken.")
        if seat != state.turn:
            mover = state.players[state.turn]
            raise IllegalMove(f"It is not your turn: {mover} ({SIDES[state.turn]}) is to move.")
        if " ".join(text.lower().split()) == "pass":
            return Pass()
        return read_drop(state, seat, text)

    def apply(self, state: PluralityState, seat: int, move: PluralityMove) -> PluralityState:
        if isinstance(move, Pass):
            return replace(state, turn=1 - seat, passes=state.passes + 1, last_move="pass")
        shape = layout_for(state.board, state.size).shapes[move.shape]
        starred = 1 << shape.cells[move.star]
        own = shape.mask & ~starred
        if seat == BLACK:
            black, white = state.black | own, state.white | starred
        else:
            black, white = state.black | starred, state.white | own
        return replace(state, black=black, white=white, turn=1 - seat, passes=0, last_move=str(move))

    # -- the end -----------------------------------------------------------------
    def outcome(self, state: PluralityState) -> Outcome | None:
        if state.passes < 2:
            return None
        layout = layout_for(state.board, state.size)
        black, white = territory_points(layout, state)
        scores = (float(black), white + layout.komi)
        winner = BLACK if scores[BLACK] > scores[WHITE] else WHITE
        return Outcome(
            winners=(winner,),
            scores=scores,
            # a phrase for "Game won by alice: ...", hence short and without a full stop
            reason=(
                f"Black {view.number(scores[BLACK])} to White {view.number(scores[WHITE])} "
                f"(komi {view.number(layout.komi)} included)"
            ),
        )

    def tally(self, state: PluralityState) -> tuple[float, ...]:
        """The territory each side would own if the game ended now (the
        board mail's running totals), the komi left out."""
        black, white = territory_points(layout_for(state.board, state.size), state)
        return float(black), float(white)

    def judge(self, state: PluralityState) -> tuple[float, ...]:
        black, white = estimated_points(layout_for(state.board, state.size), state)
        return float(black), float(white)

    # -- showing -----------------------------------------------------------------
    def viewpoint(self, state: PluralityState, viewer: int | None) -> int | None:
        return None  # nothing is hidden

    def draw(self, state: PluralityState, viewer: int | None) -> Drawing:
        return view.draw_state(state, self.outcome(state))

    def text(self, drawing: Drawing) -> str:
        return board_text(drawing)

    # -- storing -------------------------------------------------------------------
    def encode(self, state: PluralityState) -> dict[str, Any]:
        """The default, with each side's stones as the labels of their points."""
        labels = layout_for(state.board, state.size).labels
        stones = {"black": [labels[i] for i in bits_of(state.black)], "white": [labels[i] for i in bits_of(state.white)]}
        return to_data(state) | stones

    def decode(self, data: dict[str, Any]) -> PluralityState:
        layout = layout_for(data["board"], data["size"])
        black, white = (mask_of(layout.cell_index(label) for label in data[side]) for side in ("black", "white"))
        return from_data(PluralityState, data, black=black, white=white)

    def help(self) -> str:
        return HELP


HELP = """\
Plurality (by Joao Pedro Neto) - a territory game of majorities.

Two players, Black and White, share the points of a Go board. Black
moves first. On your turn you either pass or drop three stones at once
on empty points that touch each other orthogonally: a straight line of
three or a bent L. Two of the three stones are yours and one is your
opponent's; you choose which point gets the opponent's stone. Stones
never move and are never captured.

No drop may ever leave four stones of any colours filling a 2x2 square.

The game ends when both players pass, one right after the other.

Scoring: every connected area of empty points is a territory. It
belongs to the player with more stones touching it (each stone counted
once, however many of its points it touches); when both have the same
number it is neutral. Each player scores the number of points in the
territories they own. White gets 5.5 extra points (komi) on 13x13 and
6.5 on 19x19, so there are no draws.

Moves:
  d4,e4,*e5   drop on d4, e4 and e5; the * marks the point that gets
              your opponent's stone (d4 and e4 are yours). The order
              of the points does not matter, nor do case or spaces
              (e5* works too); the move list shows the points in
              reading order, top row first: *e5,d4,e4.
  pass        pass your turn.
Columns are lettered a, b, ... skipping i, as on Go boards; rows are
numbered from the bottom.

Options:
  -size=N     13 or 19 points a side (default 13); with -board=hex
              the cells per edge, 5 to 9 (default 8).
  -board=B    square (default) or hex. The hex board is a hexagon of
              hexagonal cells, rows lettered from the top and cells
              numbered from the left of their row (c1 is the first
              cell of the third row). A drop there is any three
              connected cells: a line, a bend or a small triangle;
              instead of 2x2 squares, no four stones may form a
              rhombus (two triangles of cells sharing an edge), and
              White's komi is 0.5.
  -ties=T     neutral (default): a territory with as many Black as
              White stones around it belongs to nobody. parity: it
              belongs to Black when it has an even number of points,
              to White when odd.

The board: X and O are Black's and White's stones; + and - mark empty
points that Black or White would own if the game ended now, . neutral
ones; a < after a stone marks the stones of the last drop. Below the
board are both players' territory totals, White's with the komi, and
who moves next, with a drop that is legal now as an example.

Example challenges:
  plurality challenge -size=19 alice bob
  plurality challenge -board=hex -size=7 -ties=parity alice bob
"""
