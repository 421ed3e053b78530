"""Move In Synch, In Opposition by Leroy Quet.

Two markers walk a square board and draw their owners' symbols on the empty
squares they reach. The game goes in rounds (the rules' "moves"); every
round has two halves, each a move mail of its own: the decider's mode
(`synch` or `opposition`) and the directioner's compass direction, in that
order or (with `-order=direction-first`) the other way round. The seats
swap roles every round. The mails speak of rounds so that their numbers are
never mistaken for the server's move numbers, which count every half.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache

from pbmserv.gamekit import (
    COMPASS,
    OPPOSITE,
    Game,
    IllegalMove,
    Option,
    Outcome,
    SquareGrid,
    filled,
)

Cell = tuple[int, int]

MODE_FIRST = "mode-first"
DIRECTION_FIRST = "direction-first"
SYNCH = "synch"
OPPOSITION = "opposition"
MODES = (SYNCH, OPPOSITION)
DIRECTIONS = tuple(COMPASS)  # n ne e se s sw w nw

SYMBOLS = ("x", "o")
EMPTY = "."
MARKER_GLYPHS = ("1", "2")
SHARED_MARKERS_GLYPH = "*"
WIDTH = 72

# spellings after lower-casing and dropping spaces, hyphens and underscores
_DIRECTION_WORDS = {
    **{d: d for d in DIRECTIONS},
    "north": "n",
    "up": "n",
    "northeast": "ne",
    "east": "e",
    "right": "e",
    "southeast": "se",
    "south": "s",
    "down": "s",
    "southwest": "sw",
    "west": "w",
    "left": "w",
    "northwest": "nw",
}
_MODE_WORDS = {
    "synch": SYNCH,
    "sync": SYNCH,
    "insynch": SYNCH,
    "insync": SYNCH,
    "opposition": OPPOSITION,
    "inopposition": OPPOSITION,
    "oppose": OPPOSITION,
    "opposite": OPPOSITION,
    "opp": OPPOSITION,
}
_PLACE_WORDS = ("place", "put")


@cache
def _grid(size: int) -> SquareGrid:
    return SquareGrid(size, size)


@cache
def _steps(size: int) -> dict[tuple[Cell, str], Cell | None]:
    """Every one-square step on the board, looked up often enough to be worth a table."""
    grid = _grid(size)
    return {(cell, d): grid.step(cell, d) for cell in grid.cells for d in DIRECTIONS}


@dataclass(frozen=True)
class LastMove:
    """What the previous placement or move did, for the board mail."""

    number: int  # 0 for a placement, else the number of the round
    seat: int  # the placing seat, or the directioner of a move
    direction: str | None = None
    mode: str | None = None  # None on a move: the decider could not step
    start: tuple[Cell | None, Cell | None] | None = None  # markers before the move
    drawn: tuple[Cell, ...] = ()


@dataclass(frozen=True)
class SynchState:
    size: int
    order: str
    players: tuple[str, str]
    markers: tuple[Cell | None, Cell | None]
    marks: str  # one character per square (EMPTY or a symbol), index rank * size + file
    moves_done: int
    pending: str | None  # the first half of the move under way, if sent
    quiet_moves: int  # rounds in a row that drew no new symbol
    last: LastMove | None


@dataclass(frozen=True)
class _Phase:
    """Who must send what now."""

    kind: str  # "place", "mode" or "direction"
    seat: int


class Synch(Game):
    name = "synch"
    title = "Move In Synch, In Opposition"
    min_players = 2
    max_players = 2
    side_names = ("X", "O")
    options = (
        Option("size", 8, tuple(range(4, 27)), "squares along each side of the board"),
        Option(
            "order",
            MODE_FIRST,
            (MODE_FIRST, DIRECTION_FIRST),
            "mode-first: the decider announces synch or opposition before the direction; "
            "direction-first: the directioner steps first and the decider answers",
        ),
    )

    # -- set-up ---------------------------------------------------------------
    def new(self, options: Mapping[str, str | None], players: Sequence[str]) -> SynchState:
        values = self.resolve_options(options)
        size = values["size"]
        return SynchState(
            size=size,
            order=values["order"],
            players=(players[0], players[1]),
            markers=(None, None),
            marks=EMPTY * (size * size),
            moves_done=0,
            pending=None,
            quiet_moves=0,
            last=None,
        )

    # -- whose turn -----------------------------------------------------------
    @staticmethod
    def directioner(state: SynchState) -> int:
        """The directioner of the round under way: the first player on odd rounds."""
        return state.moves_done % 2

    def _phase(self, state: SynchState) -> _Phase | None:
        if state.markers[0] is None:
            return _Phase("place", 0)
        if state.markers[1] is None:
            return _Phase("place", 1)
        if self._ending(state) is not None:
            return None
        directioner = self.directioner(state)
        decider = 1 - directioner
        if state.order == MODE_FIRST:
            if state.pending is None:
                return _Phase("mode", decider)
            return _Phase("direction", directioner)
        if state.pending is None:
            return _Phase("direction", directioner)
        return _Phase("mode", decider)

    def to_move(self, state: SynchState) -> frozenset[int]:
        phase = self._phase(state)
        return frozenset() if phase is None else frozenset({phase.seat})

    # -- what is legal --------------------------------------------------------
    def _step(self, state: SynchState, cell: Cell, direction: str) -> Cell | None:
        return _steps(state.size)[cell, direction]

    @staticmethod
    def _decider_direction(direction: str, mode: str) -> str:
        return direction if mode == SYNCH else OPPOSITE[direction]

    def _legal_directions(self, state: SynchState) -> list[str]:
        """Directions the directioner may name now (mode-first: for the announced mode)."""
        directioner = self.directioner(state)
        own = state.markers[directioner]
        other = state.markers[1 - directioner]
        assert own is not None and other is not None
        legal = []
        for direction in DIRECTIONS:
            if self._step(state, own, direction) is None:
                continue
            if state.order == MODE_FIRST:
                assert state.pending is not None
                decider_direction = self._decider_direction(direction, state.pending)
                if self._step(state, other, decider_direction) is None:
                    continue
            legal.append(direction)
        return legal

    def _mode_leaves_direction(self, state: SynchState, mode: str) -> bool:
        """Mode-first: some direction keeps both markers on the board in this mode."""
        directioner = self.directioner(state)
        own = state.markers[directioner]
        other = state.markers[1 - directioner]
        assert own is not None and other is not None
        return any(
            self._step(state, own, d) is not None
            and self._step(state, other, self._decider_direction(d, mode)) is not None
            for d in DIRECTIONS
        )

    def _decider_can_go(self, state: SynchState, direction: str, mode: str) -> bool:
        """Direction-first: the decider's own step in this mode stays on the board."""
        decider_cell = state.markers[1 - self.directioner(state)]
        assert decider_cell is not None
        step = self._decider_direction(direction, mode)
        return self._step(state, decider_cell, step) is not None

    def _legal_modes(self, state: SynchState) -> list[str]:
        if state.order == MODE_FIRST:
            return [m for m in MODES if self._mode_leaves_direction(state, m)]
        assert state.pending is not None
        return [m for m in MODES if self._decider_can_go(state, state.pending, m)]

    def legal_moves(self, state: SynchState, seat: int) -> list[str]:
        phase = self._phase(state)
        if phase is None or phase.seat != seat:
            return []
        if phase.kind == "place":
            grid = _grid(state.size)
            taken = state.markers[1 - seat]
            return [f"place {grid.label(cell)}" for cell in grid.cells if cell != taken]
        if phase.kind == "mode":
            return self._legal_modes(state)
        return self._legal_directions(state)

    # -- reading a move -------------------------------------------------------
    def _parse(self, state: SynchState, text: str) -> tuple[str, str | Cell] | None:
        """("place", cell), ("mode", mode) or ("direction", direction); None if unreadable.
        A square that is not on the board raises the grid's own IllegalMove."""
        words = text.lower().split()
        if words and words[0] in _PLACE_WORDS:
            if len(words) == 1:
                return None
            return "place", _grid(state.size).parse("".join(words[1:]))
        squashed = "".join(words).replace("-", "").replace("_", "")
        if squashed in _MODE_WORDS:
            return "mode", _MODE_WORDS[squashed]
        if squashed in _DIRECTION_WORDS:
            return "direction", _DIRECTION_WORDS[squashed]
        if squashed[:1].isalpha() and squashed[1:].isdigit() and len(words) == 1:
            return "place", _grid(state.size).parse(squashed)
        return None

    def canonical_move(self, state: SynchState, seat: int, text: str) -> str:
        try:
            parsed = self._parse(state, text)
        except IllegalMove:
            parsed = None
        if parsed is None:
            return super().canonical_move(state, seat, text)
        kind, value = parsed
        if kind == "place":
            assert isinstance(value, tuple)
            return f"place {_grid(state.size).label(value)}"
        assert isinstance(value, str)
        return value

    # -- playing --------------------------------------------------------------
    def play(self, state: SynchState, seat: int, text: str) -> SynchState:
        phase = self._phase(state)
        if phase is None:
            raise IllegalMove("The game is over: no more moves are accepted.")
        if seat != phase.seat:
            raise IllegalMove(f"It is not your turn: {self._request(state, phase)}")
        try:
            parsed = self._parse(state, text)
        except IllegalMove:
            if phase.kind == "place":
                raise
            parsed = None  # an off-board square: the player must send something else anyway
        if parsed is None:
            wanted = self._what_to_send(state, phase)
            raise IllegalMove(f"'{text.strip()}' is not a move here: you must {wanted}.")
        kind, value = parsed
        if kind != phase.kind:
            raise IllegalMove(self._wrong_kind(state, phase, kind))
        if kind == "place":
            assert isinstance(value, tuple)
            return self._place(state, seat, value)
        assert isinstance(value, str)
        if kind == "mode":
            return self._announce(state, value)
        return self._go(state, value)

    def _place(self, state: SynchState, seat: int, cell: Cell) -> SynchState:
        grid = _grid(state.size)
        other = state.markers[1 - seat]
        if cell == other:
            raise IllegalMove(
                f"{grid.label(cell)} holds {state.players[1 - seat]}'s marker: "
                "place yours on any other square."
            )
        markers = (cell, other) if seat == 0 else (other, cell)
        return replace(
            state,
            markers=markers,
            marks=_mark(state, {cell: seat}),
            last=LastMove(number=0, seat=seat, drawn=(cell,)),
        )

    def _announce(self, state: SynchState, mode: str) -> SynchState:
        if state.order == MODE_FIRST:
            if mode not in self._legal_modes(state):
                other = OPPOSITION if mode == SYNCH else SYNCH
                raise IllegalMove(
                    f"In {mode} no direction keeps both markers on the board: announce {other}."
                )
            return replace(state, pending=mode)
        direction = state.pending
        assert direction is not None
        if not self._decider_can_go(state, direction, mode):
            grid = _grid(state.size)
            cell = state.markers[1 - self.directioner(state)]
            assert cell is not None
            step = self._decider_direction(direction, mode)
            other = OPPOSITION if mode == SYNCH else SYNCH
            raise IllegalMove(
                f"In {mode} you would go {step} from {grid.label(cell)} off the board: "
                f"send {other}."
            )
        return self._finish(state, direction, mode)

    def _go(self, state: SynchState, direction: str) -> SynchState:
        legal = self._legal_directions(state)
        if direction not in legal:
            directioner = self.directioner(state)
            grid = _grid(state.size)
            own = state.markers[directioner]
            assert own is not None
            if self._step(state, own, direction) is None:
                problem = (
                    f"Going {direction} from {grid.label(own)} takes your marker off the board"
                )
            else:
                decider = 1 - directioner
                decider_cell = state.markers[decider]
                assert decider_cell is not None and state.pending is not None
                step = self._decider_direction(direction, state.pending)
                problem = (
                    f"Going {direction} in {state.pending} takes {state.players[decider]}'s "
                    f"marker {step} from {grid.label(decider_cell)} off the board"
                )
            raise IllegalMove(f"{problem}: send one of {', '.join(legal)}.")
        if state.order == MODE_FIRST:
            assert state.pending is not None
            return self._finish(state, direction, state.pending)
        if any(self._decider_can_go(state, direction, m) for m in MODES):
            return replace(state, pending=direction)
        return self._finish(state, direction, None)

    def _finish(self, state: SynchState, direction: str, mode: str | None) -> SynchState:
        """Both halves are known (mode None: the decider cannot step): move and mark."""
        directioner = self.directioner(state)
        decider = 1 - directioner
        start = state.markers
        own_start, other_start = start[directioner], start[decider]
        assert own_start is not None and other_start is not None
        own = self._step(state, own_start, direction)
        assert own is not None
        landings = {directioner: own}
        if mode is not None:
            other = self._step(state, other_start, self._decider_direction(direction, mode))
            assert other is not None
            landings[decider] = other
        else:
            other = other_start
        if len(landings) == 2 and own == other:
            drawn: dict[Cell, int] = {}
        else:
            drawn = {cell: seat for seat, cell in landings.items() if _is_empty(state, cell)}
        markers = (own, other) if directioner == 0 else (other, own)
        return replace(
            state,
            markers=markers,
            marks=_mark(state, drawn),
            moves_done=state.moves_done + 1,
            pending=None,
            quiet_moves=0 if drawn else state.quiet_moves + 1,
            last=LastMove(
                number=state.moves_done + 1,
                seat=directioner,
                direction=direction,
                mode=mode,
                start=start,
                drawn=tuple(sorted(drawn, key=_reading_order)),
            ),
        )

    # -- the end --------------------------------------------------------------
    @staticmethod
    def stall_limit(state: SynchState) -> int:
        return 2 * state.size * state.size

    def _ending(self, state: SynchState) -> tuple[str, str] | None:
        """Why the game is over, if it is: a short phrase (", alice cannot
        catch up") and the full explanation for the board mail."""
        if state.markers[1] is None:
            return None
        counts = [state.marks.count(symbol) for symbol in SYMBOLS]
        empty = state.marks.count(EMPTY)
        if empty == 0:
            return ", every square marked", "every square is marked"
        for seat in (0, 1):
            if counts[seat] > counts[1 - seat] + empty:
                loser = state.players[1 - seat]
                return (
                    f", {loser} cannot catch up",
                    f"{loser} cannot catch up with only "
                    f"{empty} empty square{'s' if empty != 1 else ''} left",
                )
        if state.quiet_moves >= self.stall_limit(state):
            return (
                f" after {state.quiet_moves} rounds without a new symbol",
                f"{state.quiet_moves} rounds in a row drew no new symbol",
            )
        return None

    def outcome(self, state: SynchState) -> Outcome | None:
        ending = self._ending(state)
        if ending is None:
            return None
        counts = tuple(state.marks.count(symbol) for symbol in SYMBOLS)
        if counts[0] == counts[1]:
            winners: tuple[int, ...] = ()
            score = f"{counts[0]} symbols each"
        else:
            winner = 0 if counts[0] > counts[1] else 1
            winners = (winner,)
            score = f"{counts[winner]} symbols to {counts[1 - winner]}"
        # a phrase for "Game won by alice: ..." or "Game drawn: ...": no full stop
        return Outcome(
            winners=winners,
            scores=(float(counts[0]), float(counts[1])),
            reason=score + ending[0],
        )

    def _game_over(self, state: SynchState) -> str:
        """The last paragraph of a finished game's board mail."""
        ending = self._ending(state)
        assert ending is not None
        counts = [state.marks.count(symbol) for symbol in SYMBOLS]
        if counts[0] == counts[1]:
            verdict = f"A draw at {counts[0]} symbols each"
        else:
            winner = 0 if counts[0] > counts[1] else 1
            verdict = (
                f"{state.players[winner]} wins by {counts[winner]} symbols "
                f"to {counts[1 - winner]}"
            )
        return f"Game over. {verdict}: {ending[1]}."

    # -- texts for players ----------------------------------------------------
    def _what_to_send(self, state: SynchState, phase: _Phase) -> str:
        if phase.kind == "place":
            if phase.seat == 0:
                return "send place and a square, like place c3"
            first = state.markers[0]
            assert first is not None
            taken = _grid(state.size).label(first)
            return f"send place and a square other than {taken}, like place c3"
        if phase.kind == "mode":
            modes = self._legal_modes(state)
            return "send " + " or ".join(modes)
        return "send a direction: " + ", ".join(self._legal_directions(state))

    def _request(self, state: SynchState, phase: _Phase) -> str:
        """'bob must send synch or opposition.'"""
        return f"{state.players[phase.seat]} must {self._what_to_send(state, phase)}."

    def _wrong_kind(self, state: SynchState, phase: _Phase, sent: str) -> str:
        players = state.players
        directioner = self.directioner(state)
        decider = 1 - directioner
        wanted = self._what_to_send(state, phase)
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

    # -- the board mail -------------------------------------------------------
    def viewpoint(self, state: SynchState, viewer: int | None) -> int | None:
        return None  # the board shows only what both have sent

    def render(self, state: SynchState, viewer: int | None) -> str:
        grid = _grid(state.size)
        players = state.players
        markers = self._shown_markers(state)
        drawn_last = set(state.last.drawn) if state.last else set()

        marker_glyphs: dict[Cell | None, str] = {markers[1]: MARKER_GLYPHS[1]}
        marker_glyphs[markers[0]] = (
            SHARED_MARKERS_GLYPH if markers[0] == markers[1] else MARKER_GLYPHS[0]
        )

        def glyph(cell: Cell) -> str:
            symbol = state.marks[cell[1] * state.size + cell[0]]
            if cell in drawn_last:
                symbol = symbol.upper()
            return symbol + marker_glyphs.get(cell, "")

        lines = grid.render(glyph)
        # a marker glyph fills its whole cell: keep the right-hand rank numbers clear of it
        body_end = len(str(state.size)) + 1 + 2 * state.size
        lines[1:-1] = [f"{line[:body_end]} {line[body_end:]}" for line in lines[1:-1]]
        lines.append("")
        counts = [state.marks.count(symbol) for symbol in SYMBOLS]
        empty = state.marks.count(EMPTY)
        paragraphs = [
            f"{SYMBOLS[0]} = {players[0]} ({self.side_names[0]}), "
            f"{SYMBOLS[1]} = {players[1]} ({self.side_names[1]}), {EMPTY} = empty square.",
            f"{MARKER_GLYPHS[0]} = {players[0]}'s marker, {MARKER_GLYPHS[1]} = {players[1]}'s "
            f"marker, {SHARED_MARKERS_GLYPH} = both markers on one square.",
            "Capitals are the symbols drawn last.",
            f"Symbols: {players[0]} {counts[0]}, {players[1]} {counts[1]}; "
            f"{empty} square{'s' if empty != 1 else ''} empty.",
        ]
        phase = self._phase(state)
        if state.markers[1] is not None and phase is not None:
            paragraphs.append(
                f"Rounds in a row without a new symbol: {state.quiet_moves} "
                f"(the game ends at {self.stall_limit(state)})."
            )
        if state.last is not None:
            paragraphs.append(self._describe_last(state, state.last))
        if phase is not None:
            if phase.kind != "place":
                paragraphs.append(self._describe_current(state))
            paragraphs.append(self._request(state, phase))
        else:
            paragraphs.append(self._game_over(state))
        for paragraph in paragraphs:
            if len(paragraph) <= WIDTH:
                lines.append(paragraph)
                continue
            # no line break inside "x = alice"
            glued = paragraph.replace(" = ", "\xa0=\xa0")
            wrapped = filled(glued, WIDTH, break_on_hyphens=False)
            lines.extend(line.replace("\xa0", " ") for line in wrapped)
        return "\n".join(lines)

    def _shown_markers(self, state: SynchState) -> tuple[Cell | None, Cell | None]:
        """Where the markers stand on the board: in the direction-first order the
        directioner has already stepped while the decider is choosing."""
        if state.order != DIRECTION_FIRST or state.pending is None:
            return state.markers
        directioner = self.directioner(state)
        own = state.markers[directioner]
        assert own is not None
        stepped = self._step(state, own, state.pending)
        if directioner == 0:
            return stepped, state.markers[1]
        return state.markers[0], stepped

    def _describe_last(self, state: SynchState, last: LastMove) -> str:
        grid = _grid(state.size)
        players = state.players
        if last.number == 0:
            square = grid.label(last.drawn[0])
            return f"Last move: {players[last.seat]} placed their marker on {square}."
        assert last.start is not None and last.direction is not None
        directioner, decider = last.seat, 1 - last.seat
        own_from = last.start[directioner]
        other_from = last.start[decider]
        assert own_from is not None and other_from is not None
        own_to = self._step(state, own_from, last.direction)
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
            step = self._decider_direction(last.direction, last.mode)
            other_to = self._step(state, other_from, step)
            assert other_to is not None
            text += (
                f"{players[decider]} (decider) went in {last.mode}, {step} from "
                f"{grid.label(other_from)} to {grid.label(other_to)}."
            )
        if last.mode is not None and own_to == other_to and _is_empty(state, own_to):
            text += f" Both markers landed on empty {grid.label(own_to)}, so nobody drew there."
        elif last.drawn:
            drawers = [
                f"{players[SYMBOLS.index(state.marks[_index(state, cell)])]} on {grid.label(cell)}"
                for cell in last.drawn
            ]
            text += " Drawn: " + ", ".join(drawers) + "."
        else:
            text += " Nothing was drawn."
        return text

    def _describe_current(self, state: SynchState) -> str:
        players = state.players
        directioner = self.directioner(state)
        decider = 1 - directioner
        text = (
            f"Round {state.moves_done + 1}: {players[directioner]} is the directioner, "
            f"{players[decider]} the decider."
        )
        if state.pending is None:
            return text
        if state.order == MODE_FIRST:
            return f"{text} {players[decider]} announced {state.pending}."
        own = self._shown_markers(state)[directioner]
        assert own is not None
        return (
            f"{text} {players[directioner]} went {state.pending} to "
            f"{_grid(state.size).label(own)} (marked when the round ends)."
        )

    # -- storage --------------------------------------------------------------
    def encode(self, state: SynchState) -> dict:
        last = state.last
        return {
            "size": state.size,
            "order": state.order,
            "players": list(state.players),
            "markers": [list(m) if m is not None else None for m in state.markers],
            "marks": state.marks,
            "moves_done": state.moves_done,
            "pending": state.pending,
            "quiet_moves": state.quiet_moves,
            "last": None
            if last is None
            else {
                "number": last.number,
                "seat": last.seat,
                "direction": last.direction,
                "mode": last.mode,
                "start": None if last.start is None else [list(c) for c in last.start],
                "drawn": [list(c) for c in last.drawn],
            },
        }

    def decode(self, data: dict) -> SynchState:
        last = data["last"]
        return SynchState(
            size=data["size"],
            order=data["order"],
            players=(data["players"][0], data["players"][1]),
            markers=tuple(_cell(m) for m in data["markers"]),  # type: ignore[arg-type]
            marks=data["marks"],
            moves_done=data["moves_done"],
            pending=data["pending"],
            quiet_moves=data["quiet_moves"],
            last=None
            if last is None
            else LastMove(
                number=last["number"],
                seat=last["seat"],
                direction=last["direction"],
                mode=last["mode"],
                start=None
                if last["start"] is None
                else tuple(_cell(c) for c in last["start"]),  # type: ignore[arg-type]
                drawn=tuple(_cell(c) for c in last["drawn"]),  # type: ignore[misc]
            ),
        )

    # -- help -----------------------------------------------------------------
    def help(self) -> str:
        return HELP


def _cell(data: list[int] | None) -> Cell | None:
    return None if data is None else (data[0], data[1])


def _reading_order(cell: Cell) -> tuple[int, int]:
    return -cell[1], cell[0]


def _index(state: SynchState, cell: Cell) -> int:
    return cell[1] * state.size + cell[0]


def _is_empty(state: SynchState, cell: Cell) -> bool:
    return state.marks[_index(state, cell)] == EMPTY


def _mark(state: SynchState, drawn: Mapping[Cell, int]) -> str:
    if not drawn:
        return state.marks
    marks = list(state.marks)
    for cell, seat in drawn.items():
        marks[_index(state, cell)] = SYMBOLS[seat]
    return "".join(marks)


HELP = """\
Move In Synch, In Opposition (Leroy Quet, 2009): synch

Two markers wander over a square board, one per player. Wherever a
marker arrives on an empty square, its owner draws a symbol there
(x for the first player, o for the second). The player with more
symbols at the end wins.

Set-up. The first player places their marker with `place c3`; then
the second player places theirs on any other square. Each start
square gets its owner's symbol. A bare square (`c3`) is read as a
placement too.

Rounds. The game is played in rounds. Every round has two halves,
one from each player, and each half is a move mail of its own (so
the server's move list counts two moves per round). In rounds
1, 3, 5... the first player is the directioner and the second player
the decider; in rounds 2, 4, 6... the roles swap.
  1. The decider announces `synch` or `opposition`.
  2. The directioner names a direction: n ne e se s sw w nw (north
     is up the board; north, up, right, north-east and the like are
     accepted too). The directioner's marker steps one square that
     way; the decider's marker steps one square the same way (synch)
     or the opposite way (opposition).
Both markers must stay on the board, judged from where they stood
before the round: the directioner may only name such a direction, and
the decider may only announce a mode that leaves at least one.

Marking. After both steps, a marker that arrived on an empty square
draws its owner's symbol there, unless both markers arrived on the
same empty square: then neither draws. A symbol is never erased or
replaced. Markers may share a square.

The end. The game ends when every square holds a symbol, when one
player has more symbols than the other player's symbols plus the
empty squares, or after 2 x size x size rounds in a row without a new
symbol (128 on the 8x8 board). Most symbols wins; equal is a draw.

Options
  -size=N   N from 4 to 26 squares along each side (default 8).
  -order=mode-first   (default) the decider announces the mode, then
            the directioner names the direction, as above.
  -order=direction-first   the directioner moves first: they name a
            direction that keeps their own marker on the board and
            step; then the decider sends synch or opposition, choosing
            a step that keeps their own marker on the board. When
            neither step would, the decider stays put: the server
            skips their half and the board mail says so. Only a
            marker that moved draws a symbol.

The board mail. x and o are symbols, . an empty square; a 1 or 2
right after a square's symbol is the first or second player's
marker, a * both markers; capitals are the symbols drawn last (by the
last round or placement). Below the board: the symbol counts, the
empty squares, the rounds without a new symbol, and who must send
what next.

Examples
  synch challenge alice bob
  synch challenge -size=10 -order=direction-first alice bob
  synch move 101 alice secret place c3
  synch move 101 bob secret synch
  synch move 101 alice secret ne
"""
