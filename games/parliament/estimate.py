"""How a round of Parliament may end, for the bots: the seats each side
can expect to hold once every seat is filled.

The tally counts the seats held now, but early in a round most seats are
empty and a held seat whose surroundings fill with the other colour is
lost, so the tally says little about the end. The estimate looks one step
further: every seat ends with the colour of the strict majority of its
completed surroundings (keeping its colour on a tie, an even chance for an
empty one), every surrounding seat still open going to either side with
even chances. Preferences, hidden ones included, count for their owner
around them and are no seats.

The search judges a position at every step, so the seats are counted as
bit masks (one bit per seat) rather than seat by seat.
"""

from __future__ import annotations

from functools import cache
from math import comb

from games.parliament.cascade import EMPTY, PREFERENCE, SEAT
from games.parliament.chambers import Layout
from games.parliament.state import State

#: the most surrounding seats a seat has; a (lead, open seats) pair is kept as one index
_MOST = 8
_SPAN = 2 * _MOST + 1


def _mask_table(marks: str) -> dict[int, str]:
    """A `str.translate` table writing 1 for `marks` and 0 for the others."""
    every = EMPTY + "".join(SEAT) + "".join(PREFERENCE)
    return str.maketrans({mark: "1" if mark in marks else "0" for mark in every})


_RED = _mask_table(SEAT[0] + PREFERENCE[0])
_BLUE = _mask_table(SEAT[1] + PREFERENCE[1])
_OPEN = _mask_table(EMPTY)


def _chances(lead: int, open_seats: int) -> tuple[float, float]:
    """(Red wins the surroundings, a tie) when Red leads them by `lead`
    and each of `open_seats` goes either way with even chances."""
    red = tie = 0.0
    for reds in range(open_seats + 1):
        chance = comb(open_seats, reds) / 2**open_seats
        final = lead + 2 * reds - open_seats
        if final > 0:
            red += chance
        elif final == 0:
            tie += chance
    return red, tie


def _red_chances(keeps: float) -> tuple[float, ...]:
    """Red's chance to end with a seat, by index (lead + _MOST) * _SPAN + open
    seats, for a seat that is Red's on a tie with chance `keeps`."""
    table = [0.0] * (_SPAN * _SPAN)
    for lead in range(-_MOST, _MOST + 1):
        for open_seats in range(_MOST + 1):
            red, tie = _chances(lead, open_seats)
            table[(lead + _MOST) * _SPAN + open_seats] = red + tie * keeps
    return tuple(table)


#: by the seat's own mark: Red's, Blue's, empty
_TABLES = {SEAT[0]: _red_chances(1.0), SEAT[1]: _red_chances(0.0), EMPTY: _red_chances(0.5)}


@cache
def _surroundings(layout: Layout) -> tuple[tuple[int, int], ...]:
    """Each seat's surrounding seats as a bit mask, and its weight: 2 in a
    chamber the winner must also carry, else 1."""
    chamber = layout.must_hold
    return tuple(
        (sum(1 << n for n in around), 2 if chamber is not None and chamber.first <= seat < chamber.first + chamber.size else 1)
        for seat, around in enumerate(layout.neighbours)
    )


def _mask(board: str, table: dict[int, str]) -> int:
    """Bit i set where seat i's mark is one `table` writes as 1."""
    return int(board.translate(table)[::-1], 2)


def expected_seats(state: State) -> tuple[float, float]:
    """The seats Red and Blue may expect to hold at the round's end, the
    seats of a chamber the winner must also carry counting twice (as in
    the tally)."""
    board = state.board
    hidden = state.hidden()
    if hidden:
        marks = list(board)
        for seat, mark in hidden.items():
            marks[seat] = mark
        board = "".join(marks)
    red, blue, empty = _mask(board, _RED), _mask(board, _BLUE), _mask(board, _OPEN)
    red_total = 0.0
    seats = 0
    for (around, weight), mark in zip(_surroundings(state.layout), board):
        table = _TABLES.get(mark)
        if table is None:
            continue  # a preference
        lead = (red & around).bit_count() - (blue & around).bit_count()
        red_total += weight * table[(lead + _MOST) * _SPAN + (empty & around).bit_count()]
        seats += weight
    return red_total, seats - red_total
