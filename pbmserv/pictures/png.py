"""A drawing as PNG, painted with Pillow from the scene.

Each figure (a cell with its marks) is painted once, twice as large and
scaled down, so its edges are smooth, then pasted wherever it stands; text
comes from Pillow's bundled font (`ImageFont.load_default`: no system font
needed). The picture is stored with a palette of the scene's colours and
their blends, the title in a text chunk."""

from __future__ import annotations

import io
import math
from collections.abc import Iterable
from functools import cache, lru_cache
from itertools import combinations

from PIL import Image, ImageColor, ImageDraw, ImageFont
from PIL.PngImagePlugin import PngInfo

from pbmserv.gamekit.drawing import Drawing
from pbmserv.gamekit.scene import scene
from pbmserv.gamekit.shapes import Anchor, Circle, Figure, Group, Item, Line, Paint, Placed, Point, Polygon, Scene, Shape, Text

#: Pillow's anchors: across by the scene's anchor, up and down by the middle
_ANCHORS = {Anchor.START: "lm", Anchor.MIDDLE: "mm", Anchor.END: "rm"}
#: figures are painted this many times larger, then scaled down
_FINE = 2
#: zlib's level: 3 writes a board in about half the time of the default 6, a third larger
COMPRESSION = 3
Tile = tuple[Image.Image, int, int]
TileKey = tuple[int, float, float]


def png(drawing: Drawing) -> bytes:
    return scene_png(scene(drawing))


def scene_png(picture: Scene) -> bytes:
    image = Image.new("RGB", (picture.width, picture.height), picture.background)
    _paint(image, ImageDraw.Draw(image), picture.items, 0.0, 0.0, {})
    palette = _palette(tuple(sorted({picture.background, *_colours(picture.items, set())})))
    info = PngInfo()
    info.add_text("Title", picture.title)
    out = io.BytesIO()
    image.quantize(palette=palette, dither=Image.Dither.NONE).save(out, "PNG", pnginfo=info, compress_level=COMPRESSION)
    return out.getvalue()


def _paint(image: Image.Image, draw: ImageDraw.ImageDraw, items: Iterable[Item], dx: float, dy: float, tiles: dict[TileKey, Tile]) -> None:
    for item in items:
        if isinstance(item, Group):
            _paint(image, draw, item.items, dx + item.offset[0], dy + item.offset[1], tiles)
        elif isinstance(item, Placed):
            # to the nearest half pixel, which the tile, painted twice as large, holds exactly
            x, y = round(2 * (item.at[0] + dx)) / 2, round(2 * (item.at[1] + dy)) / 2
            key = (id(item.figure), x % 1, y % 1)  # by identity: hashing the figure at every cell would cost more than pasting it
            if key not in tiles:
                tiles[key] = _tile(item.figure, x % 1, y % 1)
            tile, left, top = tiles[key]
            image.paste(tile, (math.floor(x) + left, math.floor(y) + top), tile if tile.mode == "RGBA" else None)
        else:
            _shape(image, draw, item, dx, dy, 1)


@lru_cache(maxsize=512)  # a few hundred kilobytes: most figures recur from board to board
def _tile(figure: Figure, fraction_x: float, fraction_y: float) -> Tile:
    """`figure` painted about (`fraction_x`, `fraction_y`) on a clear tile,
    and where the tile's top left stands from that point's pixel."""
    shapes = figure.shapes
    reach = math.ceil(max(_reach(shape) for shape in shapes)) + 1 if shapes else 1
    size = 2 * reach * _FINE
    fine = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    draw = ImageDraw.Draw(fine)
    for shape in shapes:
        _shape(fine, draw, shape, reach + fraction_x, reach + fraction_y, _FINE)
    tile = fine.resize((2 * reach, 2 * reach), Image.Resampling.BOX)
    alpha = tile.getchannel("A")
    solid, seen = alpha.point([0] * 255 + [255]).getbbox(), alpha.getbbox()
    if solid and seen and alpha.crop(solid).getextrema() == (255, 255) and all(abs(a - b) <= 1 for a, b in zip(solid, seen)):
        # a square cell: opaque but for a smoothed rim a pixel wide, which its neighbour covers;
        # pasted without a mask in half the time
        return tile.crop(solid).convert("RGB"), solid[0] - reach, solid[1] - reach
    return tile, -reach, -reach


def _reach(shape: Shape) -> float:
    """How far from (0, 0) a figure's shape may paint."""
    if isinstance(shape, Polygon):
        return max(max(abs(x), abs(y)) for x, y in shape.points) + shape.paint.width
    if isinstance(shape, Circle):
        return max(abs(shape.centre[0]), abs(shape.centre[1])) + shape.radius + shape.paint.width
    if isinstance(shape, Line):
        return max(abs(value) for value in (*shape.start, *shape.end)) + shape.paint.width
    return max(abs(shape.at[0]), abs(shape.at[1])) + shape.size * max(1, len(shape.text))


def _shape(image: Image.Image, draw: ImageDraw.ImageDraw, shape: Shape, dx: float, dy: float, scale: int) -> None:
    """`shape` moved by (dx, dy), then made `scale` times larger."""

    def at(point: Point) -> Point:
        return (point[0] + dx) * scale, (point[1] + dy) * scale

    if isinstance(shape, Polygon):
        _polygon(draw, [at(point) for point in shape.points], shape.paint, scale)
    elif isinstance(shape, Circle):
        _circle(draw, at(shape.centre), shape.radius * scale, shape.paint, scale)
    elif isinstance(shape, Line):
        _line(draw, at(shape.start), at(shape.end), shape.paint, scale)
    else:
        _text(image, at(shape.at), shape, scale)


def _polygon(draw: ImageDraw.ImageDraw, points: list[Point], paint: Paint, scale: int) -> None:
    if paint.dash:
        draw.polygon(points, fill=paint.fill)
        for start, end in zip(points, points[1:] + points[:1]):
            _line(draw, start, end, paint, scale)
    else:
        draw.polygon(points, fill=paint.fill, outline=paint.stroke, width=round(paint.width * scale))


def _circle(draw: ImageDraw.ImageDraw, centre: Point, radius: float, paint: Paint, scale: int) -> None:
    (x, y), width = centre, round(paint.width * scale)
    bounds = (x - radius - width / 2, y - radius - width / 2, x + radius + width / 2, y + radius + width / 2)
    if not paint.dash:
        draw.ellipse(bounds, fill=paint.fill, outline=paint.stroke, width=width)
        return
    if paint.fill is not None:
        draw.ellipse(bounds, fill=paint.fill)
    degrees = 360 / (2 * math.pi * radius) * scale
    on, off = paint.dash[0] * degrees, paint.dash[1 % len(paint.dash)] * degrees
    start = 0.0
    while start < 360:
        draw.arc(bounds, start, min(start + on, 360), fill=paint.stroke, width=width)
        start += on + off


def _line(draw: ImageDraw.ImageDraw, start: Point, end: Point, paint: Paint, scale: int) -> None:
    width = round(paint.width * scale)
    if not paint.dash:
        draw.line((start, end), fill=paint.stroke, width=width)
        return
    (x1, y1), (x2, y2) = start, end
    length = math.hypot(x2 - x1, y2 - y1)
    on, off = paint.dash[0] * scale, paint.dash[1 % len(paint.dash)] * scale
    along = 0.0
    while along < length:
        a, b = along / length, min(along + on, length) / length
        draw.line(((x1 + a * (x2 - x1), y1 + a * (y2 - y1)), (x1 + b * (x2 - x1), y1 + b * (y2 - y1))), fill=paint.stroke, width=width)
        along += on + off


def _text(image: Image.Image, at: Point, shape: Text, scale: int) -> None:
    mask, left, top = _lettering(shape.text, shape.size * scale, shape.bold, shape.anchor)
    x, y = math.floor(at[0] + 0.5) + left, math.floor(at[1] + 0.5) + top
    if image.mode == "RGBA":  # a tile: blend with what is there, even where it is clear
        layer = Image.new("RGBA", mask.size, shape.colour)
        layer.putalpha(mask)
        image.alpha_composite(layer, (x, y))
    else:
        image.paste(shape.colour, (x, y, x + mask.width, y + mask.height), mask)


@cache
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


@lru_cache(maxsize=1024)  # bounded: player names are among the texts
def _lettering(text: str, size: int, bold: bool, anchor: Anchor) -> tuple[Image.Image, int, int]:
    """`text` as a coverage mask, and where its top left stands from the
    anchor point; made once per text, since most texts recur (a piece's
    letter, the coordinates)."""
    font, stroke = _font(size), size / 36 if bold else 0
    measure = ImageDraw.Draw(Image.new("L", (1, 1)))
    left, top, right, bottom = (math.floor(edge) for edge in measure.textbbox((0, 0), text, font=font, anchor=_ANCHORS[anchor], stroke_width=stroke))
    mask = Image.new("L", (max(1, right - left + 1), max(1, bottom - top + 1)))
    ImageDraw.Draw(mask).text((-left, -top), text, fill=255, font=font, anchor=_ANCHORS[anchor], stroke_width=stroke, stroke_fill=255)
    return mask, left, top


@lru_cache(maxsize=64)
def _palette(colours: tuple[str, ...]) -> Image.Image:
    """A palette image of `colours` and blends of each two (the smoothed
    edges between them), as many blends as 256 entries hold."""
    rgb = [ImageColor.getrgb(colour)[:3] for colour in colours]
    pairs = list(combinations(rgb, 2))
    steps = next(s for s in ((1 / 3, 2 / 3), (1 / 2,), ()) if len(rgb) + len(s) * len(pairs) <= 256)
    entries = rgb + [tuple(round(a + (b - a) * t) for a, b in zip(one, other)) for one, other in pairs for t in steps]
    palette = Image.new("P", (1, 1))
    palette.putpalette([value for entry in entries for value in entry])
    return palette


def _colours(items: Iterable[Item], figures_seen: set[int]) -> set[str]:
    """The colours `items` paint in."""
    found: set[str] = set()
    for item in items:
        if isinstance(item, Group):
            found |= _colours(item.items, figures_seen)
        elif isinstance(item, Placed):
            if id(item.figure) not in figures_seen:
                figures_seen.add(id(item.figure))
                found |= _colours(item.figure.shapes, figures_seen)
        elif isinstance(item, Text):
            found.add(item.colour)
        else:
            found |= {colour for colour in (item.paint.fill, item.paint.stroke) if colour is not None}
    return found
