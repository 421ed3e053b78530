"""The shapes a picture is made of, in pixels: what `scene` lays out and
the painters (`pbmserv.pictures`) paint, and nothing else."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

Point = tuple[float, float]


class Role(Enum):
    """What a shape shows (an SVG class; lets tests find the board)."""

    CELL = "cell"
    DEAD = "dead"
    MARK = "mark"
    LAST = "last"
    COORDINATE = "coordinate"
    HEADING = "heading"
    LEGEND = "legend"
    TALLY = "tally"
    CAPTION = "caption"


@dataclass(frozen=True)
class Paint:
    """How a shape is filled and outlined; colours as `#rrggbb`, `dash` as
    the lengths of dash and gap."""

    fill: str | None = None
    stroke: str | None = None
    width: float = 0.0
    dash: tuple[float, ...] = ()


@dataclass(frozen=True)
class Polygon:
    points: tuple[Point, ...]
    paint: Paint
    role: Role


@dataclass(frozen=True)
class Circle:
    centre: Point
    radius: float
    paint: Paint
    role: Role


@dataclass(frozen=True)
class Line:
    start: Point
    end: Point
    paint: Paint
    role: Role


class Anchor(Enum):
    START = "start"
    MIDDLE = "middle"
    END = "end"


@dataclass(frozen=True)
class Text:
    """One line of text; `at` is its anchor across and its middle up and down."""

    at: Point
    text: str
    size: int
    colour: str
    role: Role
    anchor: Anchor = Anchor.MIDDLE
    bold: bool = False


Shape = Polygon | Circle | Line | Text


@dataclass(frozen=True)
class Figure:
    """Shapes drawn about (0, 0) to be placed where they are needed: a cell
    with its marks, made once however often it recurs (the painters, too,
    paint each figure once)."""

    shapes: tuple[Shape, ...]


@dataclass(frozen=True)
class Placed:
    at: Point
    figure: Figure


@dataclass(frozen=True)
class Group:
    """Items moved together by `offset`: a panel, the tally."""

    offset: Point
    items: tuple[Item, ...]


Item = Shape | Placed | Group


@dataclass(frozen=True)
class Scene:
    title: str
    width: int
    height: int
    background: str
    items: tuple[Item, ...]
