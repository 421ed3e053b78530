"""What a game of Parliament is at one moment, shared by the rules and the
board mail."""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from math import comb

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


def determinize(state: State, seat: int, rng: random.Random) -> State:
    """A whole state `seat` cannot tell from `state`: the opponent's hidden
    preferences drawn anew, uniformly among every choice consistent with
    what `seat` sees. Only `known_to(state, seat)` is read, so the real
    choice plays no part.

    A hidden preference is a seat that looks empty, is not one of `seat`'s
    own (both naming it would have cancelled them, which `seat` is told)
    and has a neighbour that looks empty (a surrounded one is revealed).
    The opponent named at most the limit, those known included; and while
    the round runs, at least one seat that looks empty is no preference."""
    other = 1 - seat
    if state.preferences[other] is None or state.finished_rounds:
        return state  # nothing chosen yet, or every preference is in place since the first hung round
    known = known_to(state, seat)
    known_theirs = known.preferences[other] or ()
    board, neighbours = known.board, known.layout.neighbours
    if known.in_setup:
        candidates = list(range(known.layout.size))
        room = len(candidates)
    else:
        own = set(known.live_preferences(seat))
        looks_empty = [s for s, mark in enumerate(board) if mark == EMPTY and s not in own]
        candidates = [s for s in looks_empty if any(board[n] == EMPTY for n in neighbours[s])]
        room = len(looks_empty) - 1
    most = min(known.layout.preference_limit - len(known_theirs), len(candidates), room)
    # every subset of at most `most` candidates equally likely: draw its size by how many there are
    count = rng.choices(range(most + 1), weights=[comb(len(candidates), k) for k in range(most + 1)])[0]
    drawn = rng.sample(candidates, count)
    preferences = tuple(
        tuple(sorted(known_theirs + tuple(drawn))) if player == other else chosen
        for player, chosen in enumerate(known.preferences)
    )
    return replace(known, preferences=preferences)
