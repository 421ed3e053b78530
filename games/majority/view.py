"""The board mail of Majority and Psychomachia. Hidden stones are decided
here: a player sees their own, nobody sees another's until it is revealed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from games.majority.rules import example_square, geometry
from games.majority.state import BLACK, EMPTY, SIDES, STONE, WHITE, MajorityState
from games.majority.tricks import OPEN, Knowledge, final_holders, knowledge, points
from pbmserv.gamekit import filled

WIDTH = 72
EMPTY_GLYPH = (":", ".")  # an empty dark / light square on the board
LAST_MARK = "<"
CELL_WIDTH = 2  # a square's text on the board: a stone, then room for LAST_MARK


def cell_text(glyph: str) -> str:
    """A square's text on the board, as wide as a cell."""
    return glyph.ljust(CELL_WIDTH)


PLACED_TEXT = {stone: cell_text(stone) for stone in STONE}


@dataclass(frozen=True)
class Layout:
    """The fixed text of one board size."""

    line_names: tuple[str, ...]  # rows 1.. then columns a..
    #: each printed row of the board, top first, as a slice of a list by cell index
    printed_rows: tuple[slice, ...]
    #: by cell index: the board text of the empty square
    empty_texts: tuple[str, ...]
    #: by rank: spaces after its number (not padded on the right) that line up the trick marks
    mark_pads: tuple[str, ...]


@cache
def layout(size: int) -> Layout:
    geo = geometry(size)
    return Layout(
        line_names=tuple(f"row {rank + 1}" for rank in range(size))
        + tuple(f"column {geo.labels[file][0]}" for file in range(size)),
        printed_rows=tuple(
            slice(geo.index(row[0]), geo.index(row[-1]) + 1) for row in geo.grid.display_rows()
        ),
        empty_texts=tuple(cell_text(EMPTY_GLYPH[side]) for side in geo.sides),
        mark_pads=tuple(" " * (len(str(size)) - len(str(rank + 1))) for rank in range(size)),
    )


def render(state: MajorityState, viewer: int | None) -> str:
    if viewer not in (WHITE, BLACK):
        viewer = None
    geo = geometry(state.size)
    seen = knowledge(state, viewer)
    texts = _board_texts(state, seen)
    at_end = final_holders(seen)
    awarded = at_end if state.over else None

    def mark(line: int) -> str:
        if awarded is not None:
            holder = awarded[line]
            return STONE[holder] if holder is not None else EMPTY
        trick = seen.tricks[line]
        if trick.waiting is not None:
            return "!" if trick.holder is not None else STONE[trick.waiting].lower()
        return STONE[trick.holder] if trick.holder is not None else EMPTY

    marks = [mark(line) for line in range(2 * state.size)]
    pads = layout(state.size).mark_pads
    lines = geo.grid.render_rows(
        [texts[row] for row in layout(state.size).printed_rows], right=lambda rank: pads[rank] + marks[rank]
    )
    lines.append(geo.grid.under_files(lambda file: marks[state.size + file]))
    lines.append("")
    for note in _legend(state, viewer) + _notes(state, viewer, seen):
        lines.extend(filled(note, WIDTH, "  "))
    lines.append("")
    lines.extend(_tallies(state, seen, at_end))
    return "\n".join(lines) + "\n"


def _board_texts(state: MajorityState, seen: Knowledge) -> list[str]:
    """Each square's text on the board by cell index: its stone as the
    viewer of `seen` knows it, LAST_MARK after the last one."""
    # a placed stone's text, else the empty square's
    texts = list(map(PLACED_TEXT.get, state.board, layout(state.size).empty_texts))
    for seat, square in enumerate(seen.known_hidden):
        if square is not None:
            stone = STONE[seat] if state.revealed_at[seat] is not None else STONE[seat].lower()
            texts[square] = cell_text(stone)
    if state.last is not None and state.last[1] != "hide":
        # a placed stone, or the hidden stone its reveal just showed to all
        square = state.last[2]
        texts[square] = texts[square].rstrip() + LAST_MARK
    return texts


def _who(state: MajorityState, seat: int) -> str:
    return f"{state.players[seat]} ({SIDES[seat]})"


def _legend(state: MajorityState, viewer: int | None) -> list[str]:
    lines = [
        f"W = {_who(state, WHITE)} on the dark squares {EMPTY_GLYPH[WHITE]}",
        f"B = {_who(state, BLACK)} on the light squares {EMPTY_GLYPH[BLACK]}",
        "< = the last stone.  Tricks beside the rows and under the columns:",
        "W or B = won, . = nobody's (equal)." if state.over else "W or B = won, . = open.",
    ]
    if viewer is not None and state.hidden[viewer] is not None and state.revealed_at[viewer] is None:
        lower = STONE[viewer].lower()
        lines.append(
            f"{lower} = your hidden stone (only you see it); {lower} as a trick = yours once "
            "you reveal; ! = your opponent completed it after you: reveal by your next "
            "move to keep it."
        )
    return lines


def _notes(state: MajorityState, viewer: int | None, seen: Knowledge) -> list[str]:
    notes = []
    if state.last is not None:
        notes.append(_last_action(state, viewer))
    if state.hidden_variant:
        notes.extend(_hidden_stone_note(state, viewer, seen, seat) for seat in (WHITE, BLACK))
    names = layout(state.size).line_names
    claimed = [(names[line], trick) for line, trick in enumerate(seen.tricks) if trick != OPEN]
    if viewer is not None:
        opponent = state.players[1 - viewer]
        mine = [(name, t) for name, t in claimed if t.waiting == viewer]
        pending = [name for name, t in mine if t.holder is None]
        contested = [name for name, t in mine if t.holder is not None]
        if pending:
            notes.append(f"You completed {name_list(pending)} with your hidden stone: yours once you reveal.")
        if contested:
            notes.append(
                f"{opponent} completed {name_list(contested)} after you did: reveal no later "
                f"than your next move to keep {'it' if len(contested) == 1 else 'them'}."
            )
    for seat in (WHITE, BLACK):
        late = [name for name, t in claimed if t.late == seat]
        if late:
            kept = "it" if len(late) == 1 else "them"
            notes.append(
                f"{state.players[seat]} completed {name_list(late)} first with the hidden stone "
                f"but did not reveal in time: {state.players[1 - seat]} keeps {kept}."
            )
    if state.in_setup:
        notes.append("Set-up: each player sends hide and an empty square of their colour.")
    elif not state.over and state.last is not None and state.last[1] == "reveal":
        notes.append(
            f"{state.players[state.mover]} has revealed and now sends the square for this "
            f"turn's stone, like {example_square(state, state.mover)}."
        )
    return notes


def _hidden_stone_note(state: MajorityState, viewer: int | None, seen: Knowledge, seat: int) -> str:
    geo = geometry(state.size)
    square = state.hidden[seat]
    who = state.players[seat]
    if square is None:
        return f"{who} has not hidden a stone yet."
    if state.revealed_at[seat] is not None:
        when = " at the end" if state.revealed_at[seat] == 2 * state.stones else ""
        note = f"{who}'s hidden stone on {geo.labels[square]} was revealed{when}."
        # say why a trick changed hands on the reveal: a line through
        # the hidden square that its owner holds was completed with it
        kept = [
            layout(state.size).line_names[line]
            for line in geo.lines_through[square]
            if state.completed_at[seat][line] is not None and seen.tricks[line].holder == seat
        ]
        if kept:
            note += f" With it {who} completed and holds {name_list(kept)}."
        return note
    if seat == viewer:
        return (
            f"Your hidden stone is on {geo.labels[square]}. To reveal it, send reveal "
            "on your turn (the turn goes on), or reveal and your stone's square "
            f"together, like reveal,{example_square(state, seat)}."
        )
    return f"{who}'s hidden stone is not revealed yet."


def _last_action(state: MajorityState, viewer: int | None) -> str:
    assert state.last is not None
    seat, action, square = state.last
    labels = geometry(state.size).labels
    who = _who(state, seat)
    if action == "hide":
        if seat == viewer:
            return f"Last move: you hid your stone on {labels[square]}."
        return f"Last move: {who} hid a stone."
    if action == "place":
        return f"Last move: {who} played {labels[square]}."
    hidden_square = state.hidden[seat]
    assert hidden_square is not None
    revealed = f"Last move: {who} revealed the hidden stone on {labels[hidden_square]}"
    if action == "reveal":
        return f"{revealed}."
    return f"{revealed} and played {labels[square]}."


def _tallies(state: MajorityState, seen: Knowledge, at_end: Sequence[int | None]) -> list[str]:
    """The table under the board; `at_end` is final_holders(seen)."""
    held_now = [trick.holder for trick in seen.tricks]
    holders = at_end if state.over else held_now
    won = [holders.count(seat) for seat in (WHITE, BLACK)]
    left = [state.stones - (state.placed + 1 - seat) // 2 for seat in (WHITE, BLACK)]
    rows = [
        ("", state.players[WHITE] + " (W)", state.players[BLACK] + " (B)"),
        ("Stones left", str(left[0]), str(left[1])),
        ("Tricks won", str(won[0]), str(won[1])),
    ]
    if state.over:
        final = points(seen, at_end)
        rows.append(("Final points", number(final[0]), number(final[1])))
    else:
        now, if_ended = points(seen, held_now), points(seen, at_end)
        rows.append(("Points now", number(now[0]), number(now[1])))
        rows.append(("If it ended now", number(if_ended[0]), number(if_ended[1])))
    label_width = max(len(row[0]) for row in rows)
    width = max(len(cell) for row in rows for cell in row[1:]) + 2
    lines = [
        (label.ljust(label_width) + white.rjust(width) + black.rjust(width)).rstrip()
        for label, white, black in rows
    ]
    lines.append("A trick scores 1 + the opposing stones on it; White adds 0.5.")
    if not state.over:
        lines.append("'If it ended now' gives open lines to the side with more stones there.")
    return lines


def number(value: float) -> str:
    return f"{value:g}"


def name_list(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
