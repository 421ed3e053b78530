"""Which drops are still open: what `moves` lists, and the example
drop of the board mail. The server never lists moves, so nothing here is
worked out when a move is played; when moves are listed one position after
another (bots, benches, tests), each list is derived from the one before it
instead of searched afresh."""

from __future__ import annotations

from collections import OrderedDict

from games.plurality.board import Layout
from games.plurality.state import PluralityState

#: (layout, occupied cells) -> indices of the open shapes, the newest last
_known: OrderedDict[tuple[Layout, int], tuple[int, ...]] = OrderedDict()
_KNOWN_LIMIT = 64


def open_drops(layout: Layout, state: PluralityState) -> tuple[int, ...]:
    """Indices into `layout.shapes` of the drops legal now, in order."""
    occupied = state.occupied
    found = _known.get((layout, occupied))
    if found is None:
        found = _after_last_drop(layout, state)
        if found is None:
            found = scan(layout, occupied)
        _known[layout, occupied] = found
        if len(_known) > _KNOWN_LIMIT:
            _known.popitem(last=False)
    else:
        _known.move_to_end((layout, occupied))
    return found


def first_open_drop(layout: Layout, state: PluralityState) -> int | None:
    """The first open drop in reading order, without listing the others."""
    found = _known.get((layout, state.occupied))
    if found is not None:
        return found[0] if found else None
    occupied = state.occupied
    return next((k for k, shape in enumerate(layout.shapes) if shape.is_open(occupied)), None)


def example_drop(layout: Layout, state: PluralityState) -> str | None:
    """The drop the board mail gives as its one example (the first open
    one, its first point starred); None when no drop is open."""
    first = first_open_drop(layout, state)
    return None if first is None else layout.moves[first][0]


def scan(layout: Layout, occupied: int) -> tuple[int, ...]:
    if not occupied:  # three stones never fill a four-stone block
        return tuple(range(len(layout.shapes)))
    return tuple(k for k, shape in enumerate(layout.shapes) if shape.is_open(occupied))


def _after_last_drop(layout: Layout, state: PluralityState) -> tuple[int, ...] | None:
    """The open drops worked out from those before the last drop, when those are known.

    A drop closes when a new stone lands on it, or when a block holding a
    new stone has its empty cells all inside the drop (filling it would
    complete the block); a legal drop never leaves a block full."""
    if state.last_move not in layout.drop_by_text:
        return None
    shape = layout.shapes[layout.drop_by_text[state.last_move][0]]
    occupied = state.occupied
    if shape.mask & occupied != shape.mask:
        return None
    before = _known.get((layout, occupied & ~shape.mask))
    if before is None:
        return None
    closed: set[int] = set()
    for i in shape.cells:
        closed.update(layout.shapes_holding[frozenset([i])])
        for block in layout.blocks_at.get(i, ()):
            empty = frozenset(c for c in block if not occupied >> c & 1)
            closed.update(layout.shapes_holding.get(empty, ()))
    return tuple(k for k in before if k not in closed)
