"""The rules of Majority and Psychomachia that move stones (as `majority
help` gives them): whose turn it is, where a stone may go, and what hiding,
revealing and placing do to a board. Who holds a trick is games.majority.tricks."""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from functools import cache
from typing import TypeVar

from games.majority.state import BLACK, COLOUR, EMPTY, SIDES, STONE, UNKNOWN, WHITE, MajorityState
from pbmserv.gamekit import IllegalMove, SquareGrid

#: a square of each side's colour on every board size, for examples in messages
#: (see example_square: another square when this one cannot be played)
EXAMPLE = ("e5", "d5")

T = TypeVar("T")


@dataclass(frozen=True)
class Geometry:
    """The fixed facts of one board size."""

    size: int
    grid: SquareGrid
    labels: tuple[str, ...]  # by cell index (rank * size + file)
    sides: tuple[int, ...]  # by cell index: whose colour the square is
    #: each line, rows 1.. then columns a.., as a slice of the board string
    line_slices: tuple[slice, ...]
    lines_through: tuple[tuple[int, int], ...]  # by cell index: its row, its column
    #: each side's squares in reading order
    side_cells: tuple[tuple[int, ...], ...]

    def index(self, cell: tuple[int, int]) -> int:
        return cell[1] * self.size + cell[0]


@cache
def geometry(size: int) -> Geometry:
    grid = SquareGrid(size, size)
    index = {cell: cell[1] * size + cell[0] for cell in grid.cells}
    cells = sorted(index, key=index.__getitem__)
    sides = tuple(WHITE if grid.is_dark(cell) else BLACK for cell in cells)
    return Geometry(
        size=size,
        grid=grid,
        labels=tuple(grid.label(cell) for cell in cells),
        sides=sides,
        line_slices=tuple(slice(rank * size, (rank + 1) * size) for rank in range(size))
        + tuple(slice(file, None, size) for file in range(size)),
        lines_through=tuple((i // size, size + i % size) for i in range(size * size)),
        side_cells=tuple(
            tuple(index[cell] for cell in grid.cells if sides[index[cell]] == seat) for seat in (WHITE, BLACK)
        ),
    )


# -- whose turn ----------------------------------------------------------------------
def to_move(state: MajorityState) -> frozenset[int]:
    if state.over:
        return frozenset()
    if state.in_setup:
        return frozenset(seat for seat in (WHITE, BLACK) if state.hidden[seat] is None)
    return frozenset({state.mover})


def not_your_turn(state: MajorityState, seat: int) -> str:
    if state.in_setup:
        waiting = [state.players[s] for s in (WHITE, BLACK) if state.hidden[s] is None]
        return f"You have hidden your stone already: waiting for {waiting[0]} to hide theirs."
    return f"It is not your turn: {state.players[state.mover]} ({SIDES[state.mover]}) is to move."


# -- where a stone may go --------------------------------------------------------------
def check_colour(state: MajorityState, seat: int, square: int, verb: str) -> None:
    geo = geometry(state.size)
    if geo.sides[square] != seat:
        raise IllegalMove(
            f"{geo.labels[square]} is a {COLOUR[1 - seat]} square: "
            f"{SIDES[seat]} {verb} on {COLOUR[seat]} squares."
        )


def check_placement(state: MajorityState, seat: int, square: int) -> None:
    label = geometry(state.size).labels[square]
    check_colour(state, seat, square, "plays")
    if state.board[square] != EMPTY:
        raise IllegalMove(f"{label} already holds your stone: play on an empty {COLOUR[seat]} square.")
    if square == state.hidden[seat]:
        raise IllegalMove(f"{label} holds your hidden stone: play on another empty {COLOUR[seat]} square.")


def example_square(state: MajorityState, seat: int) -> str:
    """A square `seat` could play now, for examples in messages: e5 / d5
    while empty, else the first empty square of the seat's colour. It
    leaves out the seat's own hidden square (the help suggests hide e5,
    and "reveal,e5" would then be a reveal alone), so it is shown only to
    that seat, or once the hidden stone is revealed."""
    geo = geometry(state.size)
    preferred = geo.index(geo.grid.parse(EXAMPLE[seat]))
    free = (
        square
        for square in (preferred, *geo.side_cells[seat])
        if state.board[square] == EMPTY and square != state.hidden[seat]
    )
    return geo.labels[next(free, preferred)]


# -- what a move does --------------------------------------------------------------------
def hide(state: MajorityState, seat: int, square: int) -> MajorityState:
    return replace(state, hidden=_set(state.hidden, seat, square), last=(seat, "hide", square))


def reveal(state: MajorityState, seat: int) -> MajorityState:
    """`seat` shows its hidden stone at the start of this turn; the turn goes on."""
    square = state.hidden[seat]
    assert square is not None
    return replace(state, revealed_at=_set(state.revealed_at, seat, state.placed), last=(seat, "reveal", square))


def place(state: MajorityState, seat: int, square: int, *, revealing: bool = False) -> MajorityState:
    """`seat`'s stone on `square` (after revealing its hidden stone when
    `revealing`), recording each line it completes: every square of the
    seat's colour on the line then holds the seat's stone, the hidden one
    counted. When this was the last stone, the hidden stones are revealed."""
    if revealing:
        state = reveal(state, seat)
    geo = geometry(state.size)
    board = state.board[:square] + STONE[seat] + state.board[square + 1 :]
    own_hidden = state.hidden_square(seat)
    hidden_lines = geo.lines_through[own_hidden] if own_hidden is not None else ()
    completions = list(state.completed_at[seat])
    for line in geo.lines_through[square]:
        stones = board[geo.line_slices[line]].count(STONE[seat]) + (line in hidden_lines)
        if stones == state.size // 2:  # a line has size / 2 squares of each colour
            completions[line] = state.placed
    after = replace(
        state,
        board=board,
        placed=state.placed + 1,
        completed_at=_set(state.completed_at, seat, tuple(completions)),
        last=(seat, "reveal,place" if revealing else "place", square),
    )
    return revealed_now(after) if after.over else after


def revealed_now(state: MajorityState) -> MajorityState:
    """`state` with every hidden stone still hidden revealed at the start of this turn."""
    revealed_at = tuple(
        state.placed if state.hidden_square(seat) is not None and at is None else at
        for seat, at in enumerate(state.revealed_at)
    )
    if revealed_at == state.revealed_at:
        return state  # nothing hidden (plain Majority) or all revealed: no copy on the bots' hot path
    return replace(state, revealed_at=(revealed_at[WHITE], revealed_at[BLACK]))


def known_to(state: MajorityState, seat: int) -> MajorityState:
    """`state` as `seat` can know it. The opponent's hidden stone, until it
    is revealed, is hidden on an UNKNOWN square: it cannot be revealed, its
    lines count without it (so the completions it made are not there), and
    the opponent may play anywhere on their colour."""
    other = 1 - seat
    square = state.hidden_square(other)
    if square is None or state.revealed_at[other] is not None:
        return state
    lines = geometry(state.size).lines_through[square]
    completions = tuple(None if line in lines else turn for line, turn in enumerate(state.completed_at[other]))
    last = (other, "hide", UNKNOWN) if state.last == (other, "hide", square) else state.last
    return replace(
        state,
        hidden=_set(state.hidden, other, UNKNOWN),
        completed_at=_set(state.completed_at, other, completions),
        last=last,
    )


def determinize(state: MajorityState, seat: int, rng: random.Random) -> MajorityState:
    """A whole state `seat` cannot tell from `state`: the opponent's
    unrevealed hidden stone moved to a square drawn uniformly among the
    empty squares of their colour (none of them can be ruled out: the
    stone was hidden on an empty square and nothing is ever placed on it).
    Only `known_to(state, seat)` is read, so the real square plays no part."""
    other = 1 - seat
    if state.hidden[other] is None or state.revealed_at[other] is not None:
        return state
    known = known_to(state, seat)
    geo = geometry(state.size)
    square = rng.choice([i for i in geo.side_cells[other] if known.board[i] == EMPTY])
    completions = list(known.completed_at[other])
    for line in geo.lines_through[square]:
        stones = known.board[geo.line_slices[line]].count(STONE[other])
        if stones + 1 == state.size // 2:
            completions[line] = _completion_turn(known, other, line, rng)
    last = (other, "hide", square) if known.last == (other, "hide", UNKNOWN) else known.last
    return replace(
        known,
        hidden=_set(known.hidden, other, square),
        completed_at=_set(known.completed_at, other, tuple(completions)),
        last=last,
    )


def _completion_turn(state: MajorityState, side: int, line: int, rng: random.Random) -> int:
    """The turn of `side`'s last stone on `line`, which completed it with
    the hidden stone. The state keeps no order of the stones, so unless that
    stone is the last one placed the turn is drawn among `side`'s turns that
    could have placed it: from their n-th stone (n stones of theirs on the
    line) up to their latest one not known to be elsewhere."""
    geo = geometry(state.size)
    latest = state.placed - 1 if (state.placed - 1) % 2 == side else state.placed - 2
    if state.last is not None and state.last[:2] == (side, "place"):
        if line in geo.lines_through[state.last[2]]:
            return latest
        latest -= 2  # their latest stone is elsewhere
    on_line = state.board[geo.line_slices[line]].count(STONE[side])
    return rng.randrange(2 * (on_line - 1) + side, latest + 1, 2)


def _set(pair: tuple[T, T], seat: int, value: T) -> tuple[T, T]:
    return (value, pair[1]) if seat == WHITE else (pair[0], value)
