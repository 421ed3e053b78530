"""The board mail of Parliament. Hidden preferences are decided here: a
player sees their own, nobody sees another's until it is revealed."""

from __future__ import annotations

from functools import cache

from games.parliament.cascade import EMPTY, PREFERENCE, SEAT, SIDES, Event
from games.parliament.chambers import Layout
from games.parliament.state import State
from pbmserv.gamekit import Outcome, filled

WIDTH = 72
CLAIM_KINDS = ("claim", "revealed")
SEAT_SLOT = "\x01"  # stands for a seat glyph in the cached drawings


def render_state(state: State, viewer: int | None, outcome: Outcome | None) -> str:
    layout = state.layout
    legend = [
        f"R = Red seat ({state.players[0]})   B = Blue seat ({state.players[1]})   . = empty seat",
        "r, b = revealed Red, Blue preference   < claimed last   * changed last",
    ]
    own_hidden = _own_hidden(state, viewer)
    own_glyph = ""
    if viewer in (0, 1) and own_hidden:
        own_glyph = PREFERENCE[viewer] + "?"
        legend.append(f"{own_glyph} = your hidden preference, which {state.players[1 - viewer]} cannot see")
    lines = [_wrap(line) for line in legend]
    lines.append("")

    turn, round_end, round_start = _split_events(state.last_events)
    ended_hung = any(kind == "round" for kind, _, _ in state.last_events)
    if ended_hung:
        lines.append(f"Round {len(state.finished_rounds)} ended hung. Its final position:")
        lines += _chambers(layout, state.finished_rounds[-1], set(), "", turn + round_end)
        lines.append("")
        events_here = round_start
    else:
        events_here = turn + round_end
    if outcome is not None:
        lines.append("Final position:")
    else:
        lines.append(f"Round {len(state.finished_rounds) + 1} of at most 3:")
    lines += _chambers(layout, state.board, own_hidden, own_glyph, events_here)
    lines.append("")
    paragraphs = _tallies(layout, state.board)
    paragraphs += _history(state, outcome)
    paragraphs += _preference_notes(state, viewer, own_hidden)
    paragraphs += _last_turn(state, outcome, ended_hung, (turn, round_end, round_start))
    paragraphs += _next(state, viewer, outcome)
    lines += [_wrap(paragraph) for paragraph in paragraphs]
    return "\n".join(lines) + "\n"


def _wrap(paragraph: str) -> str:
    if len(paragraph) <= WIDTH:
        return paragraph
    return "\n".join(filled(paragraph, WIDTH, "  "))


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


def _chambers(layout: Layout, board: str, own_hidden: set[int], own_glyph: str, events: list[Event]) -> list[str]:
    marks = {seat: "*" for kind, seat, _ in events if kind not in CLAIM_KINDS}
    marks.update({seat: "<" for kind, seat, _ in events if kind in CLAIM_KINDS})
    glyphs = [
        own_glyph if seat in own_hidden else (mark + marks[seat] if seat in marks else mark + " ")
        for seat, mark in enumerate(board)
    ]
    blocks = []
    for chamber, pieces in zip(layout.chambers, _templates(layout)):
        filled = [pieces[0]]
        for glyph, piece in zip(glyphs[chamber.first : chamber.first + chamber.size], pieces[1:]):
            filled += (glyph, piece)
        blocks.append("".join(filled).split("\n"))
    # side by side the chambers would need more than 72 columns: one below the other
    stacked = blocks[0]
    for block in blocks[1:]:
        stacked += ["", *block]
    return stacked


@cache
def _templates(layout: Layout) -> list[list[str]]:
    """Each chamber's drawing cut at its seats, which come in reading order:
    the text between seat glyphs."""
    templates = []
    for chamber in layout.chambers:
        lines = [f"{chamber.name} chamber ({chamber.size} seats)"]
        # A seat and its marker (R<, r?) in a cell three columns wide, so
        # that a space always parts them from the next seat and from the
        # row numbers on the right.
        lines += chamber.grid.render(lambda cell: SEAT_SLOT * 2, hole=" ", cell_width=3)
        pieces = "\n".join(lines).split(SEAT_SLOT * 2)
        templates.append(pieces)
    return templates


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
    free = [s for s, mark in enumerate(state.board) if mark == EMPTY and s not in own]
    default = layout.labels.index(layout.example("h5").lower())
    seat = default if default in free else free[0] if free else default
    return layout.shown[seat]


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
