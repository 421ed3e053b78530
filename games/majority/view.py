"""The observer of Majority and Psychomachia: the drawing of a board as
one viewer may see it, from which the text board (games.majority.board_text)
and the pictures are made. Hidden stones are decided here and nowhere else:
a player sees their own, nobody sees another's until it is revealed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache, lru_cache

from games.majority.board_text import EMPTY_GLYPH, IF_ENDED_NOTE, SCORING_NOTE
from games.majority.rules import example_square, geometry
from games.majority.state import BLACK, EMPTY, SIDES, STONE, WHITE, MajorityState
from games.majority.tricks import OPEN, Knowledge, Trick, final_holders, knowledge, points
from pbmserv.gamekit import Drawing, Ink, Kind, Mark, Panel, Seat, Tally, filled

WIDTH = 72
Cell = tuple[int, int]

STONE_MARK = (Mark(Kind.STONE, STONE[WHITE], WHITE), Mark(Kind.STONE, STONE[BLACK], BLACK))
STONE_LAYERS: dict[str, tuple[Mark, ...]] = {STONE[seat]: (STONE_MARK[seat],) for seat in (WHITE, BLACK)}
#: an unrevealed hidden stone, and beside a line the trick it takes on revealing
HIDDEN_MARK = (Mark(Kind.HIDDEN, STONE[WHITE].lower(), WHITE), Mark(Kind.HIDDEN, STONE[BLACK].lower(), BLACK))
#: beside a line: the opponent completed it after the seat's hidden stone did; theirs unless the seat reveals in time
CONTESTED_MARK = (Mark(Kind.HIDDEN, "!", WHITE), Mark(Kind.HIDDEN, "!", BLACK))
#: each stone's mark as the last move leaves it
AS_LAST = {mark: replace(mark, last=True) for mark in STONE_MARK + HIDDEN_MARK}
INK = (Ink.WHITE, Ink.BLACK)


@dataclass(frozen=True)
class Fixed:
    """The facts of one board size that every drawing shares."""

    cells: tuple[Cell, ...]  # by cell index
    line_names: tuple[str, ...]  # rows 1.. then columns a..


@cache
def fixed(size: int) -> Fixed:
    geo = geometry(size)
    return Fixed(
        cells=tuple((index % size, index // size) for index in range(size * size)),
        line_names=tuple(f"row {rank + 1}" for rank in range(size))
        + tuple(f"column {geo.labels[file][0]}" for file in range(size)),
    )


def draw(state: MajorityState, viewer: int | None) -> Drawing:
    """The board as `viewer` (a seat, or None for the public) may see it.

    Each stone is a mark on its cell, the viewer's own unrevealed hidden
    stone a Kind.HIDDEN one; the last move's stone (the one `<` follows on
    the text board), or the hidden stone its owner just hid, has last=True.
    Beside the rows and under the columns stand the tricks won (a stone
    mark of the winner) and, for the owner of an unrevealed hidden stone,
    those it takes on revealing (HIDDEN_MARK) or must reveal to keep
    (CONTESTED_MARK); an open trick, or at the end one nobody gets, has no
    mark (the text board prints it as a dot)."""
    if viewer not in (WHITE, BLACK):
        viewer = None
    size = state.size
    seen = knowledge(state, viewer)
    at_end = final_holders(seen)
    if state.over:
        tricks = {line: STONE_MARK[holder] for line, holder in enumerate(at_end) if holder is not None}
    else:
        tricks = {line: _trick_mark(trick) for line, trick in enumerate(seen.tricks) if trick != OPEN}
    panel = Panel(
        grid=geometry(size).grid,
        marks=_marks(state, viewer, seen),
        chequered=True,
        row_marks={line: mark for line, mark in tricks.items() if line < size},
        column_marks={line - size: mark for line, mark in tricks.items() if line >= size},
    )
    notes = [line for note in _legend(state, viewer) + _notes(state, viewer, seen) for line in filled(note, WIDTH, "  ")]
    notes.append(SCORING_NOTE)
    if not state.over:
        notes.append(IF_ENDED_NOTE)
    return Drawing(
        title=_title(state, seen, at_end),
        seats=seats(state.players),
        panels=(panel,),
        tally=_tally(state, seen, at_end),
        notes=tuple(notes),
        last_move=_last_move(state, viewer),
    )


@lru_cache(maxsize=1024)
def seats(players: tuple[str, str]) -> tuple[Seat, ...]:
    """The seats of a board of `players` (made once for each pair: a board's drawings all share them)."""
    return tuple(Seat(player, SIDES[seat], STONE[seat], INK[seat]) for seat, player in enumerate(players))


def _marks(state: MajorityState, viewer: int | None, seen: Knowledge) -> dict[Cell, tuple[Mark, ...]]:
    cells = fixed(state.size).cells
    marks = {cells[index]: STONE_LAYERS[stone] for index, stone in enumerate(state.board) if stone != EMPTY}
    for seat, square in enumerate(seen.known_hidden):
        if square is not None:
            marks[cells[square]] = (STONE_MARK[seat] if state.revealed_at[seat] is not None else HIDDEN_MARK[seat],)
    if state.last is not None:
        seat, action, square = state.last
        # a placed stone, the hidden stone a reveal alone showed to all, or the viewer's own hide
        last = square if action != "hide" else seen.known_hidden[seat] if seat == viewer else None
        if last is not None:
            (mark,) = marks[cells[last]]
            marks[cells[last]] = (AS_LAST[mark],)
    return marks


def _trick_mark(trick: Trick) -> Mark:
    """The mark of a trick that is not OPEN: someone holds it or waits to."""
    if trick.waiting is not None:
        return CONTESTED_MARK[trick.waiting] if trick.holder is not None else HIDDEN_MARK[trick.waiting]
    assert trick.holder is not None
    return STONE_MARK[trick.holder]


def _title(state: MajorityState, seen: Knowledge, at_end: Sequence[int | None]) -> str:
    players = state.players
    if state.over:
        scores = points(seen, at_end)
        winner = WHITE if scores[WHITE] > scores[BLACK] else BLACK
        status = f"{players[winner]} won {number(scores[winner])} points to {number(scores[1 - winner])}"
    elif state.in_setup:
        status = " and ".join(players[seat] for seat in (WHITE, BLACK) if state.hidden[seat] is None) + " to hide a stone"
    else:
        status = f"{players[state.mover]} to move"
    name = "Psychomachia" if state.hidden_variant else "Majority"
    return f"{name}, {state.size}x{state.size}: {_who(state, WHITE)} against {_who(state, BLACK)}, {status}"


def _last_move(state: MajorityState, viewer: int | None) -> str:
    """The last move as the move list shows it to `viewer`, after its player's name."""
    if state.last is None:
        return ""
    seat, action, square = state.last
    labels = geometry(state.size).labels
    if action == "hide":
        move = f"hide {labels[square]}" if seat == viewer and state.hidden_square(seat) is not None else "(secret)"
    elif action == "reveal":
        move = "reveal"
    else:
        move = f"reveal,{labels[square]}" if action == "reveal,place" else labels[square]
    return f"{state.players[seat]} {move}"


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
    names = fixed(state.size).line_names
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
            fixed(state.size).line_names[line]
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


def _tally(state: MajorityState, seen: Knowledge, at_end: Sequence[int | None]) -> Tally:
    """The tallies under the board; `at_end` is final_holders(seen)."""
    held_now = at_end if state.over else [trick.holder for trick in seen.tricks]
    white, black = state.players
    rows = [
        ("Stones left", (str(state.stones - (state.placed + 1) // 2), str(state.stones - state.placed // 2))),
        ("Tricks won", (str(held_now.count(WHITE)), str(held_now.count(BLACK)))),
    ]
    if state.over:
        rows.append(("Final points", _points_text(seen, at_end)))
    else:
        rows.append(("Points now", _points_text(seen, held_now)))
        rows.append(("If it ended now", _points_text(seen, at_end)))
    return Tally(columns=(f"{white} (W)", f"{black} (B)"), rows=tuple(rows))


def _points_text(seen: Knowledge, holders: Sequence[int | None]) -> tuple[str, str]:
    white, black = points(seen, holders)
    return number(white), number(black)


def number(value: float) -> str:
    return f"{value:g}"


def name_list(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
