"""What a Majorities board shows: the drawing of a position, in which
nothing is secret, and the text board laid out from the drawing alone."""

from __future__ import annotations

import re
from functools import cache

from games.majorities.board import (
    DEAD,
    DIRECTION_TITLES,
    EMPTY,
    GLYPHS,
    SEAT_MARKS,
    SIDE_NAMES,
    MajoritiesState,
    board_for,
    tallies,
    winner,
)
from pbmserv.gamekit import Drawing, Ink, Kind, Mark, Panel, Seat, Tally, filled

INKS = (Ink.BLACK, Ink.WHITE)
WIDTH = 72
LINES_WON = "Lines won"
#: each stored board character's layers, for a stone of an earlier move
LAYERS = {
    SEAT_MARKS[seat]: (Mark(Kind.STONE, GLYPHS[seat], seat),) for seat in (0, 1)
} | {DEAD: (Mark(Kind.DEAD, DEAD),)}
#: the layers of a stone the last move placed
LAST_LAYERS = {SEAT_MARKS[seat]: (Mark(Kind.STONE, GLYPHS[seat], seat, last=True),) for seat in (0, 1)}
# A last move's stone is drawn as its glyph moved into the private use
# area, a stand-in bracketed after the hexagon is drawn.
_LAST_MOVE_OFFSET = 0xE000
_BRACKET_ON_LABEL = re.compile(r"\)(?=\d)")


def draw(state: MajoritiesState) -> Drawing:
    """The position as everybody sees it."""
    board = board_for(state.size)
    cells = board.cells
    marks = {cells[i]: LAYERS[char] for i, char in enumerate(state.board) if char != EMPTY}
    for i in state.last_move:
        marks[cells[i]] = LAST_LAYERS[state.board[i]]
    players = state.players
    header = [*_legend(state.size, players)]
    last_move = ""
    if state.last_move:
        mover = SEAT_MARKS.index(state.board[state.last_move[0]])
        last_move = f"{players[mover]} {','.join(board.labels[i] for i in state.last_move)}"
        header.append(f"({GLYPHS[mover]}) = last move, {last_move}")
    return Drawing(
        title=_title(state),
        seats=tuple(Seat(players[seat], SIDE_NAMES[seat], GLYPHS[seat], INKS[seat]) for seat in (0, 1)),
        panels=(Panel(board.grid, marks),),
        tally=_tally(state),
        header=tuple(header),
        notes=(*_lines(state), _needs(state.size)),
        last_move=last_move,
    )


def _title(state: MajoritiesState) -> str:
    players = state.players
    sides = f"{players[0]} ({GLYPHS[0]}) against {players[1]} ({GLYPHS[1]})"
    won_by = winner(state)
    now = f"{players[state.seat_to_play]} to move" if won_by is None else f"{players[won_by]} won"
    return f"Majorities, size {state.size}: {sides}, {now}"


@cache
def _numbers_legend(size: int) -> tuple[str, ...]:
    """What the numbers around the hexagon are: each stands at both ends
    of the cells that share that number, a slant bent at the middle row,
    never on a cell of its own. The example is the slant of the 1s, whose
    ends and bend are corners, which are never dead."""
    middle = chr(ord("a") + size - 1)
    last = chr(ord("a") + 2 * size - 2)
    return filled(
        "The numbers around the board are not cells: the cells with one number "
        f"form a slant bent at row {middle}, that number at both its ends "
        f"(the 1 above row a and the 1 below row {last}: a1 to {middle}1 to {last}1).",
        WIDTH,
    )


def _legend(size: int, players: tuple[str, str]) -> tuple[str, ...]:
    sides = "   ".join(f"{GLYPHS[seat]} = {players[seat]} ({SIDE_NAMES[seat]})" for seat in (0, 1))
    return (sides, ". = empty   - = dead cell (not part of the board)", *_numbers_legend(size))


def _tally(state: MajoritiesState) -> Tally:
    """Per direction: the lines each side has won, the lines still open and
    who holds the direction."""
    players = state.players
    rows = tuple(
        (
            DIRECTION_TITLES[direction],
            (
                str(tally.lines_won[0]),
                str(tally.lines_won[1]),
                str(tally.open_lines),
                "-" if tally.holder is None else players[tally.holder],
            ),
        )
        for direction, tally in tallies(state.size, state.board).items()
    )
    return Tally((f"{GLYPHS[0]} {players[0]}", f"{GLYPHS[1]} {players[1]}", "open", "held by"), rows)


def _lines(state: MajoritiesState) -> list[str]:
    """Per direction, the lines each side has won and those still open, by
    name (a row by its letter, a diagonal by its end cells)."""
    names = board_for(state.size).line_names
    paragraphs: list[str] = []
    for direction, tally in tallies(state.size, state.board).items():
        groups = [
            f"{label} {' '.join(name for name, owner in zip(names[direction], tally.owners) if owner == who) or 'none'}"
            for label, who in ((f"{GLYPHS[0]} won", 0), (f"{GLYPHS[1]} won", 1), ("open", None))
        ]
        paragraphs.extend(filled(f"{DIRECTION_TITLES[direction]}: {'; '.join(groups)}.", WIDTH, "  "))
    return paragraphs


@cache
def _needs(size: int) -> str:
    line_count = 2 * size - 1
    return f"A direction needs {line_count // 2 + 1} of its {line_count} lines; the game needs 2 directions."


def text(drawing: Drawing) -> str:
    """The hexagon, the last move's stones in brackets, then the legend,
    the table of lines won and what wins."""
    (panel,) = drawing.panels

    def glyph(cell: tuple[int, int]) -> str:
        layers = panel.marks.get(cell)
        if not layers:
            return EMPTY
        mark = layers[-1]
        return chr(_LAST_MOVE_OFFSET + ord(mark.glyph)) if mark.last else mark.glyph

    hexagon = [_bracket_last_move(line) for line in panel.grid.render(glyph)]
    assert drawing.tally is not None
    return "\n".join([*hexagon, "", *drawing.header, "", *_tally_table(drawing.tally), *drawing.notes])


def _bracket_last_move(line: str) -> str:
    """Put the last move's stones in brackets: `(X)`, or `(X X)` for two
    neighbours in a row. The character on each side of a cell is always a
    space (or the end of the line), so the brackets never hide anything; a
    closing bracket right against the number that ends a row moves that
    number one place out, so the two never touch."""
    chars = [*line, " "]
    for column, char in enumerate(line):
        if ord(char) < _LAST_MOVE_OFFSET:
            continue
        chars[column] = chr(ord(char) - _LAST_MOVE_OFFSET)
        if ord(line[column - 2]) < _LAST_MOVE_OFFSET:
            chars[column - 1] = "("
        if column + 2 >= len(line) or ord(line[column + 2]) < _LAST_MOVE_OFFSET:
            chars[column + 1] = ")"
    return _BRACKET_ON_LABEL.sub(") ", "".join(chars).rstrip())


def _tally_table(tally: Tally) -> list[str]:
    names = tally.columns[:2]
    widths = [max(len(name), 3) for name in names]
    rows = [f"{LINES_WON:<10}  {names[0]:>{widths[0]}}  {names[1]:>{widths[1]}}  {tally.columns[2]}  {tally.columns[3]}"]
    for label, (won_first, won_second, still_open, holder) in tally.rows:
        rows.append(
            f"{label:<10}  {won_first:>{widths[0]}}  {won_second:>{widths[1]}}  {still_open:>4}  {holder}"
        )
    return rows
