"""What a viewer of a game of Parliament is shown: the drawing of the
position (`draw_state`), from which the board mail and the pictures are
made. Hidden preferences are decided here: a player sees their own, nobody
sees another's until it is revealed.

A seat held is a stone and a revealed preference a preference, with the
letter the board mail prints (R, B, r, b) as their glyph; the viewer's own
hidden preference is a hidden mark (r or b). What the last turn claimed or
changed is marked last, and the seat claimed carries the claimer's marker
`<` on top."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import cache

from games.parliament.board_text import CHANGED_MARK, CLAIMED_MARK, HIDDEN_MARK
from games.parliament.cascade import EMPTY, PREFERENCE, SEAT, SIDES, Event
from games.parliament.chambers import Layout
from games.parliament.state import State
from pbmserv.gamekit import Drawing, Ink, Kind, Mark, Outcome, Panel, Seat, Tally, filled
from pbmserv.gamekit.drawing import Cell

WIDTH = 72
CLAIM_KINDS = ("claim", "revealed")
INKS = (Ink.RED, Ink.BLUE)
_HELD = {
    letter: Mark(kind, letter, player)
    for kind, letters in ((Kind.STONE, SEAT), (Kind.PREFERENCE, PREFERENCE))
    for player, letter in enumerate(letters)
}
#: what a seat holds, by its character on the board
LAYERS: dict[str, tuple[Mark, ...]] = {letter: (mark,) for letter, mark in _HELD.items()}
#: the same, placed or changed by the last turn
LAST_LAYERS: dict[str, tuple[Mark, ...]] = {letter: (replace(mark, last=True),) for letter, mark in _HELD.items()}
CLAIMED = tuple(Mark(Kind.MARKER, CLAIMED_MARK, player, True) for player in (0, 1))
OWN_HIDDEN = tuple((Mark(Kind.HIDDEN, letter, player),) for player, letter in enumerate(PREFERENCE))


def draw_state(state: State, viewer: int | None, outcome: Outcome | None) -> Drawing:
    """The position as `viewer` (a seat, or None for the public) may see it."""
    layout = state.layout
    legend = [
        f"R = Red seat ({state.players[0]})   B = Blue seat ({state.players[1]})   . = empty seat",
        f"r, b = revealed Red, Blue preference   {CLAIMED_MARK} claimed last   {CHANGED_MARK} changed last",
    ]
    own_hidden = _own_hidden(state, viewer)
    if viewer in (0, 1) and own_hidden:
        legend.append(f"{PREFERENCE[viewer]}{HIDDEN_MARK} = your hidden preference, which {state.players[1 - viewer]} cannot see")
    turn, round_end, round_start = _split_events(state.last_events)
    ended_hung = any(kind == "round" for kind, _, _ in state.last_events)
    # one caption per position drawn, a panel per chamber each
    captions = []
    panels = []
    if ended_hung:
        captions.append(f"Round {len(state.finished_rounds)} ended hung. Its final position:")
        panels += _chambers(layout, state.finished_rounds[-1], {}, turn + round_end, state.last_claimer)
        events_here = round_start
    else:
        events_here = turn + round_end
    if outcome is not None:
        captions.append("Final position:")
    else:
        captions.append(f"Round {len(state.finished_rounds) + 1} of at most 3:")
    hidden_marks = {seat: OWN_HIDDEN[viewer] for seat in own_hidden} if viewer in (0, 1) else {}
    panels += _chambers(layout, state.board, hidden_marks, events_here, state.last_claimer)
    paragraphs = _tallies(layout, state.board)
    paragraphs += _history(state, outcome)
    paragraphs += _preference_notes(state, viewer, own_hidden)
    paragraphs += _last_turn(state, outcome, ended_hung, (turn, round_end, round_start))
    paragraphs += _next(state, viewer, outcome)
    return Drawing(
        title=_title(state, outcome),
        seats=tuple(Seat(player, SIDES[side], SEAT[side], INKS[side]) for side, player in enumerate(state.players)),
        panels=tuple(panels),
        tally=_tally(layout, state.board, state.players),
        header=(*_lines(legend), *captions),
        notes=_lines(paragraphs),
        last_move=_last_move(state, turn),
    )


def _lines(paragraphs: list[str]) -> tuple[str, ...]:
    """The paragraphs as the mail's lines, each filled to its width."""
    lines: list[str] = []
    for paragraph in paragraphs:
        if len(paragraph) <= WIDTH:
            lines.append(paragraph)
        else:
            lines += filled(paragraph, WIDTH, "  ")
    return tuple(lines)


def _title(state: State, outcome: Outcome | None) -> str:
    players = " against ".join(f"{player} ({SIDES[side]})" for side, player in enumerate(state.players))
    if outcome is not None:
        result = f"game won by {state.players[outcome.winners[0]]}" if outcome.winners else "game drawn"
        return f"Parliament, final position: {players}, {result}: {outcome.reason}"
    if state.in_setup:
        waiting = " and ".join(state.players[side] for side in (0, 1) if state.preferences[side] is None)
        return f"Parliament, before the first claim: {players}, preferences still to come from {waiting}"
    mover = state.players[state.next_seat]
    return f"Parliament, round {len(state.finished_rounds) + 1} of at most 3: {players}, {mover} to move"


def _last_move(state: State, turn: list[Event]) -> str:
    if not turn or state.last_claimer is None:
        return ""
    claimer = state.last_claimer
    return f"{state.players[claimer]} ({SIDES[claimer]}) claimed {state.layout.shown[turn[0][1]]}"


def _tally(layout: Layout, board: str, players: tuple[str, ...]) -> Tally:
    """Seats held in each chamber and, with both, in all."""
    columns = tuple(chamber.name for chamber in layout.chambers)
    rows = []
    for side, player in enumerate(players):
        held = [str(chamber.count(board, SEAT[side])) for chamber in layout.chambers]
        if layout.prefixed:
            held.append(str(board.count(SEAT[side])))
        rows.append((f"{player} ({SIDES[side]})", tuple(held)))
    return Tally(columns + ("Both",) if layout.prefixed else columns, tuple(rows))


def _own_hidden(state: State, viewer: int | None) -> set[int]:
    if viewer not in (0, 1):
        return set()
    if state.in_setup:
        return set(state.preferences[viewer] or ())
    return {s for s in state.live_preferences(viewer) if state.board[s] == EMPTY}


def _split_events(events: tuple[Event, ...]) -> tuple[list[Event], list[Event], list[Event]]:
    turn: list[Event] = []
    round_end: list[Event] = []
    round_start: list[Event] = []
    part = turn
    for event in events:
        if event[0] == "round-end":
            part = round_end
        elif event[0] == "round":
            part = round_start
            continue
        part.append(event)
    return turn, round_end, round_start


def _chambers(
    layout: Layout,
    board: str,
    hidden_marks: Mapping[int, tuple[Mark, ...]],
    events: list[Event],
    claimer: int | None,
) -> list[Panel]:
    """A panel per chamber of `board`: every seat held or preferred, the
    marks of the viewer's own hidden preferences by seat, and what the
    `events` of the last turn, made by `claimer`, claimed or changed."""
    touched = {seat: LAST_LAYERS[board[seat]] for _, seat, _ in events}
    if claimer is not None:
        for kind, seat, _ in events:
            if kind in CLAIM_KINDS:
                touched[seat] += (CLAIMED[claimer],)
    panels = []
    for chamber, (title, cells) in zip(layout.chambers, _chamber_cells(layout)):
        first = chamber.first
        marks = {cell: LAYERS[mark] for cell, mark in zip(cells, board[first : first + chamber.size]) if mark != EMPTY}
        for changes in (touched, hidden_marks):
            for seat, layers in changes.items():
                if first <= seat < first + chamber.size:
                    marks[cells[seat - first]] = layers
        panels.append(Panel(chamber.grid, marks, title))
    return panels


@cache
def _chamber_cells(layout: Layout) -> tuple[tuple[str, tuple[Cell, ...]], ...]:
    """Each chamber's title and its cells in seat order."""
    return tuple((f"{chamber.name} chamber ({chamber.size} seats)", chamber.grid.cells) for chamber in layout.chambers)


def _tallies(layout: Layout, board: str) -> list[str]:
    lines = [
        f"{chamber.name}: Red {chamber.count(board, 'R')}, Blue {chamber.count(board, 'B')}, "
        f"empty {chamber.count(board, EMPTY)}; preferences shown: "
        f"Red {chamber.count(board, 'r')}, Blue {chamber.count(board, 'b')}."
        for chamber in layout.chambers
    ]
    rule = f"To win a round: {layout.total_needed} of all {layout.size} seats"
    chamber = layout.must_hold
    if chamber is not None:
        lines.append(f"Both chambers: Red {board.count('R')}, Blue {board.count('B')}.")
        rule += f" and {chamber.needed} of the {chamber.size} {chamber.name} seats"
    lines += [rule, "(more than half; preferences do not count as seats)."]
    return lines


def _score_text(layout: Layout, board: str, player: int) -> str:
    text = f"{board.count(SEAT[player])} seats"
    chamber = layout.must_hold
    if chamber is not None:
        text += f" ({chamber.count(board, SEAT[player])} {chamber.name})"
    return text


def _history(state: State, outcome: Outcome | None) -> list[str]:
    layout = state.layout
    hung = state.finished_rounds if outcome is None or not outcome.winners else state.finished_rounds[:-1]
    lines = [
        f"Round {number} was hung: Red {_score_text(layout, board, 0)}, "
        f"Blue {_score_text(layout, board, 1)}."
        for number, board in enumerate(hung, start=1)
    ]
    if outcome is not None:
        lines.append(f"Game over: {outcome.reason}.")
    return lines


def _preference_notes(state: State, viewer: int | None, own_hidden: set[int]) -> list[str]:
    shown = state.layout.shown
    lines = []
    if viewer in (0, 1) and state.preferences[viewer] is not None:
        if own_hidden:
            names = ", ".join(shown[s] for s in sorted(own_hidden))
            lines.append(f"Your hidden preferences: {names}.")
        elif not state.preferences[viewer]:
            lines.append("You chose no preferences.")
    cancelled = state.cancelled()
    if cancelled and (viewer in (0, 1) or state.finished_rounds):
        names = ", ".join(shown[s] for s in sorted(cancelled))
        lines.append(f"Named as a preference by both players, so an ordinary seat: {names}.")
    return lines


def _phrase(shown: tuple[str, ...], event: Event) -> str:
    kind, seat, mark = event
    side = SIDES[0] if mark in "Rr" else SIDES[1]
    if kind == "flip":
        return f"{shown[seat]} to {side}"
    if kind == "surrounded":
        return f"{shown[seat]} revealed as {side}'s preference (surrounded)"
    return f"{shown[seat]} revealed as {side}'s preference"


def _in_order(shown: tuple[str, ...], events: list[Event]) -> str:
    return ", ".join(_phrase(shown, event) for event in events)


def _last_turn(
    state: State,
    outcome: Outcome | None,
    ended_hung: bool,
    parts: tuple[list[Event], list[Event], list[Event]],
) -> list[str]:
    turn, round_end, round_start = parts
    if not turn or state.last_claimer is None:
        return []
    shown = state.layout.shown
    claimer = state.last_claimer
    kind, seat, _ = turn[0]
    line = f"Last turn: {state.players[claimer]} ({SIDES[claimer]}) claimed {shown[seat]}"
    if kind == "revealed":
        line += (
            f", a hidden preference of {state.players[1 - claimer]}: it is revealed as "
            f"{SIDES[1 - claimer]}'s and the turn is over"
        )
    lines = [line + "."]
    if len(turn) > 1:
        lines.append(f"Then, in order: {_in_order(shown, turn[1:])}.")
    if ended_hung or outcome is not None:
        line = f"That ended round {len(state.finished_rounds)}"
        if round_end:
            line += f"; then, in order: {_in_order(shown, round_end)}"
        lines.append(line + ".")
    if ended_hung:
        line = f"Round {len(state.finished_rounds) + 1} starts with the preferences in place"
        if round_start:
            line += f"; then, in order: {_in_order(shown, round_start)}"
        lines.append(line + ".")
    return lines


def _example_claim(state: State, viewer: int | None) -> str:
    """A seat the player to move can claim, as far as the viewer knows: h5
    (L:h5 with both chambers) while it looks empty, else the first seat that
    does in reading order. Only the mover's own view leaves out their hidden
    preferences: the opponent's view uses public facts alone, so it never
    hints at where the mover's preferences are."""
    layout = state.layout
    mover = state.next_seat
    own = set(state.live_preferences(mover)) if viewer == mover else set()
    board = state.board
    seat = _default_claim(layout)
    if board[seat] != EMPTY or seat in own:
        seat = next((s for s, mark in enumerate(board) if mark == EMPTY and s not in own), seat)
    return layout.shown[seat]


@cache
def _default_claim(layout: Layout) -> int:
    return layout.labels.index(layout.example("h5").lower())


def _next(state: State, viewer: int | None, outcome: Outcome | None) -> list[str]:
    if outcome is not None:
        return []
    layout = state.layout
    if state.in_setup:
        waiting = " and ".join(state.players[s] for s in (0, 1) if state.preferences[s] is None)
        example = "prefer U:c4,L:h5" if layout.prefixed else "prefer c4,h5"
        return [
            f"Before the first claim each player secretly sends prefer and up to "
            f"{layout.preference_limit} seats (like {example}) or prefer none. "
            f"Still to send: {waiting}."
        ]
    mover = state.next_seat
    example = _example_claim(state, viewer)
    return [f"Next: {state.players[mover]} ({SIDES[mover]}) claims one empty seat, like {example}."]
