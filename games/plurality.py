"""Plurality by João Pedro Neto: drop trominoes of two own stones and one of
the opponent's; empty regions belong to whoever has more stones around them.

Stones live in two bitmasks over the board's cells in reading order. Every
possible drop and the blocks it could complete are worked out once per board
(`_Layout`); a state carries the list of drops still open, and `play` only
re-checks the drops near the new stones, so listing moves needs no search.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache, lru_cache
from itertools import combinations

from pbmserv.gamekit import (
    Game,
    HexHexGrid,
    IllegalMove,
    InvalidOption,
    Option,
    Outcome,
    SquareGrid,
    filled,
)
from pbmserv.gamekit.regions import connected_sets

BLACK, WHITE = 0, 1
SIDES = ("Black", "White")
STONE_GLYPHS = ("X", "O")
TERRITORY_GLYPHS = ("x", "o")
NEUTRAL_GLYPH = "."
LAST_MOVE_MARK = "<"

SQUARE_SIZES = (13, 19)
HEX_SIZES = (5, 6, 7, 8, 9)  # size 9 is the widest hexhex that fits 72 columns
DEFAULT_HEX_SIZE = 8
SQUARE_KOMI = {13: 5.5, 19: 6.5}
HEX_KOMI = 0.5

_MOVE_PARTS = re.compile(r"\*|[^\s,*]+|[\s,]+")


@dataclass(frozen=True)
class PluralityState:
    players: tuple[str, str]
    board: str  # "square" or "hex"
    size: int
    ties: str  # "neutral" or "parity"
    black: int  # bit i set: cell i (reading order) holds a Black stone
    white: int
    turn: int  # the seat to move (the seat that would move once the game is over)
    passes: int  # passes in a row that ended with the last move
    last_move: str  # canonical text of the last move; "" before the first
    #: indices into `_Layout.shapes` of the drops still legal, derived from the
    #: stones and kept up to date by `play` so listing moves costs no search
    open_shapes: tuple[int, ...] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True)
class _Shape:
    """One connected three-cell placement: its cell indices in reading
    order, their mask, and for every forbidden block it touches the mask of
    that block's other cells (the drop completes the block when all of them
    are occupied)."""

    cells: tuple[int, ...]
    mask: int
    rests: tuple[tuple[int, tuple[int, ...]], ...]  # (mask of the rest, whole block)
    moves: tuple[str, str, str]  # canonical text with the star on cell 0, 1, 2

    def is_open(self, occupied: int) -> bool:
        return not self.mask & occupied and self.completed_block(occupied) is None

    def completed_block(self, occupied: int) -> tuple[int, ...] | None:
        for rest, block in self.rests:
            if rest & occupied == rest:
                return block
        return None


class _Layout:
    """Everything about one board that never changes during a game."""

    def __init__(self, board: str, size: int):
        self.board = board
        self.size = size
        self.grid: SquareGrid | HexHexGrid
        if board == "square":
            self.grid = SquareGrid(size, size, skip_i=True)
            blocks = [frozenset(block) for block in self.grid.blocks2x2()]
            self.komi = SQUARE_KOMI[size]
            self.block_name = "2x2 square"
            self.shape_name = "a straight or bent line of three orthogonally adjacent points"
            self.point = "point"
        else:
            self.grid = HexHexGrid(size)
            blocks = self.grid.rhombi()
            self.komi = HEX_KOMI
            self.block_name = "rhombus"
            self.shape_name = "three connected cells (a line, a bend or a triangle)"
            self.point = "cell"
        grid = self.grid
        self.cells = grid.cells
        self.index = {cell: i for i, cell in enumerate(self.cells)}
        self.labels = tuple(grid.label(cell) for cell in self.cells)
        self.neighbours = tuple(
            tuple(self.index[n] for n in grid.neighbours(cell)) for cell in self.cells
        )
        blocks_at: dict[int, list[tuple[int, ...]]] = {}
        for block in blocks:
            indices = tuple(sorted(self.index[c] for c in block))
            for i in indices:
                blocks_at.setdefault(i, []).append(indices)
        self.shapes: list[_Shape] = []
        for group in connected_sets(range(len(self.cells)), self.neighbours.__getitem__, 3):
            cells = tuple(sorted(group))
            touched = sorted({block for i in cells for block in blocks_at.get(i, ())})
            rests = tuple((_mask(set(block) - group), block) for block in touched)
            moves = tuple(
                ",".join(("*" if k == star else "") + self.labels[i] for k, i in enumerate(cells))
                for star in range(3)
            )
            self.shapes.append(_Shape(cells, _mask(cells), rests, moves))  # type: ignore[arg-type]
        self.shape_by_cells = {frozenset(shape.cells): shape for shape in self.shapes}
        #: per cell, the blocks (cell indices) it belongs to
        self.blocks_at = {i: tuple(found) for i, found in blocks_at.items()}
        holding: dict[frozenset[int], list[int]] = {}
        for k, shape in enumerate(self.shapes):
            for count in (1, 2, 3):
                for part in combinations(shape.cells, count):
                    holding.setdefault(frozenset(part), []).append(k)
        #: for every set of one to three cells, the shapes that hold all of them
        self.shapes_holding = {part: tuple(ks) for part, ks in holding.items()}
        self.moves = tuple(shape.moves for shape in self.shapes)


@cache
def _layout(board: str, size: int) -> _Layout:
    return _Layout(board, size)


def _mask(indices: Iterable[int]) -> int:
    mask = 0
    for i in indices:
        mask |= 1 << i
    return mask


def _bits(mask: int) -> list[int]:
    found = []
    while mask:
        low = mask & -mask
        found.append(low.bit_length() - 1)
        mask ^= low
    return found


def _open_shapes(layout: _Layout, occupied: int) -> tuple[int, ...]:
    return tuple(k for k, shape in enumerate(layout.shapes) if shape.is_open(occupied))


@dataclass(frozen=True)
class Territory:
    cells: tuple[int, ...]
    owner: int | None


def territories(layout: _Layout, state: PluralityState) -> tuple[Territory, ...]:
    """Each connected region of empty points and its owner."""
    return _territories(layout, state.ties, state.black, state.white)


@lru_cache(maxsize=256)
def _territories(layout: _Layout, ties: str, black: int, white: int) -> tuple[Territory, ...]:
    empty = -1
    colours = [empty] * len(layout.cells)
    for seat, stones in ((BLACK, black), (WHITE, white)):
        for i in _bits(stones):
            colours[i] = seat
    seen = [colour != empty for colour in colours]
    found = []
    for start, already in enumerate(seen):
        if already:
            continue
        seen[start] = True
        region, frontier, border = [start], [start], set()
        while frontier:
            for n in layout.neighbours[frontier.pop()]:
                if colours[n] != empty:
                    border.add(n)
                elif not seen[n]:
                    seen[n] = True
                    region.append(n)
                    frontier.append(n)
        black_count = sum(1 for n in border if colours[n] == BLACK)
        white_count = len(border) - black_count
        if black_count != white_count:
            owner: int | None = BLACK if black_count > white_count else WHITE
        elif ties == "parity":
            owner = BLACK if len(region) % 2 == 0 else WHITE
        else:
            owner = None
        found.append(Territory(tuple(sorted(region)), owner))
    return tuple(found)


def territory_points(layout: _Layout, state: PluralityState) -> tuple[int, int]:
    points = [0, 0]
    for territory in territories(layout, state):
        if territory.owner is not None:
            points[territory.owner] += len(territory.cells)
    return points[BLACK], points[WHITE]


class Plurality(Game):
    name = "plurality"
    title = "Plurality"
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
            # three stones never fill a four-stone block: on the empty board every drop is open
            open_shapes=tuple(range(len(_layout(board, size).shapes))),
        )

    # -- playing ---------------------------------------------------------------
    def to_move(self, state: PluralityState) -> frozenset[int]:
        return frozenset() if state.passes >= 2 else frozenset({state.turn})

    def legal_moves(self, state: PluralityState, seat: int) -> list[str]:
        if seat not in self.to_move(state):
            return []
        moves = _layout(state.board, state.size).moves
        return [move for k in state.open_shapes for move in moves[k]] + ["pass"]

    def play(self, state: PluralityState, seat: int, text: str) -> PluralityState:
        if state.passes >= 2:
            raise IllegalMove("The game is over: both players passed, so no more moves are taken.")
        if seat != state.turn:
            mover = state.players[state.turn]
            raise IllegalMove(f"It is not your turn: {mover} ({SIDES[state.turn]}) is to move.")
        layout = _layout(state.board, state.size)
        if " ".join(text.lower().split()) == "pass":
            return replace(state, turn=1 - seat, passes=state.passes + 1, last_move="pass")
        shape, star = self._parse_drop(layout, state, seat, text)
        starred = 1 << shape.cells[star]
        own = shape.mask & ~starred
        if seat == BLACK:
            black, white = state.black | own, state.white | starred
        else:
            black, white = state.black | starred, state.white | own
        # A drop closes when a new stone lands on it, or when a block holding a
        # new stone has its empty cells all inside the drop (filling it would
        # complete the block); a legal drop never leaves a block full.
        occupied = black | white
        closed: set[int] = set()
        for i in shape.cells:
            closed.update(layout.shapes_holding[frozenset([i])])
            for block in layout.blocks_at.get(i, ()):
                empty = frozenset(c for c in block if not occupied >> c & 1)
                closed.update(layout.shapes_holding.get(empty, ()))
        open_shapes = tuple(k for k in state.open_shapes if k not in closed)
        return replace(
            state,
            black=black,
            white=white,
            turn=1 - seat,
            passes=0,
            last_move=shape.moves[star],
            open_shapes=open_shapes,
        )

    def canonical_move(self, state: PluralityState, seat: int, text: str) -> str:
        if " ".join(text.lower().split()) == "pass":
            return "pass"
        try:
            shape, star = self._parse_drop(_layout(state.board, state.size), state, seat, text)
        except IllegalMove:
            return super().canonical_move(state, seat, text)
        return shape.moves[star]

    def _parse_drop(
        self, layout: _Layout, state: PluralityState, seat: int, text: str
    ) -> tuple[_Shape, int]:
        """The drop written in `text` and which of its cells is starred,
        checked against the rules; IllegalMove says what is wrong."""
        opponent = SIDES[1 - seat]
        syntax = (
            f"send pass, or three {layout.point}s for a drop with a * on the one that gets "
            f"{opponent}'s stone, like {self._example(layout)}"
        )
        words, stars = _split_move(text.lower())
        if len(words) != 3:
            raise IllegalMove(
                f"A move is pass or a drop of exactly three {layout.point}s: {syntax}."
            )
        if sum(stars) == 0:
            raise IllegalMove(
                f"None of the three {layout.point}s carries the * that marks {opponent}'s stone: "
                f"{syntax}."
            )
        if sum(stars) > 1:
            raise IllegalMove(
                f"Only one of the three {layout.point}s may carry a * (it gets {opponent}'s "
                f"stone): {syntax}."
            )
        indices = [layout.index[layout.grid.parse(word)] for word in words]
        if len(set(indices)) != 3:
            raise IllegalMove(f"A drop needs three different {layout.point}s: {syntax}.")
        occupied = state.black | state.white
        for i in indices:
            if occupied >> i & 1:
                raise IllegalMove(
                    f"{layout.labels[i]} already holds a stone: drop only on empty {layout.point}s."
                )
        shape = layout.shape_by_cells.get(frozenset(indices))
        if shape is None:
            first, second, third = (layout.labels[i] for i in sorted(indices))
            raise IllegalMove(
                f"{first}, {second} and {third} do not form a tromino: "
                f"a drop is {layout.shape_name}."
            )
        block = shape.completed_block(occupied)
        if block is not None:
            named = ",".join(layout.labels[i] for i in block)
            raise IllegalMove(
                f"This drop would fill the {layout.block_name} {named} with stones: "
                f"no four stones of any colours may form a {layout.block_name}."
            )
        return shape, shape.cells.index(indices[stars.index(1)])

    @staticmethod
    def _example(layout: _Layout) -> str:
        return "d4,e4,*e5" if layout.board == "square" else "d3,d4,*e4"

    # -- the end -----------------------------------------------------------------
    def outcome(self, state: PluralityState) -> Outcome | None:
        if state.passes < 2:
            return None
        layout = _layout(state.board, state.size)
        black, white = territory_points(layout, state)
        scores = (float(black), white + layout.komi)
        winner = BLACK if scores[BLACK] > scores[WHITE] else WHITE
        return Outcome(
            winners=(winner,),
            scores=scores,
            # a phrase for "Game won by alice: ...", hence short and without a full stop
            reason=(
                f"Black {_number(scores[BLACK])} to White {_number(scores[WHITE])} "
                f"(komi {_number(layout.komi)} included)"
            ),
        )

    # -- showing -----------------------------------------------------------------
    def viewpoint(self, state: PluralityState, viewer: int | None) -> int | None:
        return None  # nothing is hidden

    def render(self, state: PluralityState, viewer: int | None) -> str:
        return _render(state)  # nothing is hidden: every viewer sees the same board

    # -- storing -------------------------------------------------------------------
    def encode(self, state: PluralityState) -> dict:
        layout = _layout(state.board, state.size)
        return {
            "players": list(state.players),
            "board": state.board,
            "size": state.size,
            "ties": state.ties,
            "black": [layout.labels[i] for i in _bits(state.black)],
            "white": [layout.labels[i] for i in _bits(state.white)],
            "turn": state.turn,
            "passes": state.passes,
            "last_move": state.last_move,
        }

    def decode(self, data: dict) -> PluralityState:
        layout = _layout(data["board"], data["size"])

        def stones(labels: list[str]) -> int:
            return _mask(layout.index[layout.grid.parse(label)] for label in labels)

        black, white = stones(data["black"]), stones(data["white"])
        return PluralityState(
            players=(data["players"][0], data["players"][1]),
            board=data["board"],
            size=data["size"],
            ties=data["ties"],
            black=black,
            white=white,
            turn=data["turn"],
            passes=data["passes"],
            last_move=data["last_move"],
            open_shapes=_open_shapes(layout, black | white),
        )

    def help(self) -> str:
        return HELP


@lru_cache(maxsize=64)
def _render(state: PluralityState) -> str:
    layout = _layout(state.board, state.size)
    texts = [NEUTRAL_GLYPH] * len(layout.cells)
    for territory in territories(layout, state):
        if territory.owner is not None:
            for i in territory.cells:
                texts[i] = TERRITORY_GLYPHS[territory.owner]
    for seat, stones in ((BLACK, state.black), (WHITE, state.white)):
        for i in _bits(stones):
            texts[i] = STONE_GLYPHS[seat]
    last_mover = 1 - state.turn
    dropped = state.last_move not in ("", "pass")
    if dropped:
        for word in state.last_move.replace("*", "").split(","):
            texts[layout.index[layout.grid.parse(word)]] += LAST_MOVE_MARK
    lines = layout.grid.render(lambda cell: texts[layout.index[cell]])
    black, white = territory_points(layout, state)
    names = [f"{state.players[s]} ({SIDES[s]})" for s in (BLACK, WHITE)]
    width = max(len(name) for name in names)
    over = state.passes >= 2
    lines += [
        "",
        f"{STONE_GLYPHS[BLACK]}  {names[BLACK].ljust(width)}  territory {black}",
        f"{STONE_GLYPHS[WHITE]}  {names[WHITE].ljust(width)}  territory {white} + "
        f"{_number(layout.komi)} komi = {_number(white + layout.komi)}",
        f"{TERRITORY_GLYPHS[BLACK]} {TERRITORY_GLYPHS[WHITE]}  territory of Black / White "
        f"{'at the end' if over else 'if the game ended now'}, {NEUTRAL_GLYPH} neutral",
    ]
    if dropped:
        lines.append(
            f"{LAST_MOVE_MARK}  marks the last drop: {state.last_move} by {names[last_mover]}"
        )
    elif state.last_move == "pass":
        lines.append(f"Last move: {names[last_mover]} passed.")
    if state.passes == 1:
        lines.append("One more pass in a row ends the game.")
    if not over:
        lines += filled(_next_move(layout, state, names[state.turn]), 72)
    return "\n".join(lines)


def _next_move(layout: _Layout, state: PluralityState, mover: str) -> str:
    """Who moves and what to send, with a drop that is legal now (the first
    open one in reading order, its last point starred)."""
    if not state.open_shapes:
        return f"Next: {mover} sends pass; no drop is possible any more."
    example = layout.moves[state.open_shapes[0]][2]
    opponent = STONE_GLYPHS[1 - state.turn]
    return f"Next: {mover} sends a drop like {example} (* = {opponent}) or pass."


def _split_move(text: str) -> tuple[list[str], list[int]]:
    """The cell words of a drop and how many stars each carries. A * belongs
    to the word it touches; a * that touches none, or sits between two
    words, belongs to the next word (to the last word when none follows)."""
    parts = _MOVE_PARTS.findall(text)
    kinds = [
        "star" if part == "*" else "separator" if part[0] == "," or part[0].isspace() else "word"
        for part in parts
    ]
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


def _number(value: float) -> str:
    return f"{value:g}"


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

The board: X and O are Black's and White's stones; x and o mark empty
points that Black or White would own if the game ended now, . neutral
ones; < marks the stones of the last drop. Below the board are both
players' territory totals, White's with the komi, and who moves next,
with a drop that is legal now as an example.

Example challenges:
  plurality challenge -size=19 alice bob
  plurality challenge -board=hex -size=7 -ties=parity alice bob
"""
