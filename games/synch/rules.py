"""The rules of Move In Synch, In Opposition: whose turn it is and to send
what, which modes and directions are legal, what a round does, and when the
game ends."""

from __future__ import annotations

from dataclasses import dataclass, replace

from games.synch.state import (
    DIRECTION_FIRST,
    DIRECTIONS,
    EMPTY,
    MODE_FIRST,
    MODES,
    SYNCH,
    Cell,
    LastMove,
    SynchState,
    grid_for,
    marked,
    reading_order,
)
from pbmserv.gamekit import OPPOSITE


@dataclass(frozen=True)
class Phase:
    """Who must send what now."""

    kind: str  # "place", "mode" or "direction"
    seat: int


def directioner(state: SynchState) -> int:
    """The directioner of the round under way: the first player on odd rounds."""
    return state.moves_done % 2


def stall_limit(state: SynchState) -> int:
    return 2 * state.size * state.size


def phase(state: SynchState) -> Phase | None:
    if state.markers[0] is None:
        return Phase("place", 0)
    if state.markers[1] is None:
        return Phase("place", 1)
    if ending(state) is not None:
        return None
    leader = directioner(state)
    decider = 1 - leader
    if state.order == MODE_FIRST:
        if state.pending is None:
            return Phase("mode", decider)
        return Phase("direction", leader)
    if state.pending is None:
        return Phase("direction", leader)
    return Phase("mode", decider)


def decider_direction(direction: str, mode: str) -> str:
    return direction if mode == SYNCH else OPPOSITE[direction]


def legal_directions(state: SynchState) -> list[str]:
    """Directions the directioner may name now (mode-first: for the announced mode)."""
    leader = directioner(state)
    own = state.markers[leader]
    other = state.markers[1 - leader]
    assert own is not None and other is not None
    legal = []
    for direction in DIRECTIONS:
        if state.step(own, direction) is None:
            continue
        if state.order == MODE_FIRST:
            assert state.pending is not None
            if state.step(other, decider_direction(direction, state.pending)) is None:
                continue
        legal.append(direction)
    return legal


def _mode_leaves_direction(state: SynchState, mode: str) -> bool:
    """Mode-first: some direction keeps both markers on the board in this mode."""
    leader = directioner(state)
    own = state.markers[leader]
    other = state.markers[1 - leader]
    assert own is not None and other is not None
    return any(
        state.step(own, d) is not None and state.step(other, decider_direction(d, mode)) is not None
        for d in DIRECTIONS
    )


def decider_can_go(state: SynchState, direction: str, mode: str) -> bool:
    """Direction-first: the decider's own step in this mode stays on the board."""
    decider_cell = state.markers[1 - directioner(state)]
    assert decider_cell is not None
    return state.step(decider_cell, decider_direction(direction, mode)) is not None


def legal_modes(state: SynchState) -> list[str]:
    if state.order == MODE_FIRST:
        return [m for m in MODES if _mode_leaves_direction(state, m)]
    assert state.pending is not None
    return [m for m in MODES if decider_can_go(state, state.pending, m)]


# -- what a legal move does ------------------------------------------------
def legal_places(state: SynchState, seat: int) -> list[Cell]:
    """The squares `seat` may place their marker on, in the board's order:
    any but the other marker's."""
    taken = state.markers[1 - seat]
    return [cell for cell in grid_for(state.size).cells if cell != taken]


def place(state: SynchState, seat: int, cell: Cell) -> SynchState:
    other = state.markers[1 - seat]
    markers = (cell, other) if seat == 0 else (other, cell)
    return replace(
        state,
        markers=markers,
        marks=marked(state, {cell: seat}),
        last=LastMove(number=0, seat=seat, drawn=(cell,)),
    )


def announce(state: SynchState, mode: str) -> SynchState:
    if state.order == MODE_FIRST:
        return replace(state, pending=mode)
    assert state.pending is not None
    return _finish(state, state.pending, mode)


def go(state: SynchState, direction: str) -> SynchState:
    if state.order == MODE_FIRST:
        assert state.pending is not None
        return _finish(state, direction, state.pending)
    if any(decider_can_go(state, direction, m) for m in MODES):
        return replace(state, pending=direction)
    return _finish(state, direction, None)


def _finish(state: SynchState, direction: str, mode: str | None) -> SynchState:
    """Both halves are known (mode None: the decider cannot step): move and mark."""
    leader = directioner(state)
    decider = 1 - leader
    start = state.markers
    own_start, other_start = start[leader], start[decider]
    assert own_start is not None and other_start is not None
    own = state.step(own_start, direction)
    assert own is not None
    landings = {leader: own}
    if mode is not None:
        other = state.step(other_start, decider_direction(direction, mode))
        assert other is not None
        landings[decider] = other
    else:
        other = other_start
    if len(landings) == 2 and own == other:
        drawn: dict[Cell, int] = {}
    else:
        drawn = {cell: seat for seat, cell in landings.items() if state.is_empty(cell)}
    markers = (own, other) if leader == 0 else (other, own)
    return replace(
        state,
        markers=markers,
        marks=marked(state, drawn),
        moves_done=state.moves_done + 1,
        pending=None,
        quiet_moves=0 if drawn else state.quiet_moves + 1,
        last=LastMove(
            number=state.moves_done + 1,
            seat=leader,
            direction=direction,
            mode=mode,
            start=start,
            drawn=tuple(sorted(drawn, key=reading_order)),
        ),
    )


def shown_markers(state: SynchState) -> tuple[Cell | None, Cell | None]:
    """Where the markers stand on the board: in the direction-first order the
    directioner has already stepped while the decider is choosing."""
    if state.order != DIRECTION_FIRST or state.pending is None:
        return state.markers
    leader = directioner(state)
    own = state.markers[leader]
    assert own is not None
    stepped = state.step(own, state.pending)
    if leader == 0:
        return stepped, state.markers[1]
    return state.markers[0], stepped


# -- the end ---------------------------------------------------------------
def ending(state: SynchState) -> tuple[str, str] | None:
    """Why the game is over, if it is: a short phrase (", alice cannot
    catch up") and the full explanation for the board mail."""
    if state.markers[1] is None:
        return None
    counts = state.counts()
    empty = state.marks.count(EMPTY)
    if empty == 0:
        return ", every square marked", "every square is marked"
    for seat in (0, 1):
        if counts[seat] > counts[1 - seat] + empty:
            loser = state.players[1 - seat]
            return (
                f", {loser} cannot catch up",
                f"{loser} cannot catch up with only "
                f"{empty} empty square{'s' if empty != 1 else ''} left",
            )
    if state.quiet_moves >= stall_limit(state):
        return (
            f" after {state.quiet_moves} rounds without a new symbol",
            f"{state.quiet_moves} rounds in a row brought no new symbol",
        )
    return None
