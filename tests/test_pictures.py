"""Pictures of a drawing (issue 37, item 2): the SVG is well-formed XML
with its title and never carries a player's text as markup; the PNG
decodes, shows a board and carries its title; the same drawing gives the
same bytes; any drawing at all can be pictured."""

from __future__ import annotations

import hashlib
import io
import random
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from games.parliament.chambers import LOWER_MASK, UPPER_MASK
from pbmserv.gamekit import Drawing, HexHexGrid, Ink, Kind, Mark, Panel, Seat, SquareGrid, Tally, game_names, get_game
from pbmserv.gamekit.scene import BOARD, PAGE
from pbmserv.pictures import png, svg
from tests.toygame import Toy

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = "<script>alert(1)</script>&\"'"
SEATS = (Seat("alice", "Black", "X", Ink.BLACK), Seat(HOSTILE, "White", "O", Ink.WHITE))
RED_BLUE = (Seat("carol", "Red", "R", Ink.RED), Seat("dave", "Blue", "B", Ink.BLUE))
TALLY = Tally(("Lines", "Score"), (("alice", ("5", "12")), (HOSTILE, ("4", "10.5"))))


def _scattered(grid: SquareGrid | HexHexGrid, seed: int, kinds: tuple[Kind, ...]) -> dict[tuple[int, int], tuple[Mark, ...]]:
    rng = random.Random(seed)
    marks: dict[tuple[int, int], tuple[Mark, ...]] = {}
    for cell in grid.cells:
        if rng.random() < 0.5:
            seat = rng.randrange(2)
            marks[cell] = (Mark(rng.choice(kinds), "XO"[seat], seat),)
    return marks


def _drawings() -> dict[str, Drawing]:
    every_kind = tuple(Kind)
    square = SquareGrid(8, 8)
    upper = SquareGrid.from_mask(UPPER_MASK, ranks_from_top=True)
    lower = SquareGrid.from_mask(LOWER_MASK, ranks_from_top=True)
    hexagon = HexHexGrid(5)
    on_b2 = (Mark(Kind.STONE, "X", 0), Mark(Kind.MARKER, "1", 1, last=True))
    return {
        "square": Drawing("A square board", SEATS, (Panel(square, {**_scattered(square, 1, every_kind), (1, 1): on_b2}),), TALLY, last_move="b2"),
        "chequered": Drawing(
            "A chequered board with lines won",
            SEATS,
            (
                Panel(
                    SquareGrid(10, 10),
                    _scattered(SquareGrid(10, 10), 2, (Kind.STONE, Kind.HIDDEN)),
                    chequered=True,
                    row_marks={0: Mark(Kind.STONE, "X", 0), 9: Mark(Kind.STONE, "O", 1, last=True)},
                    column_marks={3: Mark(Kind.STONE, "O", 1)},
                ),
            ),
            TALLY,
        ),
        "chambers": Drawing(
            "Parliament's two chambers",
            RED_BLUE,
            (
                Panel(upper, _scattered(upper, 3, (Kind.STONE, Kind.PREFERENCE)), "Upper"),
                Panel(lower, _scattered(lower, 4, (Kind.STONE, Kind.PREFERENCE, Kind.TERRITORY)), "Lower"),
            ),
            Tally(("Upper", "Lower"), (("Red", ("30", "60")), ("Blue", ("20", "50")))),
            last_move="Red claimed U:c3",
        ),
        "hexagon": Drawing(
            "A hexhex board with dead cells",
            SEATS,
            (Panel(hexagon, _scattered(hexagon, 5, (Kind.STONE, Kind.DEAD, Kind.TERRITORY)), row_marks={4: Mark(Kind.STONE, "X", 0)}),),
            last_move="e9",
        ),
    }


DRAWINGS = _drawings()


@pytest.mark.parametrize("name", DRAWINGS)
def test_the_svg_is_xml_with_its_title(name: str) -> None:
    drawing = DRAWINGS[name]
    root = ET.fromstring(svg(drawing))
    assert root.tag == f"{SVG}svg" and root.get("role") == "img"
    title = root.find(f"{SVG}title")
    assert title is not None and title.text == drawing.title
    assert root.get("aria-labelledby") == title.get("id")
    assert int(root.get("width", "0")) > 200 and int(root.get("height", "0")) > 200


@pytest.mark.parametrize("name", DRAWINGS)
def test_the_svg_carries_nothing_active_or_from_elsewhere(name: str) -> None:
    root = ET.fromstring(svg(DRAWINGS[name]))
    tags = {element.tag.removeprefix(SVG) for element in root.iter()}
    assert tags <= {"svg", "title", "defs", "g", "rect", "polygon", "circle", "line", "text", "use"}
    for element in root.iter():
        for attribute, value in element.attrib.items():
            assert not attribute.lower().startswith("on")
            if attribute.endswith("href"):
                assert value.startswith("#")


def test_a_hostile_name_is_text_and_never_markup() -> None:
    text = svg(DRAWINGS["square"])
    assert "<script" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;&#x27;" in text
    root = ET.fromstring(text)
    assert not [element for element in root.iter() if "script" in element.tag]
    assert any(HOSTILE in (element.text or "") for element in root.iter(f"{SVG}text"))


def test_characters_xml_cannot_hold_are_replaced() -> None:
    seats = (Seat("a\x00b\x1bc", "Black", "X", Ink.BLACK), SEATS[1])
    root = ET.fromstring(svg(Drawing("Title\x07", seats)))
    assert any("a\ufffdb\ufffdc" in (element.text or "") for element in root.iter(f"{SVG}text"))


@pytest.mark.parametrize("name", DRAWINGS)
def test_the_png_decodes_shows_a_board_and_carries_its_title(name: str) -> None:
    drawing = DRAWINGS[name]
    image = Image.open(io.BytesIO(png(drawing)))
    image.load()
    assert image.format == "PNG" and image.mode == "P"
    assert 300 <= image.width <= 1400 and 300 <= image.height <= 1400
    assert image.info["Title"] == drawing.title
    rgb = image.convert("RGB")
    colours = dict((colour, count) for count, colour in rgb.getcolors(maxcolors=1 << 16) or [])
    assert len(colours) >= 16
    board = tuple(int(BOARD[i : i + 2], 16) for i in (1, 3, 5))
    page = tuple(int(PAGE[i : i + 2], 16) for i in (1, 3, 5))
    assert colours.get(board, 0) > 0.05 * image.width * image.height  # the board is there, apart from the page
    assert colours.get(page, 0) < 0.9 * image.width * image.height


def test_the_pictures_show_the_marks_and_the_last_move() -> None:
    text = svg(DRAWINGS["square"])
    for role in ("cell", "dead", "mark", "last", "coordinate", "legend", "tally", "caption"):
        assert f'class="{role}"' in text
    assert ">Last move: b2<" in text


def test_the_same_drawing_gives_the_same_bytes_in_any_process() -> None:
    """Caches and the order things were drawn in change nothing: a fresh
    process draws the same bytes as this one, which has drawn much else."""
    script = (
        "import hashlib\n"
        "from tests.test_pictures import DRAWINGS\n"
        "from pbmserv.pictures import png, svg\n"
        "for name in sorted(DRAWINGS, reverse=True):\n"
        "    print(name, hashlib.sha256(svg(DRAWINGS[name]).encode()).hexdigest(), hashlib.sha256(png(DRAWINGS[name])).hexdigest())\n"
    )
    fresh = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split("\n")
    here = [
        f"{name} {hashlib.sha256(svg(DRAWINGS[name]).encode()).hexdigest()} {hashlib.sha256(png(DRAWINGS[name])).hexdigest()}"
        for name in sorted(DRAWINGS, reverse=True)
    ]
    assert fresh[:-1] == here
    assert svg(DRAWINGS["square"]) == svg(DRAWINGS["square"]) and png(DRAWINGS["square"]) == png(DRAWINGS["square"])


def test_a_game_draws_its_position_both_ways() -> None:
    game = Toy()
    state = game.new({}, ["alice", "bob"])
    for text in ("b2", "a1", "c3"):
        state = game.play(state, 0 if game.to_move(state) == {0} else 1, text)
    drawing = game.draw(state, None)
    assert ET.fromstring(svg(drawing)).find(f"{SVG}title") is not None
    assert Image.open(io.BytesIO(png(drawing))).info["Title"] == drawing.title


@pytest.mark.parametrize("name", game_names())
def test_each_game_pictures_a_mid_game_position(name: str) -> None:
    game = get_game(name)
    rng = random.Random(7)
    state = game.new({}, ["alice", "bob"])
    for _ in range(12):
        if game.outcome(state) is not None:
            break
        seat = rng.choice(sorted(game.to_move(state)))
        state = game.play(state, seat, rng.choice(game.legal_moves(state, seat)))
    drawing = game.draw(state, None)
    assert ET.fromstring(svg(drawing)).find(f"{SVG}title") is not None
    assert Image.open(io.BytesIO(png(drawing))).info["Title"] == drawing.title


# -- any drawing at all ------------------------------------------------------
_NAMES = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)


@st.composite
def drawings(draw: st.DrawFn) -> Drawing:
    seats = tuple(
        Seat(draw(_NAMES), draw(st.text(max_size=12)), draw(st.text(min_size=1, max_size=2)), draw(st.sampled_from(Ink)))
        for _ in range(draw(st.integers(1, 4)))
    )
    panels = []
    for _ in range(draw(st.integers(0, 2))):
        grid: SquareGrid | HexHexGrid
        if draw(st.booleans()):
            grid = HexHexGrid(draw(st.integers(1, 10)))
        else:
            width, height = draw(st.integers(1, 26)), draw(st.integers(1, 26))
            cells = [(file, rank) for file in range(width) for rank in range(height)]
            mask = frozenset(draw(st.lists(st.sampled_from(cells), unique=True))) if draw(st.booleans()) else None
            grid = SquareGrid(width, height, skip_i=width <= 25 and draw(st.booleans()), ranks_from_top=draw(st.booleans()), mask=mask)
        mark = st.builds(Mark, st.sampled_from(Kind), st.text(min_size=1, max_size=2), st.none() | st.integers(0, len(seats) - 1), st.booleans())
        cells = list(grid.cells)
        marks = draw(st.dictionaries(st.sampled_from(cells), st.lists(mark, min_size=1, max_size=3).map(tuple), max_size=40)) if cells else {}
        lines = grid.row_count if isinstance(grid, HexHexGrid) else grid.height
        row_marks = draw(st.dictionaries(st.integers(0, lines - 1), mark, max_size=3))
        column_marks = draw(st.dictionaries(st.integers(0, grid.width - 1), mark, max_size=3)) if isinstance(grid, SquareGrid) else {}
        panels.append(Panel(grid, marks, draw(st.text(max_size=20)), draw(st.booleans()), row_marks, column_marks))
    columns = tuple(draw(st.lists(st.text(max_size=8), max_size=3)))
    rows = tuple((draw(_NAMES), tuple(draw(st.text(max_size=6)) for _ in columns)) for _ in range(draw(st.integers(0, 3))))
    tally = Tally(columns, rows) if draw(st.booleans()) else None
    return Drawing(draw(_NAMES), seats, tuple(panels), tally, last_move=draw(_NAMES))


@settings(max_examples=40, deadline=None)
@given(drawings())
def test_any_drawing_is_pictured(drawing: Drawing) -> None:
    root = ET.fromstring(svg(drawing))
    assert root.find(f"{SVG}title") is not None
    image = Image.open(io.BytesIO(png(drawing)))
    image.load()
    assert image.width > 0 and image.height > 0
