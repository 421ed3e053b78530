"""Local majorities: what happens on the board after a claim.

A board is a list with one character per seat: `.` empty (a hidden
preference looks empty too), `R`/`B` a seat held by Red/Blue, `r`/`b` a
revealed preference of Red/Blue, which never changes colour.

Why `settle` always ends: every step either fills a seat that looked empty
(a flip of an empty seat or a reveal), which can happen at most once per
seat, or turns a held seat to the colour of the strict majority of its
completely held neighbourhood, which lowers the number of neighbouring pairs
of different colours. So the pair (seats looking empty, pairs of different
colours) falls at every step.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

SIDES = ("Red", "Blue")
EMPTY = "."
SEAT = ("R", "B")
PREFERENCE = ("r", "b")
RED_MARKS = frozenset("Rr")

#: a board event: (kind, seat index, the seat's new character)
Event = tuple[str, int, str]


def settle(
    neighbours: Sequence[Sequence[int]],
    board: list[str],
    hidden: dict[int, str],
    claimer: int,
    order: Sequence[int],
    starts: Iterable[int],
) -> list[Event]:
    """Reveal surrounded hidden preferences and flip local majorities until
    none is left; changes `board` and `hidden` (seat -> its preference mark)
    in place and returns what happened, in order.

    Only the seats in `starts` and their surroundings are examined at first;
    the rest of the board must already be settled. Among seats due to flip,
    those turning to the claimer's colour go first; within a kind the seats
    named in `order` go first in that order, then the rest in reading order.
    """
    rank = {seat: position for position, seat in enumerate(order)}
    unranked = len(rank)
    due: dict[int, str] = {}
    surrounded: set[int] = set()

    def review(seat: int) -> None:
        reds = blues = 0
        for neighbour in neighbours[seat]:
            mark = board[neighbour]
            if mark == EMPTY:
                due.pop(seat, None)
                surrounded.discard(seat)
                return
            if mark in RED_MARKS:
                reds += 1
            else:
                blues += 1
        if seat in hidden:
            surrounded.add(seat)
            return
        here = board[seat]
        if here in PREFERENCE:
            return
        target = "R" if reds > blues else "B" if blues > reds else here
        if target == here:
            due.pop(seat, None)
        else:
            due[seat] = target

    def changed(seat: int) -> None:
        review(seat)
        for neighbour in neighbours[seat]:
            review(neighbour)

    for seat in starts:
        changed(seat)
    events: list[Event] = []
    while surrounded or due:
        if surrounded:
            revealed = sorted(surrounded)
            surrounded.clear()
            for seat in revealed:
                board[seat] = hidden.pop(seat)
                events.append(("surrounded", seat, board[seat]))
            for seat in revealed:
                changed(seat)
            continue
        wanted = SEAT[claimer]
        candidates = [seat for seat, target in due.items() if target == wanted] or list(due)
        seat = min(candidates, key=lambda s: (rank.get(s, unranked), s))
        board[seat] = due.pop(seat)
        events.append(("flip", seat, board[seat]))
        changed(seat)
    return events
