"""Plurality's moves as values: a drop of three stones, or a pass; and how
a player's text is read into one."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from games.plurality.board import SIDES, layout_for
from games.plurality.state import PluralityState
from pbmserv.gamekit import IllegalMove

_MOVE_PARTS = re.compile(r"\*|[^\s,*]+|[\s,]+")


@dataclass(frozen=True)
class Drop:
    """Three stones on a tromino: the mover's on two cells, the opponent's
    on the starred one (`star` counts the tromino's cells in reading order)."""

    board: str
    size: int
    shape: int  # index into the board's Layout.shapes
    star: int
    secret = False

    def __str__(self) -> str:
        return layout_for(self.board, self.size).moves[self.shape][self.star]


@dataclass(frozen=True)
class Pass:
    secret = False

    def __str__(self) -> str:
        return "pass"


PluralityMove = Drop | Pass


@cache
def drops_for(board: str, size: int) -> tuple[tuple[Drop, Drop, Drop], ...]:
    """Every drop of a board, by shape and star: made once, as the bots
    list them in every position they search."""
    layout = layout_for(board, size)
    return tuple((Drop(board, size, k, 0), Drop(board, size, k, 1), Drop(board, size, k, 2)) for k in range(len(layout.shapes)))


def read_drop(state: PluralityState, seat: int, text: str) -> Drop:
    """The drop written in `text`, checked against the rules; IllegalMove
    says what is wrong."""
    layout = layout_for(state.board, state.size)
    opponent = SIDES[1 - seat]
    syntax = (
        f"send pass, or three {layout.point}s for a drop with a * on the one that gets "
        f"{opponent}'s stone, like {layout.example()}"
    )
    words, stars = _split_move(text.lower())
    if len(words) != 3:
        raise IllegalMove(f"A move is pass or a drop of exactly three {layout.point}s: {syntax}.")
    if sum(stars) == 0:
        raise IllegalMove(f"None of the three {layout.point}s carries the * that marks {opponent}'s stone: {syntax}.")
    if sum(stars) > 1:
        raise IllegalMove(f"Only one of the three {layout.point}s may carry a * (it gets {opponent}'s stone): {syntax}.")
    indices = [layout.cell_index(word) for word in words]
    if len(set(indices)) != 3:
        raise IllegalMove(f"A drop needs three different {layout.point}s: {syntax}.")
    occupied = state.occupied
    for i in indices:
        if occupied >> i & 1:
            raise IllegalMove(f"{layout.labels[i]} already holds a stone: drop only on empty {layout.point}s.")
    k = layout.shape_by_cells.get(frozenset(indices))
    if k is None:
        first, second, third = (layout.labels[i] for i in sorted(indices))
        raise IllegalMove(f"{first}, {second} and {third} do not form a tromino: a drop is {layout.shape_name}.")
    shape = layout.shapes[k]
    block = shape.completed_block(occupied)
    if block is not None:
        named = ",".join(layout.labels[i] for i in block)
        raise IllegalMove(
            f"This drop would fill the {layout.block_name} {named} with stones: "
            f"no four stones of any colours may form a {layout.block_name}."
        )
    return Drop(state.board, state.size, k, shape.cells.index(indices[stars.index(1)]))


def _split_move(text: str) -> tuple[list[str], list[int]]:
    """The cell words of a drop and how many stars each carries. A * belongs
    to the word it touches; a * that touches none, or sits between two
    words, belongs to the next word (to the last word when none follows)."""
    parts = _MOVE_PARTS.findall(text)
    kinds = ["star" if part == "*" else "separator" if part[0] == "," or part[0].isspace() else "word" for part in parts]
    words: list[str] = []
    stars: list[int] = []
    pending = 0
    for k, (part, kind) in enumerate(zip(parts, kinds)):
        if kind == "word":
            words.append(part)
            stars.append(pending)
            pending = 0
        elif kind == "star":
            touches_before = k > 0 and kinds[k - 1] == "word"
            touches_after = k + 1 < len(parts) and kinds[k + 1] == "word"
            if touches_before and not touches_after:
                stars[-1] += 1
            else:
                pending += 1
    if pending and stars:
        stars[-1] += pending
    return words, stars
