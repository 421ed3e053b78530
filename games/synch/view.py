"""The board of Move In Synch, In Opposition as everybody sees it (its
drawing and the text board laid out from it), and the sentences that tell
a player what to send."""

from __future__ import annotations

import games.synch.rules as rules
from games.synch.rules import Phase
from games.synch.state import (
    EMPTY,
    MODE_FIRST,
    OPPOSITION,
    SIDE_NAMES,
    SYMBOLS,
    SYNCH,
    TITLE,
    Cell,
    LastMove,
    SynchState,
    cells_by_index,
    grid_for,
    index,
)
from pbmserv.gamekit import OPPOSITE, Drawing, Ink, Kind, Mark, Panel, Seat, SquareGrid, Tally, filled

MARKER_GLYPHS = ("1", "2")
SHARED_MARKERS_GLYPH = "*"
WIDTH = 72
INKS = (Ink.BLACK, Ink.WHITE)
#: the layers of a square holding a symbol, by the symbol; the last round's new ones last=True
SYMBOL_LAYERS = {SYMBOLS[seat]: (Mark(Kind.STONE, SYMBOLS[seat], seat),) for seat in (0, 1)}
LAST_SYMBOL_LAYERS = {SYMBOLS[seat]: (Mark(Kind.STONE, SYMBOLS[seat], seat, last=True),) for seat in (0, 1)}


def draw(state: SynchState) -> Drawing:
    """The position as everybody sees it: the board shows only what both
    players have sent. The marks of the last move are those of the last
    placement or round (a half round under way marks nothing yet), while
    the last move named is the move list's last, a half round included."""
    players = state.players
    markers = rules.shown_markers(state)
    counts = state.counts()
    empty = state.marks.count(EMPTY)
    phase = rules.phase(state)
    legend = [
        f"{SYMBOLS[0]} = {players[0]} ({SIDE_NAMES[0]}), "
        f"{SYMBOLS[1]} = {players[1]} ({SIDE_NAMES[1]}), {EMPTY} = empty square.",
        *_marker_legend(state, markers),
    ]
    paragraphs = [
        f"Symbols: {players[0]} {counts[0]}, {players[1]} {counts[1]}; "
        f"{empty} square{'s' if empty != 1 else ''} empty."
    ]
    tally_rows = [(f"{SYMBOLS[seat]} {players[seat]}", (str(counts[seat]),)) for seat in (0, 1)]
    tally_rows.append(("empty squares", (str(empty),)))
    if state.markers[1] is not None and phase is not None:
        limit = rules.stall_limit(state)
        paragraphs.append(
            f"Rounds in a row without a new symbol: {state.quiet_moves} (the game ends at {limit})."
        )
        tally_rows.append((f"rounds without a new symbol (ends at {limit})", (str(state.quiet_moves),)))
    if state.last is not None:
        paragraphs.append(_describe_last(state, state.last))
    if phase is not None:
        if phase.kind != "place":
            paragraphs.extend(_describe_current(state))
        paragraphs.append(request(state, phase))
    else:
        paragraphs.append(_game_over(state))
    return Drawing(
        title=_title(state, phase),
        seats=tuple(Seat(players[seat], SIDE_NAMES[seat], SYMBOLS[seat], INKS[seat]) for seat in (0, 1)),
        panels=(Panel(grid_for(state.size), _marks(state, markers)),),
        tally=Tally(("count",), tuple(tally_rows)),
        header=_wrapped(legend),
        notes=_wrapped(paragraphs),
        last_move="" if state.last is None else _last_move(state, state.last),
    )


def text(drawing: Drawing) -> str:
    """The board, each square showing its uppermost mark (a marker stands in
    place of its square's symbol, as a piece on a chessboard: beside the
    symbol it would touch the next square, since two columns a square is
    all that fits 26 squares in 72 columns), then the legend, which tells
    what lies under each marker, and the notes."""
    (panel,) = drawing.panels
    grid = panel.grid
    assert isinstance(grid, SquareGrid)

    def glyph(cell: Cell) -> str:
        layers = panel.marks.get(cell)
        return layers[-1].glyph if layers else EMPTY

    lines = grid.render(glyph)
    # a marker glyph is a digit: keep it clear of the right-hand rank numbers
    body_end = len(str(grid.height)) + 1 + 2 * grid.width
    lines[1:-1] = [f"{line[:body_end]} {line[body_end:]}" for line in lines[1:-1]]
    return "\n".join([*lines, "", *drawing.header, *drawing.notes])


def _marks(state: SynchState, markers: tuple[Cell | None, Cell | None]) -> dict[Cell, tuple[Mark, ...]]:
    """Each square's symbol (the last round's new ones last=True), the
    markers on top."""
    marks: dict[Cell, tuple[Mark, ...]] = {
        cell: SYMBOL_LAYERS[char] for cell, char in zip(cells_by_index(state.size), state.marks) if char != EMPTY
    }
    if state.last is not None:
        for cell in state.last.drawn:
            marks[cell] = LAST_SYMBOL_LAYERS[state.marks[index(state, cell)]]
    moved = _moved_by_last(state, markers)
    if markers[0] is not None and markers[0] == markers[1]:
        shared = Mark(Kind.MARKER, SHARED_MARKERS_GLYPH, last=any(moved))
        marks[markers[0]] = (*marks.get(markers[0], ()), shared)
        return marks
    for seat, square in enumerate(markers):
        if square is not None:
            marker = Mark(Kind.MARKER, MARKER_GLYPHS[seat], seat, last=moved[seat])
            marks[square] = (*marks.get(square, ()), marker)
    return marks


def _moved_by_last(state: SynchState, shown: tuple[Cell | None, Cell | None]) -> tuple[bool, bool]:
    """Whether the last placement or round put each seat's marker where it
    is shown: a half round under way is not yet a move of the rules, so a
    directioner shown a step ahead is not the last move's."""
    last = state.last
    if last is None:
        return False, False
    if last.number == 0:
        return last.seat == 0, last.seat == 1
    assert last.start is not None
    moved = [last.start[seat] != state.markers[seat] and shown[seat] == state.markers[seat] for seat in (0, 1)]
    return moved[0], moved[1]


def _title(state: SynchState, phase: Phase | None) -> str:
    players = state.players
    sides = f"{players[0]} ({SYMBOLS[0]}) against {players[1]} ({SYMBOLS[1]})"
    if phase is None:
        counts = state.counts()
        now = "a draw" if counts[0] == counts[1] else f"{players[0 if counts[0] > counts[1] else 1]} won"
    elif phase.kind == "place":
        now = f"{players[phase.seat]} to place"
    else:
        now = f"round {state.moves_done + 1}, {players[phase.seat]} to move"
    return f"{TITLE}, size {state.size}: {sides}, {now}"


def _last_move(state: SynchState, last: LastMove) -> str:
    """The last move in short, as the move list ends: "alice place c3",
    "round 4: bob ne, alice synch", or the half of a round under way,
    "alice synch, the first half of round 5"."""
    players = state.players
    if state.pending is not None:
        directioner = rules.directioner(state)
        sender = 1 - directioner if state.order == MODE_FIRST else directioner
        return f"{players[sender]} {state.pending}, the first half of round {state.moves_done + 1}"
    if last.number == 0:
        return f"{players[last.seat]} place {grid_for(state.size).label(last.drawn[0])}"
    decider = players[1 - last.seat]
    answer = f"{decider} stayed put" if last.mode is None else f"{decider} {last.mode}"
    return f"round {last.number}: {players[last.seat]} {last.direction}, {answer}"


def _wrapped(paragraphs: list[str]) -> tuple[str, ...]:
    lines: list[str] = []
    for paragraph in paragraphs:
        if len(paragraph) <= WIDTH:
            lines.append(paragraph)
            continue
        # no line break inside "x = alice"
        glued = paragraph.replace(" = ", "\xa0=\xa0")
        wrapped = filled(glued, WIDTH, break_on_hyphens=False)
        lines.extend(line.replace("\xa0", " ") for line in wrapped)
    return tuple(lines)


def _marker_legend(state: SynchState, markers: tuple[Cell | None, Cell | None]) -> list[str]:
    """'1 = alice's marker on c3 (an x, just marked).', a line a marker: the
    markers hide their squares, so the legend says what lies under each."""
    grid = grid_for(state.size)
    drawn_last = set(state.last.drawn) if state.last else set()

    def under(cell: Cell) -> str:
        mark = state.marks[index(state, cell)]
        what = "empty" if mark == EMPTY else f"an {mark}"
        return f"{what}, just marked" if cell in drawn_last else what

    if markers[0] is not None and markers[0] == markers[1]:
        return [f"{SHARED_MARKERS_GLYPH} = both markers on {grid.label(markers[0])} ({under(markers[0])})."]
    return [
        f"{glyph} = {state.players[seat]}'s marker"
        + (" (not placed yet)." if cell is None else f" on {grid.label(cell)} ({under(cell)}).")
        for seat, (cell, glyph) in enumerate(zip(markers, MARKER_GLYPHS))
    ]


def _game_over(state: SynchState) -> str:
    """The last paragraph of a finished game's board mail."""
    ending = rules.ending(state)
    assert ending is not None
    counts = state.counts()
    if counts[0] == counts[1]:
        verdict = f"A draw at {counts[0]} symbols each"
    else:
        winner = 0 if counts[0] > counts[1] else 1
        verdict = f"{state.players[winner]} wins by {counts[winner]} symbols to {counts[1 - winner]}"
    return f"Game over. {verdict}: {ending[1]}."


def _describe_last(state: SynchState, last: LastMove) -> str:
    grid = grid_for(state.size)
    players = state.players
    if last.number == 0:
        square = grid.label(last.drawn[0])
        # a half round under way is the last move, told by `_describe_current`
        label = "Last move" if state.pending is None else "Last placement"
        return f"{label}: {players[last.seat]} placed their marker on {square}."
    assert last.start is not None and last.direction is not None
    directioner, decider = last.seat, 1 - last.seat
    own_from = last.start[directioner]
    other_from = last.start[decider]
    assert own_from is not None and other_from is not None
    own_to = state.step(own_from, last.direction)
    assert own_to is not None
    text = (
        f"Last round ({last.number}): {players[directioner]} (directioner) went "
        f"{last.direction} from {grid.label(own_from)} to {grid.label(own_to)}; "
    )
    other_to = other_from
    if last.mode is None:
        text += (
            f"{players[decider]} (decider) could not step {last.direction} or "
            f"{OPPOSITE[last.direction]} from {grid.label(other_from)} without leaving "
            "the board and stayed put (the server skipped that half)."
        )
    else:
        step = rules.decider_direction(last.direction, last.mode)
        stepped = state.step(other_from, step)
        assert stepped is not None
        other_to = stepped
        text += (
            f"{players[decider]} (decider) went in {last.mode}, {step} from "
            f"{grid.label(other_from)} to {grid.label(other_to)}."
        )
    if last.mode is not None and own_to == other_to and state.is_empty(own_to):
        text += f" Both markers landed on empty {grid.label(own_to)}, so neither marked it."
    elif last.drawn:
        marked = [f"{_owner_of(state, cell)}'s {state.marks[index(state, cell)]} on {grid.label(cell)}" for cell in last.drawn]
        text += " New symbols: " + ", ".join(marked) + "."
    else:
        text += " No new symbol."
    return text


def _owner_of(state: SynchState, cell: Cell) -> str:
    return state.players[SYMBOLS.index(state.marks[index(state, cell)])]


def _describe_current(state: SynchState) -> list[str]:
    """The round under way, and its first half when that is sent: then
    that half is the last move (the move list's last line)."""
    players = state.players
    directioner = rules.directioner(state)
    decider = 1 - directioner
    text = (
        f"Round {state.moves_done + 1}: {players[directioner]} is the directioner, "
        f"{players[decider]} the decider."
    )
    if state.pending is None:
        return [text]
    if state.order == MODE_FIRST:
        return [text, f"Last move: {players[decider]} announced {state.pending}."]
    own = rules.shown_markers(state)[directioner]
    assert own is not None
    return [
        text,
        f"Last move: {players[directioner]} went {state.pending} to "
        f"{grid_for(state.size).label(own)} (marked when the round ends).",
    ]


# -- what to send, and why a move is refused --------------------------------
def what_to_send(state: SynchState, phase: Phase) -> str:
    if phase.kind == "place":
        # the example is the board mail's example move (the first legal one), so a mail gives one
        grid = grid_for(state.size)
        example = f"like place {grid.label(rules.legal_places(state, phase.seat)[0])}"
        first = state.markers[0]
        if phase.seat == 0 or first is None:
            return f"send place and a square, {example}"
        return f"send place and a square other than {grid.label(first)}, {example}"
    if phase.kind == "mode":
        return "send " + " or ".join(rules.legal_modes(state))
    return "send a direction: " + ", ".join(rules.legal_directions(state))


def request(state: SynchState, phase: Phase) -> str:
    """'bob must send synch or opposition.'"""
    return f"{state.players[phase.seat]} must {what_to_send(state, phase)}."


def wrong_kind(state: SynchState, phase: Phase, sent: str) -> str:
    players = state.players
    directioner = rules.directioner(state)
    decider = 1 - directioner
    wanted = what_to_send(state, phase)
    if phase.kind == "place":
        return f"The markers are not placed yet: {wanted}."
    if sent == "place":
        return f"Both markers are already placed: {wanted}."
    if phase.kind == "mode" and state.order == MODE_FIRST:
        return (
            f"You are the decider of round {state.moves_done + 1}: {wanted}; "
            f"{players[directioner]} then names the direction."
        )
    if phase.kind == "mode":
        return f"{players[directioner]} already went {state.pending}: {wanted}."
    if state.order == MODE_FIRST:
        return f"{players[decider]} already announced {state.pending}: {wanted}."
    return (
        f"You are the directioner of round {state.moves_done + 1}: {wanted}; "
        f"{players[decider]} then chooses synch or opposition."
    )


def refused_place(state: SynchState, seat: int, cell: Cell) -> str | None:
    if cell != state.markers[1 - seat]:
        return None
    return (
        f"{grid_for(state.size).label(cell)} holds {state.players[1 - seat]}'s marker: "
        "place yours on any other square."
    )


def refused_mode(state: SynchState, mode: str) -> str | None:
    other = OPPOSITION if mode == SYNCH else SYNCH
    if state.order == MODE_FIRST:
        if mode in rules.legal_modes(state):
            return None
        return f"In {mode} no direction keeps both markers on the board: announce {other}."
    direction = state.pending
    assert direction is not None
    if rules.decider_can_go(state, direction, mode):
        return None
    cell = state.markers[1 - rules.directioner(state)]
    assert cell is not None
    step = rules.decider_direction(direction, mode)
    return f"In {mode} you would go {step} from {grid_for(state.size).label(cell)} off the board: send {other}."


def refused_direction(state: SynchState, direction: str) -> str | None:
    legal = rules.legal_directions(state)
    if direction in legal:
        return None
    directioner = rules.directioner(state)
    grid = grid_for(state.size)
    own = state.markers[directioner]
    assert own is not None
    if state.step(own, direction) is None:
        problem = f"Going {direction} from {grid.label(own)} takes your marker off the board"
    else:
        decider = 1 - directioner
        decider_cell = state.markers[decider]
        assert decider_cell is not None and state.pending is not None
        step = rules.decider_direction(direction, state.pending)
        problem = (
            f"Going {direction} in {state.pending} takes {state.players[decider]}'s "
            f"marker {step} from {grid.label(decider_cell)} off the board"
        )
    return f"{problem}: send one of {', '.join(legal)}."
