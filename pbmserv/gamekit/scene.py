"""A drawing as plain shapes in pixels: the geometry of every game's
pictures, written once.

`scene(drawing)` lays out the title, each panel's cells (squares, with
holes where a masked grid has none, or pointy-topped hexagons), the
coordinates where the text boards write them, the marks, the seats'
legend, the tallies and the last move; the painters (`pbmserv.pictures`)
only paint the shapes. Colours are from the Okabe-Ito palette, which
colour-blind readers tell apart, and every piece carries its seat's
letter, so colour is never the only cue. The same drawing gives the same
scene.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from pbmserv.gamekit.drawing import Drawing, Grid, Ink, Kind, Mark, Panel, Seat, Tally
from pbmserv.gamekit.hexagonal import SQRT3, HexHexGrid
from pbmserv.gamekit.shapes import Anchor, Circle, Figure, Group, Item, Line, Paint, Placed, Point, Polygon, Role, Scene, Shape, Text
from pbmserv.gamekit.square import SquareGrid

# -- colours -------------------------------------------------------------
PAGE = "#FFFFFF"
BOARD = "#F3E8CC"
DARK_SQUARE = "#CDB68D"
GRID_LINE = "#7F6D50"
DEAD_CELL = "#A3A3A3"
DEAD_HATCH = "#575757"
TEXT = "#1A1A1A"
SOFT_TEXT = "#4D4D4D"
LAST = "#009E73"  # Okabe-Ito bluish green: apart from vermillion, blue, black and white


@dataclass(frozen=True)
class InkColours:
    fill: str
    edge: str
    letter: str  # the glyph on a piece
    line: str  # a ring or a letter in this ink on the board


INKS = {
    Ink.BLACK: InkColours("#1A1A1A", "#000000", "#FFFFFF", "#1A1A1A"),
    Ink.WHITE: InkColours("#FFFFFF", "#333333", "#1A1A1A", "#333333"),
    Ink.RED: InkColours("#D55E00", "#8A3C00", "#FFFFFF", "#B34F00"),  # Okabe-Ito vermillion
    Ink.BLUE: InkColours("#0072B2", "#004A74", "#FFFFFF", "#0072B2"),  # Okabe-Ito blue
}
NO_SEAT = InkColours("#8C8C8C", "#4D4D4D", "#FFFFFF", "#4D4D4D")

# -- sizes in pixels -----------------------------------------------------
MARGIN = 14
GAP = 24
#: the longest side of the largest board aims at this, within the units below
BOARD_PIXELS = 600
SMALLEST_UNIT, LARGEST_UNIT = 22, 36
#: panels wider than this together stand one above the other
WIDEST_BOARDS = 900
#: a picture wider than this gets the legend and the tallies below the boards
WIDEST = 1100
TEXT_SIZE, HEADING_SIZE = 13, 15
LINE_HEIGHT = 20


def text_width(text: str, size: float, bold: bool = False) -> float:
    """A generous estimate of a line's width in a sans-serif font, for the
    layout alone (the painters' fonts differ)."""
    return len(text) * size * (0.64 if bold else 0.6)


def scene(drawing: Drawing) -> Scene:
    """The picture of `drawing` as shapes."""
    unit = cell_unit(drawing.panels)
    inks = tuple(seat.ink for seat in drawing.seats)
    boards = [panel_block(panel, unit, inks) for panel in drawing.panels]
    together = sum(board.width for board in boards) + GAP * (len(boards) - 1) <= WIDEST_BOARDS
    board_block = row(boards) if together else column(boards)
    side = column([legend_block(drawing.seats), tally_block(drawing.tally)])
    if board_block.width + GAP + side.width <= WIDEST:
        middle = row([board_block, side])
    else:
        middle = column([board_block, side])
    parts = [text_block(drawing.title, HEADING_SIZE, bold=True), middle]
    if drawing.last_move:
        parts.append(text_block(f"Last move: {drawing.last_move}", TEXT_SIZE))
    whole = column(parts)
    return Scene(
        title=drawing.title,
        width=math.ceil(whole.width + 2 * MARGIN),
        height=math.ceil(whole.height + 2 * MARGIN),
        background=PAGE,
        items=(whole.placed(MARGIN, MARGIN),),
    )


def cell_unit(panels: Sequence[Panel]) -> int:
    """A cell's width in pixels: the largest board's longest side near
    BOARD_PIXELS."""
    across = max((_extent(panel.grid) for panel in panels), default=1)
    return max(SMALLEST_UNIT, min(LARGEST_UNIT, BOARD_PIXELS // across))


def _extent(grid: Grid) -> int:
    return grid.row_count if isinstance(grid, HexHexGrid) else max(grid.width, grid.height)


# -- blocks: items laid out together ---------------------------------------
@dataclass(frozen=True)
class Block:
    """Items and the box they paint in."""

    items: tuple[Item, ...]
    left: float = 0.0
    top: float = 0.0
    right: float = 0.0
    bottom: float = 0.0

    @property
    def width(self) -> float:
        return self.right - self.left

    @property
    def height(self) -> float:
        return self.bottom - self.top

    def placed(self, x: float, y: float) -> Group:
        """The items moved so that the box's top left stands at (x, y)."""
        return Group((x - self.left, y - self.top), self.items)


def block(items: Iterable[Shape | Placed]) -> Block:
    items = tuple(items)
    figure_boxes: dict[int, tuple[float, float, float, float]] = {}  # by identity: a figure recurs, and hashing one is slow
    boxes = []
    for item in items:
        if isinstance(item, Placed):
            if id(item.figure) not in figure_boxes:
                figure_boxes[id(item.figure)] = _bounds([box(shape) for shape in item.figure.shapes])
            (dx, dy), (left, top, right, bottom) = item.at, figure_boxes[id(item.figure)]
            boxes.append((left + dx, top + dy, right + dx, bottom + dy))
        else:
            boxes.append(box(item))
    return Block(items, *_bounds(boxes))


def _bounds(boxes: Sequence[tuple[float, float, float, float]]) -> tuple[float, float, float, float]:
    if not boxes:
        return 0.0, 0.0, 0.0, 0.0
    return min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes)


def box(shape: Shape) -> tuple[float, float, float, float]:
    """Where `shape` may paint: left, top, right, bottom."""
    if isinstance(shape, Polygon):
        xs, ys = [x for x, _ in shape.points], [y for _, y in shape.points]
        return min(xs), min(ys), max(xs), max(ys)
    if isinstance(shape, Circle):
        (x, y), reach = shape.centre, shape.radius + shape.paint.width / 2
        return x - reach, y - reach, x + reach, y + reach
    if isinstance(shape, Line):
        (x1, y1), (x2, y2) = shape.start, shape.end
        return min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2)
    (x, y), width = shape.at, text_width(shape.text, shape.size, shape.bold)
    left = {Anchor.START: x, Anchor.MIDDLE: x - width / 2, Anchor.END: x - width}[shape.anchor]
    return left, y - 0.6 * shape.size, left + width, y + 0.6 * shape.size


def row(blocks: Sequence[Block]) -> Block:
    """`blocks` side by side, GAP apart, tops in line."""
    items: list[Item] = []
    x = height = 0.0
    for part in blocks:
        if part.items:
            items.append(part.placed(x, 0))
            x, height = x + part.width + GAP, max(height, part.height)
    return Block(tuple(items), 0, 0, max(0, x - GAP), height)


def column(blocks: Sequence[Block]) -> Block:
    """`blocks` one below the other, GAP apart, left edges in line."""
    items: list[Item] = []
    y = width = 0.0
    for part in blocks:
        if part.items:
            items.append(part.placed(0, y))
            y, width = y + part.height + GAP, max(width, part.width)
    return Block(tuple(items), 0, 0, width, max(0, y - GAP))


def text_block(text: str, size: int, bold: bool = False) -> Block:
    role = Role.HEADING if bold else Role.CAPTION
    return block([Text((0, 0), text, size, TEXT, role, Anchor.START, bold)])


# -- panels ----------------------------------------------------------------
def panel_block(panel: Panel, unit: int, inks: tuple[Ink, ...]) -> Block:
    """A panel's cells, marks and coordinates, under its title."""
    if isinstance(panel.grid, HexHexGrid):
        board = block(hex_items(panel, panel.grid, unit, inks))
    else:
        board = block(square_items(panel, panel.grid, unit, inks))
    if not panel.title:
        return board
    return column([text_block(panel.title, TEXT_SIZE + 1, bold=True), board])


def label_size(unit: int) -> int:
    return max(10, round(unit * 0.42))


def square_items(panel: Panel, grid: SquareGrid, unit: int, inks: tuple[Ink, ...]) -> list[Shape | Placed]:
    """Square cells (none where the grid has a hole), file letters above
    and below, rank numbers on both sides; row marks right of the rank
    numbers, column marks under the file letters."""
    half = unit / 2
    outline = ((-half, -half), (half, -half), (half, half), (-half, half))
    items: list[Shape | Placed] = []
    for cell in grid.cells:
        layers = panel.marks.get(cell, ())
        fill = _cell_fill(layers, panel.chequered and grid.is_dark(cell))
        at = ((cell[0] + 0.5) * unit, (grid.line_of(cell[1]) + 0.5) * unit)
        items.append(Placed(at, cell_figure(outline, fill, layers, unit, inks)))
    width, height, size = grid.width * unit, grid.height * unit, label_size(unit)
    for file in range(grid.width):
        x = (file + 0.5) * unit
        for y in (-0.5 * unit, height + 0.5 * unit):
            items.append(Text((x, y), grid.file_letter(file), size, SOFT_TEXT, Role.COORDINATE))
        if file in panel.column_marks:
            items.append(Placed((x, height + 1.5 * unit), cell_figure((), "", (panel.column_marks[file],), unit, inks)))
    for rank in range(grid.height):
        y = (grid.line_of(rank) + 0.5) * unit
        for x in (-0.5 * unit, width + 0.5 * unit):
            items.append(Text((x, y), str(rank + 1), size, SOFT_TEXT, Role.COORDINATE))
        if rank in panel.row_marks:
            items.append(Placed((width + 1.5 * unit, y), cell_figure((), "", (panel.row_marks[rank],), unit, inks)))
    return items


def hex_items(panel: Panel, grid: HexHexGrid, unit: int, inks: tuple[Ink, ...]) -> list[Shape | Placed]:
    """Pointy-topped hexagons one unit wide, row letters left of each row,
    cell numbers off the top-right and bottom-right edges (as the text
    board has them); row marks two places right of each row."""
    corner = unit / SQRT3
    outline = tuple(
        (round(corner * math.cos(math.radians(a)), 2), round(corner * math.sin(math.radians(a)), 2)) for a in range(-90, 270, 60)
    )

    def at(axial: tuple[int, int]) -> Point:
        x, y = grid.centre(axial)
        return x * unit, y * unit

    items: list[Shape | Placed] = []
    for cell in grid.cells:
        layers = panel.marks.get(cell, ())
        items.append(Placed(at(grid.to_axial(cell)), cell_figure(outline, _cell_fill(layers, False), layers, unit, inks)))
    size = label_size(unit)
    for line in range(grid.row_count):
        q, r = grid.to_axial((line, 0))
        items.append(Text(at((q - 1, r)), chr(ord("a") + line), size, SOFT_TEXT, Role.COORDINATE))
        if line in panel.row_marks:
            q, r = grid.to_axial((line, grid.row_length(line) - 1))
            items.append(Placed(at((q + 2, r)), cell_figure((), "", (panel.row_marks[line],), unit, inks)))
    for axial, number in grid.edge_numbers():
        items.append(Text(at(axial), number, size, SOFT_TEXT, Role.COORDINATE))
    return items


def _cell_fill(layers: Sequence[Mark], dark: bool) -> str:
    if any(mark.kind is Kind.DEAD for mark in layers):
        return DEAD_CELL
    return DARK_SQUARE if dark else BOARD


# -- marks -----------------------------------------------------------------
@lru_cache(maxsize=4096)
def cell_figure(outline: tuple[Point, ...], fill: str, layers: tuple[Mark, ...], unit: int, inks: tuple[Ink, ...]) -> Figure:
    """A cell `unit` wide about (0, 0): its `outline` filled with `fill`
    (none for a mark beside the board), its marks bottom first, then a ring
    in LAST if the last move placed or changed one."""
    shapes: list[Shape] = []
    if outline:
        dead = any(mark.kind is Kind.DEAD for mark in layers)
        shapes.append(Polygon(outline, Paint(fill, GRID_LINE, 1), Role.DEAD if dead else Role.CELL))
    shapes += [shape for mark in layers for shape in _one_mark(mark, unit, inks)]
    if any(mark.last for mark in layers):
        shapes.append(Circle((0, 0), 0.45 * unit, Paint(None, LAST, max(2.0, 0.09 * unit)), Role.LAST))
    return Figure(tuple(shapes))


def _one_mark(mark: Mark, unit: int, inks: tuple[Ink, ...]) -> list[Shape]:
    ink = NO_SEAT if mark.seat is None else INKS[inks[mark.seat]]
    centre = (0.0, 0.0)
    glyph = max(10, round(unit * 0.5))
    outline = max(1.0, round(unit / 24, 1))
    if mark.kind is Kind.STONE:
        return [
            Circle(centre, 0.38 * unit, Paint(ink.fill, ink.edge, outline), Role.MARK),
            Text(centre, mark.glyph, glyph, ink.letter, Role.MARK, bold=True),
        ]
    if mark.kind is Kind.HIDDEN:
        dash = (round(0.16 * unit, 1), round(0.1 * unit, 1))
        return [
            Circle(centre, 0.36 * unit, Paint(None, ink.line, max(2.0, round(0.07 * unit)), dash), Role.MARK),
            Text(centre, mark.glyph, glyph, ink.line, Role.MARK, bold=True),
        ]
    if mark.kind is Kind.PREFERENCE:
        return [
            Circle(centre, 0.27 * unit, Paint(ink.fill, ink.edge, outline), Role.MARK),
            Text(centre, mark.glyph, max(9, round(unit * 0.34)), ink.letter, Role.MARK, bold=True),
        ]
    if mark.kind is Kind.TERRITORY:
        half = 0.16 * unit
        square = ((-half, -half), (half, -half), (half, half), (-half, half))
        return [Polygon(square, Paint(ink.fill, ink.edge, outline), Role.MARK)]
    if mark.kind is Kind.MARKER:
        badge = (0.25 * unit, -0.25 * unit)  # inside the cell: a neighbour's tile, pasted later, must not cover it
        return [
            Circle(centre, 0.44 * unit, Paint(None, ink.line, max(2.0, round(0.07 * unit))), Role.MARK),
            Circle(badge, 0.2 * unit, Paint(PAGE, ink.line, outline), Role.MARK),
            Text(badge, mark.glyph, max(9, round(unit * 0.3)), ink.line, Role.MARK, bold=True),
        ]
    return _hatching(unit)


def _hatching(unit: int) -> list[Shape]:
    """Three strokes rising to the right, inside the cell's inscribed circle."""
    reach = 0.42 * unit
    paint = Paint(None, DEAD_HATCH, max(1.0, round(unit / 20)))
    strokes: list[Shape] = []
    for step in (-1, 0, 1):
        offset = step * 0.22 * unit  # across the strokes, along (1, 1) / sqrt 2
        half = math.sqrt(reach * reach - offset * offset) / math.sqrt(2)
        mx = my = offset / math.sqrt(2)
        strokes.append(Line((mx - half, my + half), (mx + half, my - half), paint, Role.DEAD))
    return strokes


# -- beside the boards -------------------------------------------------------
def legend_block(seats: Sequence[Seat]) -> Block:
    """A piece of each seat, with its side and player."""
    inks = tuple(seat.ink for seat in seats)
    shapes: list[Shape | Placed] = []
    for index, seat in enumerate(seats):
        y = index * (LINE_HEIGHT + 4)
        swatch = Mark(Kind.STONE, seat.glyph, index)
        shapes.append(Placed((10, y), Figure(tuple(replace(shape, role=Role.LEGEND) for shape in _one_mark(swatch, 22, inks)))))
        shapes.append(Text((26, y), f"{seat.side}: {seat.player}", TEXT_SIZE, TEXT, Role.LEGEND, Anchor.START))
    return block(shapes)


def tally_block(tally: Tally | None) -> Block:
    """The tallies as a table: labels left, each column right-aligned
    under its bold heading, a rule under the headings."""
    if tally is None:
        return Block(())
    spacing = 16
    label_width = max((text_width(label, TEXT_SIZE) for label, _ in tally.rows), default=0)
    widths = [
        max([text_width(heading, TEXT_SIZE, True), *(text_width(values[index], TEXT_SIZE) for _, values in tally.rows)])
        for index, heading in enumerate(tally.columns)
    ]
    rights, x = [], label_width
    for width in widths:
        x += spacing + width
        rights.append(x)
    shapes: list[Shape | Placed] = [
        Text((right, 0), heading, TEXT_SIZE, TEXT, Role.TALLY, Anchor.END, bold=True)
        for heading, right in zip(tally.columns, rights)
    ]
    shapes.append(Line((0, LINE_HEIGHT / 2), (x, LINE_HEIGHT / 2), Paint(None, SOFT_TEXT, 1), Role.TALLY))
    for number, (label, values) in enumerate(tally.rows, start=1):
        y = number * LINE_HEIGHT + 4
        shapes.append(Text((0, y), label, TEXT_SIZE, TEXT, Role.TALLY, Anchor.START))
        shapes += [Text((right, y), value, TEXT_SIZE, TEXT, Role.TALLY, Anchor.END) for value, right in zip(values, rights)]
    return block(shapes)
