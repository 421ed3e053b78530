"""The boards of Plurality: cells in reading order, every possible drop
(tromino) and the blocks it could complete, worked out once per board.
Stones live in bitmasks over the cells."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from itertools import combinations

from pbmserv.gamekit import HexHexGrid, SquareGrid
from pbmserv.gamekit.bitboard import Neighbourhood
from pbmserv.gamekit.regions import connected_sets

BLACK, WHITE = 0, 1
SIDES = ("Black", "White")

SQUARE_SIZES = (13, 19)
HEX_SIZES = (5, 6, 7, 8, 9)  # size 9 is the widest hexhex that fits 72 columns
DEFAULT_HEX_SIZE = 8
SQUARE_KOMI = {13: 5.5, 19: 6.5}
HEX_KOMI = 0.5


@dataclass(frozen=True)
class Shape:
    """One connected three-cell placement: its cell indices in reading
    order, their mask, and for every forbidden block it touches the mask of
    that block's other cells (the drop completes the block when all of them
    are occupied)."""

    cells: tuple[int, ...]
    mask: int
    rests: tuple[tuple[int, tuple[int, ...]], ...]  # (mask of the rest, whole block)
    moves: tuple[str, ...]  # canonical text with the star on cell 0, 1, 2

    def is_open(self, occupied: int) -> bool:
        return not self.mask & occupied and self.completed_block(occupied) is None

    def completed_block(self, occupied: int) -> tuple[int, ...] | None:
        for rest, block in self.rests:
            if rest & occupied == rest:
                return block
        return None


class Layout:
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
        self.index_of_label = {label: i for i, label in enumerate(self.labels)}
        self.neighbours = tuple(tuple(self.index[n] for n in grid.neighbours(cell)) for cell in self.cells)
        self.neighbourhood = Neighbourhood(self.neighbours)
        self.every_cell = (1 << len(self.cells)) - 1
        blocks_at: dict[int, list[tuple[int, ...]]] = {}
        for block in blocks:
            indices = tuple(sorted(self.index[c] for c in block))
            for i in indices:
                blocks_at.setdefault(i, []).append(indices)
        self.shapes: list[Shape] = []
        for group in connected_sets(range(len(self.cells)), self.neighbours.__getitem__, 3):
            cells = tuple(sorted(group))
            touched = sorted({block for i in cells for block in blocks_at.get(i, ())})
            rests = tuple((mask_of(set(block) - group), block) for block in touched)
            moves = tuple(
                ",".join(("*" if k == star else "") + self.labels[i] for k, i in enumerate(cells)) for star in range(3)
            )
            self.shapes.append(Shape(cells, mask_of(cells), rests, moves))
        self.shape_by_cells = {frozenset(shape.cells): k for k, shape in enumerate(self.shapes)}
        #: canonical drop text -> (shape index, starred position)
        self.drop_by_text = {text: (k, star) for k, shape in enumerate(self.shapes) for star, text in enumerate(shape.moves)}
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

    def cell_index(self, label: str) -> int:
        index = self.index_of_label.get(label)
        return self.index[self.grid.parse(label)] if index is None else index

    def example(self) -> str:
        return "d4,e4,*e5" if self.board == "square" else "d3,d4,*e4"


@cache
def layout_for(board: str, size: int) -> Layout:
    return Layout(board, size)


def mask_of(indices: Iterable[int]) -> int:
    mask = 0
    for i in indices:
        mask |= 1 << i
    return mask


def bits_of(mask: int) -> list[int]:
    found = []
    while mask:
        low = mask & -mask
        found.append(low.bit_length() - 1)
        mask ^= low
    return found
