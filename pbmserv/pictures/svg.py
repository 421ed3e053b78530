"""A drawing as SVG 1.1: the scene's shapes, consecutive shapes that paint
alike in one group, each figure (a cell with its marks) defined once and
used where it stands. Every text is escaped (player names are user text);
nothing is scripted or fetched from elsewhere."""

from __future__ import annotations

import re
from collections.abc import Iterable
from html import escape
from itertools import groupby

from pbmserv.gamekit.drawing import Drawing
from pbmserv.gamekit.scene import scene
from pbmserv.gamekit.shapes import Circle, Figure, Group, Item, Line, Paint, Placed, Polygon, Scene, Shape, Text

FONTS = "DejaVu Sans, Verdana, Arial, Helvetica, sans-serif"
#: characters XML 1.0 forbids even escaped
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def svg(drawing: Drawing) -> str:
    return scene_svg(scene(drawing))


def scene_svg(picture: Scene) -> str:
    figures: dict[Figure, str] = {}
    body = _items(picture.items, figures)
    definitions = "".join(f'<g id="{name}">\n{_items(figure.shapes, {})}</g>\n' for figure, name in figures.items())
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" version="1.1"'
        f' width="{picture.width}" height="{picture.height}" viewBox="0 0 {picture.width} {picture.height}"'
        f' role="img" aria-labelledby="title" font-family="{FONTS}">\n'
        f'<title id="title">{_escaped(picture.title)}</title>\n'
        f"<defs>\n{definitions}</defs>\n"
        f'<rect width="100%" height="100%" fill="{picture.background}"/>\n'
        f"{body}</svg>\n"
    )


def _items(items: Iterable[Item], figures: dict[Figure, str]) -> str:
    """`items` as elements; consecutive shapes that paint alike share a
    group, and each figure is named in `figures` as it is first used."""
    parts: list[str] = []
    for (kind, style), run in groupby(items, key=_kind):
        if kind == "group":
            for group in run:
                assert isinstance(group, Group)
                x, y = group.offset
                parts.append(f'<g transform="translate({_number(x)} {_number(y)})">\n{_items(group.items, figures)}</g>\n')
        elif kind == "use":
            for placed in run:
                assert isinstance(placed, Placed)
                name = figures.setdefault(placed.figure, f"f{len(figures)}")
                x, y = placed.at
                parts.append(f'<use xlink:href="#{name}" x="{_number(x)}" y="{_number(y)}"/>\n')
        else:
            parts.append(f'<g class="{kind}"{style}>\n')
            parts += [_element(shape) for shape in run if not isinstance(shape, Group | Placed)]
            parts.append("</g>\n")
    return "".join(parts)


def _kind(item: Item) -> tuple[str, str]:
    if isinstance(item, Group):
        return "group", ""
    if isinstance(item, Placed):
        return "use", ""
    return item.role.value, _style(item)


def _style(shape: Shape) -> str:
    """The attributes a group gives its shapes."""
    if isinstance(shape, Text):
        weight = ' font-weight="bold"' if shape.bold else ""
        return f' font-size="{shape.size}" text-anchor="{shape.anchor.value}" fill="{shape.colour}"{weight}'
    return _paint(shape.paint)


def _paint(paint: Paint) -> str:
    style = f' fill="{paint.fill or "none"}"'
    if paint.stroke is not None:
        style += f' stroke="{paint.stroke}" stroke-width="{_number(paint.width)}"'
    if paint.dash:
        style += f' stroke-dasharray="{" ".join(_number(length) for length in paint.dash)}"'
    return style


def _element(shape: Shape) -> str:
    if isinstance(shape, Polygon):
        return f'<polygon points="{" ".join(f"{_number(x)},{_number(y)}" for x, y in shape.points)}"/>\n'
    if isinstance(shape, Circle):
        (x, y), radius = shape.centre, shape.radius
        return f'<circle cx="{_number(x)}" cy="{_number(y)}" r="{_number(radius)}"/>\n'
    if isinstance(shape, Line):
        (x1, y1), (x2, y2) = shape.start, shape.end
        return f'<line x1="{_number(x1)}" y1="{_number(y1)}" x2="{_number(x2)}" y2="{_number(y2)}"/>\n'
    x, y = shape.at
    return f'<text x="{_number(x)}" y="{_number(y)}" dominant-baseline="central">{_escaped(shape.text)}</text>\n'


def _number(value: float) -> str:
    """`value` to a tenth of a pixel, without trailing zeros."""
    text = f"{value:.1f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _escaped(text: str) -> str:
    """`text` as XML character data: markup escaped, characters XML cannot hold replaced."""
    return escape(_NOT_XML.sub("\ufffd", text))
