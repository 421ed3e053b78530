"""What a game of Parliament is at one moment, shared by the rules and the
board mail."""

from __future__ import annotations

from dataclasses import dataclass, replace

from games.parliament.cascade import EMPTY, PREFERENCE, Event
from games.parliament.chambers import LAYOUTS, Layout


@dataclass(frozen=True)
class State:
    players: tuple[str, ...]
    boards: str
    #: each player's preference seats in reading order; None until chosen
    preferences: tuple[tuple[int, ...] | None, ...]
    #: one mark per seat, see games.parliament.cascade
    board: str
    next_seat: int = 0
    #: the final board of every finished round
    finished_rounds: tuple[str, ...] = ()
    last_claimer: int | None = None
    #: what the last turn did, in order; ("round", n, "") starts round n
    last_events: tuple[Event, ...] = ()

    @property
    def layout(self) -> Layout:
        return LAYOUTS[self.boards]

    @property
    def in_setup(self) -> bool:
        return None in self.preferences

    def cancelled(self) -> frozenset[int]:
        """Seats both players named: ordinary seats."""
        first, second = self.preferences
        if first is None or second is None:
            return frozenset()
        return frozenset(first) & frozenset(second)

    def live_preferences(self, seat: int) -> tuple[int, ...]:
        cancelled = self.cancelled()
        return tuple(s for s in self.preferences[seat] or () if s not in cancelled)

    def hidden(self) -> dict[int, str]:
        """Unrevealed preferences: seat index -> its preference mark."""
        if self.in_setup:
            return {}
        return {
            s: PREFERENCE[player]
            for player in (0, 1)
            for s in self.live_preferences(player)
            if self.board[s] == EMPTY
        }


def known_to(state: State, seat: int) -> State:
    """`state` as `seat` can know it: the opponent's preferences that are
    not revealed are left out, so those seats are ordinary empty seats.
    Kept are the revealed ones and those both named (each player is told
    of those); in the set-up, the opponent's choice, if sent, is none."""
    other = 1 - seat
    theirs = state.preferences[other]
    if theirs is None:
        return state
    if state.in_setup:
        known: tuple[int, ...] = ()
    else:
        cancelled = state.cancelled()
        known = tuple(s for s in theirs if s in cancelled or state.board[s] != EMPTY)
    preferences = tuple(known if player == other else chosen for player, chosen in enumerate(state.preferences))
    return replace(state, preferences=preferences)
