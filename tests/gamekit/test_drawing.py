"""The plainest text of a drawing: what a game without a layout of its own prints."""

from pbmserv.gamekit import Drawing, Ink, Kind, Mark, Panel, Seat, SquareGrid, Tally
from pbmserv.gamekit.drawing import plain_text, tally_table

SEATS = (Seat("alice", "Black", "X", Ink.BLACK), Seat("bob", "White", "O", Ink.WHITE))


def test_a_drawing_prints_its_header_panels_tally_and_notes_in_that_order() -> None:
    grid = SquareGrid(3, 3)
    marks = {(0, 0): (Mark(Kind.STONE, "X", 0),), (2, 2): (Mark(Kind.TERRITORY, "+", 0), Mark(Kind.STONE, "O", 1, last=True))}
    drawing = Drawing(
        "Test: alice against bob", SEATS, (Panel(grid, marks, title="The board"),),
        Tally(("alice", "bob"), (("stones", ("1", "1")), ("territory", ("12", "0")))),
        header=("Round 1",), notes=("bob to move.",),
    )
    assert plain_text(drawing) == "\n".join([
        "Round 1",
        "",
        "The board",
        "  a b c",
        "3 . . O 3",
        "2 . . . 2",
        "1 X . . 1",
        "  a b c",
        "",
        "           alice  bob",
        "stones         1    1",
        "territory     12    0",
        "",
        "bob to move.",
    ])


def test_a_drawing_without_boards_is_its_notes_alone() -> None:
    assert plain_text(Drawing("Nim", SEATS, notes=("3 counters left: ooo",))) == "3 counters left: ooo"


def test_the_uppermost_mark_is_what_a_cell_shows() -> None:
    panel = Panel(SquareGrid(2, 2), {(1, 1): (Mark(Kind.STONE, "x", 0), Mark(Kind.MARKER, "1", 0))})
    assert panel.top((1, 1)) == Mark(Kind.MARKER, "1", 0)
    assert panel.top((0, 0)) is None


def test_a_tally_without_rows_is_its_headings() -> None:
    assert tally_table(Tally(("alice", "bob"), ())) == ["  alice  bob"]
