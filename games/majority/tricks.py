"""Who holds each trick, and what the tricks score (the rules `majority help` gives).

Without hidden stones a trick is simply the first completer's. With them,
when a completion counts depends on when the other side could see it, so
the rule is told in moments: the turns are numbered from 0 in the order
played (turn k places stone k; White's turns are even), and a reveal comes
at the start of its owner's turn, before that turn's stone. The final
reveal, once all stones are placed, is at the start of the turn that never
comes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from games.majority.rules import geometry
from games.majority.state import BLACK, STONE, WHITE, MajorityState


class Moment(NamedTuple):
    """The start of `turn` (when its mover may reveal), or its stone."""

    turn: int
    stone_placed: bool


def start_of(turn: int) -> Moment:
    return Moment(turn, stone_placed=False)


def stone_of(turn: int) -> Moment:
    return Moment(turn, stone_placed=True)


class Completion(NamedTuple):
    """A side's completion of one line."""

    side: int
    turn: int  # the turn whose stone completed it
    shown: Moment | None  # since when the other side can see it; None: not yet (it needs a hidden stone)


class Trick(NamedTuple):
    """One line as a viewer knows it."""

    holder: int | None = None  # who has won it (as far as the viewer knows)
    waiting: int | None = None  # whose unrevealed hidden stone would take it on revealing now
    late: int | None = None  # who completed it first but did not reveal in time


OPEN = Trick()


def judge_trick(completions: Sequence[Completion], now: Moment) -> Trick:
    """Who holds a trick at `now`, from the completions of it that one viewer knows.

    The rule, in our words: the first side to complete a trick wins it, for
    good. A completion that needs a hidden stone counts from the stone that
    made it, but only once the hidden stone is revealed. If the other side
    completes the trick later, the first side keeps it only by revealing no
    later than their own next turn after that later completion could be
    seen; otherwise the later completion stands. The hidden stones still
    unrevealed when all stones are placed are revealed then, in time for
    every trick whose deadline has not passed.
    """
    if not completions:
        return OPEN
    first, *later = sorted(completions, key=lambda completion: completion.turn)
    rival = later[0] if later else None
    if rival is None or rival.shown is None:
        # no rival anyone can see: the first completion wins as soon as it is shown
        return Trick(holder=first.side) if first.shown is not None else Trick(waiting=first.side)
    deadline = start_of(rival.shown.turn + 1)  # the first side's next turn after the rival was shown
    if first.shown is not None and first.shown <= deadline:
        return Trick(holder=first.side)
    if first.shown is None and now <= deadline:
        return Trick(holder=rival.side, waiting=first.side)
    return Trick(holder=rival.side, late=first.side)


@dataclass(frozen=True)
class Knowledge:
    """What one viewer knows of the tricks and of the stones on each line."""

    tricks: tuple[Trick, ...]
    counts: tuple[tuple[int, ...], tuple[int, ...]]  # stones per side per line
    known_hidden: tuple[int | None, int | None]


def knowledge(state: MajorityState, viewer: int | None) -> Knowledge:
    """The tricks and line counts as `viewer` (a seat, or None for the public)
    may know them: a hidden stone counts only once revealed, or for its owner."""
    geo = geometry(state.size)
    squares = (state.hidden_square(WHITE), state.hidden_square(BLACK))
    known = tuple(
        square if square is not None and (state.revealed_at[seat] is not None or seat == viewer) else None
        for seat, square in enumerate(squares)
    )
    # a side's stones stand on its own colour only, so a whole line's count is theirs
    line_texts = [state.board[line] for line in geo.line_slices]
    counts = [[text.count(stone) for text in line_texts] for stone in STONE]
    for seat, square in enumerate(known):
        if square is not None:
            for line in geo.lines_through[square]:
                counts[seat][line] += 1
    now = start_of(state.placed)
    hidden_lines = [geo.lines_through[square] if square is not None else () for square in squares]
    tricks = tuple(
        OPEN  # most lines: nothing to judge
        if completed == (None, None)
        else judge_trick(_completions(state, line, hidden_lines, known), now)
        for line, completed in enumerate(zip(*state.completed_at))
    )
    return Knowledge(tricks, (tuple(counts[0]), tuple(counts[1])), (known[0], known[1]))


def _completions(
    state: MajorityState, line: int, hidden_lines: Sequence[tuple[int, ...]], known_hidden: Sequence[int | None]
) -> list[Completion]:
    """The completions of `line` known to a viewer who knows the hidden
    stones in `known_hidden`; `hidden_lines`: the lines through each side's
    hidden stone."""
    found = []
    for side in (WHITE, BLACK):
        turn = state.completed_at[side][line]
        if turn is None:
            continue
        if line not in hidden_lines[side]:
            found.append(Completion(side, turn, stone_of(turn)))
        elif known_hidden[side] is not None:
            revealed = state.revealed_at[side]
            # shown once both made and revealed
            shown = None if revealed is None else max(stone_of(turn), start_of(revealed))
            found.append(Completion(side, turn, shown))
    return found


def final_holders(seen: Knowledge) -> tuple[int | None, ...]:
    """Who would get each trick if the game ended now (known hidden stones
    revealed now, open lines to the majority)."""
    holders: list[int | None] = []
    for line, trick in enumerate(seen.tricks):
        if trick.waiting is not None:
            holders.append(trick.waiting)
        elif trick.holder is not None:
            holders.append(trick.holder)
        else:
            white, black = seen.counts[WHITE][line], seen.counts[BLACK][line]
            holders.append(WHITE if white > black else BLACK if black > white else None)
    return tuple(holders)


def points(seen: Knowledge, holders: Sequence[int | None]) -> tuple[float, float]:
    """Points of the tricks as `holders` gives them (a side or None per line):
    1 + the opposing stones on each; White adds 1/2."""
    totals = [0.5, 0.0]
    for line, holder in enumerate(holders):
        if holder is not None:
            totals[holder] += 1 + seen.counts[1 - holder][line]
    return totals[0], totals[1]
