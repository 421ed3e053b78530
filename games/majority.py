"""Majority: White and Black fill the dark and light squares of a chequered
board and score the rows and columns ("tricks") they win; Psychomachia is the
same game with one hidden stone per player.

Times used for the hidden-stone rules are counted in half steps so that a
reveal (made on a player's turn, before that turn's stone) and a placement can
be compared: the reveal before placement `j` happens at time `2j`, placement
`k` at time `2k + 1`. The final reveal is the reveal before the placement that
never comes, `2 * (all stones)`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import Any, NamedTuple

from pbmserv.gamekit import Game, IllegalMove, InvalidOption, Option, Outcome, SquareGrid, filled

WHITE, BLACK = 0, 1
SIDES = ("White", "Black")
STONE = ("W", "B")
COLOUR = ("dark", "light")
EMPTY = "."
EMPTY_GLYPH = (":", ".")  # an empty dark / light square on the board
LAST_MARK = "<"
DEFAULT_STONES = 40
#: a square of each side's colour on every board size, for examples in messages
#: (see Majority._example: another square when this one cannot be played)
EXAMPLE = ("e5", "d5")
SIZES = tuple(range(6, 15, 2))
WIDTH = 72
CELL_WIDTH = 2  # a square's text on the board: a stone, then room for LAST_MARK

_SPACED_SQUARE = re.compile(r"\b([a-z])\s+(\d)")
_SEPARATORS = re.compile(r"[\s,]+")


# -- fixed geometry of one board size ------------------------------------------
@dataclass(frozen=True)
class Geometry:
    size: int
    grid: SquareGrid
    labels: tuple[str, ...]  # by cell index (rank * size + file)
    sides: tuple[int, ...]  # by cell index: whose colour the square is
    line_names: tuple[str, ...]  # rows 1.. then columns a..
    #: the cells of one side's colour on each line, per side
    line_squares: tuple[tuple[tuple[int, ...], ...], ...]
    lines_through: tuple[tuple[int, int], ...]  # by cell index: its row, its column
    #: each side's squares in reading order
    side_cells: tuple[tuple[int, ...], ...]
    #: each line (as in line_names) as a slice of the board string
    line_slices: tuple[slice, ...]
    #: each printed row of the board, top first, as a slice of a list by cell index
    printed_rows: tuple[slice, ...]
    #: by cell index: the board text of the empty square
    empty_texts: tuple[str, ...]
    #: by rank: spaces after its number (not padded on the right) that line up the trick marks
    mark_pads: tuple[str, ...]
    examples: tuple[int, int]  # EXAMPLE as cell indices

    def index(self, cell: tuple[int, int]) -> int:
        return cell[1] * self.size + cell[0]


@cache
def geometry(size: int) -> Geometry:
    grid = SquareGrid(size, size)
    cells = [(i % size, i // size) for i in range(size * size)]
    sides = tuple(WHITE if grid.is_dark(cell) else BLACK for cell in cells)
    index = {cell: i for i, cell in enumerate(cells)}
    labels = tuple(grid.label(cell) for cell in cells)
    names = tuple(f"row {rank + 1}" for rank in range(size)) + tuple(
        f"column {labels[file][0]}" for file in range(size)
    )
    lines = grid.ranks() + grid.files()
    line_squares = tuple(
        tuple(tuple(index[cell] for cell in line if sides[index[cell]] == seat) for line in lines)
        for seat in (WHITE, BLACK)
    )
    through = tuple((i // size, size + i % size) for i in range(size * size))
    side_cells = tuple(
        tuple(index[cell] for cell in grid.cells if sides[index[cell]] == seat) for seat in (WHITE, BLACK)
    )
    line_slices = tuple(slice(rank * size, (rank + 1) * size) for rank in range(size)) + tuple(
        slice(file, None, size) for file in range(size)
    )
    printed_rows = tuple(slice(index[row[0]], index[row[-1]] + 1) for row in grid.display_rows())
    empty_texts = tuple(cell_text(EMPTY_GLYPH[side]) for side in sides)
    mark_pads = tuple(" " * (len(str(size)) - len(str(rank + 1))) for rank in range(size))
    examples = (index[grid.parse(EXAMPLE[WHITE])], index[grid.parse(EXAMPLE[BLACK])])
    return Geometry(
        size=size,
        grid=grid,
        labels=labels,
        sides=sides,
        line_names=names,
        line_squares=line_squares,
        lines_through=through,
        side_cells=side_cells,
        line_slices=line_slices,
        printed_rows=printed_rows,
        empty_texts=empty_texts,
        mark_pads=mark_pads,
        examples=examples,
    )


def cell_text(glyph: str) -> str:
    """A square's text on the board, as wide as a cell."""
    return glyph.ljust(CELL_WIDTH)


PLACED_TEXT = {stone: cell_text(stone) for stone in STONE}


# -- state -------------------------------------------------------------------------
@dataclass(frozen=True)
class MajorityState:
    players: tuple[str, str]
    size: int
    stones: int  # each side's stones to place (the hidden stone not counted)
    hidden_variant: bool
    board: str  # one character per cell index: ".", "W" or "B" (placed stones only)
    placed: int  # stones placed so far by both sides
    #: each side's hidden square; no stone is ever placed on it (its owner may
    #: not, the opponent plays the other colour)
    hidden: tuple[int | None, int | None]
    #: `placed` at the moment each side revealed (2 * stones: the final reveal)
    revealed_at: tuple[int | None, int | None]
    #: per side, per line: the index of the placement that completed it
    completed_at: tuple[tuple[int | None, ...], tuple[int | None, ...]]
    #: the last action: (seat, "hide" | "reveal" | "place" | "reveal,place", cell)
    last: tuple[int, str, int] | None


class Trick(NamedTuple):
    """One line as a viewer knows it."""

    holder: int | None  # who has won it (as far as the viewer knows)
    waiting: int | None  # whose unrevealed hidden stone would take it on revealing now
    late: int | None  # who completed it first but did not reveal in time


OPEN = Trick(None, None, None)


@dataclass(frozen=True)
class Knowledge:
    """What one viewer knows of the tricks and of the stones on each line."""

    tricks: tuple[Trick, ...]
    counts: tuple[tuple[int, ...], tuple[int, ...]]  # stones per side per line
    known_hidden: tuple[int | None, int | None]


def judge_trick(
    claims: tuple[int | None, int | None], public_at: tuple[int | None, int | None], placed: int
) -> Trick:
    """Who holds a line, from each side's completion (placement index) and the
    time that completion became public (None: still secret, pending a reveal)."""
    claimants = sorted((placement, seat) for seat, placement in enumerate(claims) if placement is not None)
    if not claimants:
        return OPEN
    first = claimants[0][1]
    first_public = public_at[first]
    if len(claimants) == 1 or public_at[1 - first] is None:
        # a later completion can never beat the first one unless it is public first
        return Trick(first, None, None) if first_public is not None else Trick(None, first, None)
    second = 1 - first
    second_public = public_at[second]
    assert second_public is not None
    if first_public is not None and first_public <= second_public:
        return Trick(first, None, None)
    # The second claim became public on the second side's turn, so the first
    # side's next turn is the next placement; its reveal must come before it.
    deadline = 2 * (second_public // 2 + 1)
    if first_public is None:
        if 2 * placed <= deadline:
            return Trick(second, first, None)
        return Trick(second, None, first)
    if first_public <= deadline:
        return Trick(first, None, None)
    return Trick(second, None, first)


def knowledge(state: MajorityState, viewer: int | None) -> Knowledge:
    """The tricks and line counts as `viewer` (a seat, or None for the public)
    may know them: a hidden stone counts only once revealed, or for its owner."""
    geo = geometry(state.size)
    known = tuple(
        square if square is not None and (state.revealed_at[seat] is not None or seat == viewer) else None
        for seat, square in enumerate(state.hidden)
    )
    # a side's stones stand on its own colour only, so a whole line's count is theirs
    line_texts = [state.board[line] for line in geo.line_slices]
    counts = [[text.count(stone) for text in line_texts] for stone in STONE]
    for seat, square in enumerate(known):
        if square is not None:
            for line in geo.lines_through[square]:
                counts[seat][line] += 1
    hidden_lines = [geo.lines_through[square] if square is not None else () for square in state.hidden]
    tricks = []
    for line, completions in enumerate(zip(*state.completed_at)):
        if completions == (None, None):
            tricks.append(OPEN)  # most lines: nothing to judge
            continue
        claims: list[int | None] = [None, None]
        public_at: list[int | None] = [None, None]
        for seat in (WHITE, BLACK):
            placement = completions[seat]
            if placement is None:
                continue
            done = 2 * placement + 1
            if line not in hidden_lines[seat]:
                claims[seat], public_at[seat] = placement, done
            elif known[seat] is not None:
                revealed = state.revealed_at[seat]
                claims[seat] = placement
                public_at[seat] = None if revealed is None else max(done, 2 * revealed)
        tricks.append(judge_trick((claims[0], claims[1]), (public_at[0], public_at[1]), state.placed))
    return Knowledge(tuple(tricks), (tuple(counts[0]), tuple(counts[1])), known)


def final_holders(seen: Knowledge) -> tuple[int | None, ...]:
    """Who would get each trick if the game ended now (known hidden stones
    revealed now, open lines to the majority)."""
    holders = []
    for line, trick in enumerate(seen.tricks):
        if trick.waiting is not None:
            holders.append(trick.waiting)
        elif trick.holder is not None:
            holders.append(trick.holder)
        else:
            white, black = seen.counts[0][line], seen.counts[1][line]
            holders.append(WHITE if white > black else BLACK if black > white else None)
    return tuple(holders)


def points(seen: Knowledge, holders: Sequence[int | None]) -> tuple[float, float]:
    """Points of the tricks as `holders` gives them (a side or None per line):
    1 + the opposing stones on each; White adds 1/2."""
    totals = [0.5, 0.0]
    for line, holder in enumerate(holders):
        if holder is not None:
            totals[holder] += 1 + seen.counts[1 - holder][line]
    return totals[0], totals[1]


def number(value: float) -> str:
    return f"{value:g}"


def name_list(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


# -- the game ----------------------------------------------------------------------
class Majority(Game):
    name = "majority"
    title = "Majority"
    min_players = 2
    max_players = 2
    side_names = SIDES
    options = (
        Option("size", 10, SIZES, "the board has N x N squares"),
        Option(
            "stones",
            DEFAULT_STONES,
            tuple(range(1, SIZES[-1] ** 2 // 2 + 1)),
            "stones each player places, at most half the squares (one less with -hidden); "
            "where 40 do not fit, the default is four fifths of a player's squares",
        ),
        Option("hidden", False, (), "Psychomachia: each player hides one stone before the first move"),
    )

    # -- setting up ----------------------------------------------------------------
    def new(self, options: Mapping[str, str | None], players: Sequence[str]) -> MajorityState:
        if len(players) != 2:
            raise InvalidOption(f"{self.title} is a game for two players.")
        values = self.resolve_options(options)
        size, hidden = values["size"], values["hidden"]
        squares = size * size // 2
        limit = squares - 1 if hidden else squares
        if any(name.lower() == "stones" for name in options):
            stones = values["stones"]
            if stones > limit:
                spare = " (one square of each colour is kept for the hidden stone)" if hidden else ""
                raise InvalidOption(
                    f"-stones={stones} is too many for a {size}x{size} board: each player has "
                    f"{squares} squares, so -stones can be at most {limit}{spare}."
                )
        else:
            stones = DEFAULT_STONES if DEFAULT_STONES <= limit else squares * 4 // 5
        line_count = 2 * size
        return MajorityState(
            players=(players[0], players[1]),
            size=size,
            stones=stones,
            hidden_variant=hidden,
            board=EMPTY * (size * size),
            placed=0,
            hidden=(None, None),
            revealed_at=(None, None),
            completed_at=((None,) * line_count, (None,) * line_count),
            last=None,
        )

    # -- whose turn ------------------------------------------------------------------
    def _in_setup(self, state: MajorityState) -> bool:
        return state.hidden_variant and None in state.hidden

    def _over(self, state: MajorityState) -> bool:
        return state.placed >= 2 * state.stones

    def to_move(self, state: MajorityState) -> frozenset[int]:
        if self._over(state):
            return frozenset()
        if self._in_setup(state):
            return frozenset(seat for seat in (WHITE, BLACK) if state.hidden[seat] is None)
        return frozenset({state.placed % 2})

    def _not_your_turn(self, state: MajorityState, seat: int) -> str:
        if self._in_setup(state):
            waiting = [state.players[s] for s in (WHITE, BLACK) if state.hidden[s] is None]
            return f"You have hidden your stone already: waiting for {waiting[0]} to hide theirs."
        mover = state.placed % 2
        return f"It is not your turn: {state.players[mover]} ({SIDES[mover]}) is to move."

    # -- reading a move ----------------------------------------------------------------
    @staticmethod
    def _words(text: str) -> list[str]:
        joined = _SPACED_SQUARE.sub(r"\1\2", text.strip().lower())
        return [word for word in _SEPARATORS.split(joined) if word]

    def _square(self, state: MajorityState, word: str) -> int:
        geo = geometry(state.size)
        return geo.index(geo.grid.parse(word))

    def _example(self, state: MajorityState, seat: int) -> str:
        """A square `seat` could play now, for examples in messages: e5 / d5
        while empty, else the first empty square of the seat's colour. It
        leaves out the seat's own hidden square (the help suggests hide e5,
        and "reveal,e5" would then be a reveal alone), so it is shown only to
        that seat, or once the hidden stone is revealed."""
        geo = geometry(state.size)
        preferred = geo.examples[seat]
        free = (
            square
            for square in (preferred, *geo.side_cells[seat])
            if state.board[square] == EMPTY and square != state.hidden[seat]
        )
        return geo.labels[next(free, preferred)]

    def _check_colour(self, state: MajorityState, seat: int, square: int, verb: str) -> None:
        geo = geometry(state.size)
        if geo.sides[square] != seat:
            raise IllegalMove(
                f"{geo.labels[square]} is a {COLOUR[1 - seat]} square: "
                f"{SIDES[seat]} {verb} on {COLOUR[seat]} squares."
            )

    def _check_placement(self, state: MajorityState, seat: int, square: int) -> None:
        label = geometry(state.size).labels[square]
        self._check_colour(state, seat, square, "plays")
        if state.board[square] != EMPTY:
            raise IllegalMove(f"{label} already holds your stone: play on an empty {COLOUR[seat]} square.")
        if square == state.hidden[seat]:
            raise IllegalMove(
                f"{label} holds your hidden stone: play on another empty {COLOUR[seat]} square."
            )

    def _read(self, state: MajorityState, seat: int, text: str) -> tuple[str, int | None]:
        """The action a text asks for, checked against the rules: ("hide", square),
        ("reveal", None), ("place", square) or ("reveal,place", square)."""
        words = self._words(text)
        example = self._example(state, seat)  # the error goes to `seat` only
        if self._in_setup(state):
            if len(words) == 2 and words[0] == "hide":
                square = self._square(state, words[1])
                self._check_colour(state, seat, square, "hides")
                return "hide", square
            raise IllegalMove(
                f"First hide your stone: write hide and an empty {COLOUR[seat]} square, "
                f"like hide {example}."
            )
        if not words:
            raise IllegalMove(f"Write the square for your stone, like {example}.")
        if words[0] == "hide":
            if not state.hidden_variant:
                raise IllegalMove("This game has no hidden stones: it was not started with -hidden.")
            raise IllegalMove(
                f"Stones are hidden only before the first move: now place a stone, like {example}."
            )
        if words[0] == "reveal":
            if not state.hidden_variant:
                raise IllegalMove(
                    "This game has no hidden stone to reveal: it was not started with -hidden."
                )
            if state.revealed_at[seat] is not None:
                raise IllegalMove(f"Your hidden stone is revealed already: place a stone, like {example}.")
            if len(words) == 1:
                return "reveal", None
            if len(words) > 2:
                raise IllegalMove(f"Reveal and place one stone at most: write reveal, or reveal,{example}.")
            square = self._square(state, words[1])
            if square == state.hidden[seat]:
                return "reveal", None
            self._check_placement(state, seat, square)
            return "reveal,place", square
        if "reveal" in words:
            raise IllegalMove(f"Reveal first, then place: write reveal,{example}.")
        if words == ["pass"]:
            raise IllegalMove(
                f"There is no passing in {self.title}: place a stone on an empty "
                f"{COLOUR[seat]} square, like {example}."
            )
        if len(words) > 1:
            raise IllegalMove(f"Place one stone per turn: write one square, like {example}.")
        square = self._square(state, words[0])
        self._check_placement(state, seat, square)
        return "place", square

    def _move_text(self, state: MajorityState, action: str, square: int | None) -> str:
        if square is None:
            return action
        label = geometry(state.size).labels[square]
        return {"hide": f"hide {label}", "place": label, "reveal,place": f"reveal,{label}"}[action]

    # -- playing -------------------------------------------------------------------------
    def play(self, state: MajorityState, seat: int, text: str) -> MajorityState:
        seats = self.to_move(state)
        if not seats:
            raise IllegalMove("The game is over: no more moves can be made.")
        if seat not in seats:
            raise IllegalMove(self._not_your_turn(state, seat))
        action, square = self._read(state, seat, text)
        if action == "hide":
            assert square is not None
            hidden = list(state.hidden)
            hidden[seat] = square
            return replace(state, hidden=tuple(hidden), last=(seat, action, square))
        revealed_at = list(state.revealed_at)
        if action.startswith("reveal"):
            revealed_at[seat] = state.placed
        if action == "reveal":
            hidden_square = state.hidden[seat]
            assert hidden_square is not None
            return replace(state, revealed_at=tuple(revealed_at), last=(seat, action, hidden_square))
        assert square is not None
        stone = STONE[seat]
        board = state.board[:square] + stone + state.board[square + 1 :]
        geo = geometry(state.size)
        own_completions = list(state.completed_at[seat])
        for line in geo.lines_through[square]:
            if all(board[i] == stone or i == state.hidden[seat] for i in geo.line_squares[seat][line]):
                own_completions[line] = state.placed
        completed_at = list(state.completed_at)
        completed_at[seat] = tuple(own_completions)
        placed = state.placed + 1
        if placed == 2 * state.stones:
            revealed_at = [
                placed if hidden_square is not None and at is None else at
                for hidden_square, at in zip(state.hidden, revealed_at)
            ]
        return replace(
            state,
            board=board,
            placed=placed,
            revealed_at=tuple(revealed_at),
            completed_at=tuple(completed_at),
            last=(seat, action, square),
        )

    def legal_moves(self, state: MajorityState, seat: int) -> list[str]:
        if seat not in self.to_move(state):
            return []
        geo = geometry(state.size)
        if self._in_setup(state):
            return [f"hide {geo.labels[i]}" for i in geo.side_cells[seat]]
        own_hidden = state.hidden[seat]
        moves = [geo.labels[i] for i in geo.side_cells[seat] if state.board[i] == EMPTY and i != own_hidden]
        if own_hidden is not None and state.revealed_at[seat] is None:
            moves.append("reveal")
        return moves

    def canonical_move(self, state: MajorityState, seat: int, text: str) -> str:
        try:
            action, square = self._read(state, seat, text)
        except IllegalMove:
            return super().canonical_move(state, seat, text)
        return self._move_text(state, action, square)

    def is_secret_move(self, state: MajorityState, seat: int, text: str) -> bool:
        return self._words(text)[:1] == ["hide"]

    # -- the end ---------------------------------------------------------------------------
    def outcome(self, state: MajorityState) -> Outcome | None:
        if not self._over(state):
            return None
        seen = knowledge(state, None)
        tricks = final_holders(seen)
        scores = points(seen, tricks)
        won = [sum(1 for holder in tricks if holder == seat) for seat in (WHITE, BLACK)]
        winner = WHITE if scores[WHITE] > scores[BLACK] else BLACK
        return Outcome(
            winners=(winner,),
            scores=scores,
            reason=(
                f"{SIDES[winner]} won {number(scores[winner])} points to "
                f"{number(scores[1 - winner])}, taking {won[winner]} tricks to {won[1 - winner]}"
            ),
        )

    # -- showing -----------------------------------------------------------------------------
    def viewpoint(self, state: MajorityState, viewer: int | None) -> int | None:
        return viewer if state.hidden_variant else None  # only hidden stones differ between views

    def render(self, state: MajorityState, viewer: int | None) -> str:
        if viewer not in (WHITE, BLACK):
            viewer = None
        geo = geometry(state.size)
        seen = knowledge(state, viewer)
        texts = self._board_texts(state, seen)
        at_end = final_holders(seen)
        awarded = at_end if self._over(state) else None

        def mark(line: int) -> str:
            if awarded is not None:
                return STONE[awarded[line]] if awarded[line] is not None else EMPTY
            trick = seen.tricks[line]
            if trick.waiting is not None:
                return "!" if trick.holder is not None else STONE[trick.waiting].lower()
            return STONE[trick.holder] if trick.holder is not None else EMPTY

        marks = [mark(line) for line in range(2 * state.size)]
        lines = geo.grid.render_rows(
            [texts[row] for row in geo.printed_rows], right=lambda rank: geo.mark_pads[rank] + marks[rank]
        )
        lines.append(geo.grid.under_files(lambda file: marks[state.size + file]))
        lines.append("")
        for note in self._legend(state, viewer) + self._notes(state, viewer, seen):
            lines.extend(filled(note, WIDTH, "  "))
        lines.append("")
        lines.extend(self._tallies(state, seen, at_end))
        return "\n".join(lines) + "\n"

    def _board_texts(self, state: MajorityState, seen: Knowledge) -> list[str]:
        """Each square's text on the board by cell index: its stone as the
        viewer of `seen` knows it, LAST_MARK after the last one."""
        geo = geometry(state.size)
        # a placed stone's text, else the empty square's
        texts = list(map(PLACED_TEXT.get, state.board, geo.empty_texts))
        for seat, square in enumerate(seen.known_hidden):
            if square is not None:
                stone = STONE[seat] if state.revealed_at[seat] is not None else STONE[seat].lower()
                texts[square] = cell_text(stone)
        if state.last is not None and state.last[1] != "hide":
            # a placed stone, or the hidden stone its reveal just showed to all
            square = state.last[2]
            texts[square] = texts[square].rstrip() + LAST_MARK
        return texts

    def _who(self, state: MajorityState, seat: int) -> str:
        return f"{state.players[seat]} ({SIDES[seat]})"

    def _legend(self, state: MajorityState, viewer: int | None) -> list[str]:
        lines = [
            f"W = {self._who(state, WHITE)} on the dark squares {EMPTY_GLYPH[WHITE]}",
            f"B = {self._who(state, BLACK)} on the light squares {EMPTY_GLYPH[BLACK]}",
            "< = the last stone.  Tricks beside the rows and under the columns:",
            "W or B = won, . = nobody's (equal)." if self._over(state) else "W or B = won, . = open.",
        ]
        if viewer is not None and state.hidden[viewer] is not None and state.revealed_at[viewer] is None:
            lower = STONE[viewer].lower()
            lines.append(
                f"{lower} = your hidden stone (only you see it); {lower} as a trick = yours once "
                "you reveal; ! = your opponent completed it after you: reveal by your next "
                "move to keep it."
            )
        return lines

    def _notes(self, state: MajorityState, viewer: int | None, seen: Knowledge) -> list[str]:
        geo = geometry(state.size)
        notes = []
        if state.last is not None:
            notes.append(self._last_action(state, viewer))
        if state.hidden_variant:
            for seat in (WHITE, BLACK):
                square = state.hidden[seat]
                who = state.players[seat]
                if square is None:
                    notes.append(f"{who} has not hidden a stone yet.")
                elif state.revealed_at[seat] is not None:
                    when = " at the end" if state.revealed_at[seat] == 2 * state.stones else ""
                    note = f"{who}'s hidden stone on {geo.labels[square]} was revealed{when}."
                    # say why a trick changed hands on the reveal: a line through
                    # the hidden square that its owner holds was completed with it
                    kept = [
                        geo.line_names[line]
                        for line in geo.lines_through[square]
                        if state.completed_at[seat][line] is not None and seen.tricks[line].holder == seat
                    ]
                    if kept:
                        note += f" With it {who} completed and holds {name_list(kept)}."
                    notes.append(note)
                elif seat == viewer:
                    notes.append(
                        f"Your hidden stone is on {geo.labels[square]}. To reveal it, send reveal "
                        "on your turn (the turn goes on), or reveal and your stone's square "
                        f"together, like reveal,{self._example(state, seat)}."
                    )
                else:
                    notes.append(f"{who}'s hidden stone is not revealed yet.")
        claimed = [(geo.line_names[line], trick) for line, trick in enumerate(seen.tricks) if trick != OPEN]
        if viewer is not None:
            opponent = state.players[1 - viewer]
            mine = [(name, t) for name, t in claimed if t.waiting == viewer]
            pending = [name for name, t in mine if t.holder is None]
            contested = [name for name, t in mine if t.holder is not None]
            if pending:
                notes.append(
                    f"You completed {name_list(pending)} with your hidden stone: yours once you reveal."
                )
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
        if self._in_setup(state):
            notes.append("Set-up: each player sends hide and an empty square of their colour.")
        elif not self._over(state):
            mover = state.placed % 2
            if state.last is not None and state.last[1] == "reveal":
                notes.append(
                    f"{state.players[mover]} has revealed and now sends the square for this "
                    f"turn's stone, like {self._example(state, mover)}."
                )
        return notes

    def _last_action(self, state: MajorityState, viewer: int | None) -> str:
        assert state.last is not None
        seat, action, square = state.last
        geo = geometry(state.size)
        who = self._who(state, seat)
        if action == "hide":
            if seat == viewer:
                return f"Last move: you hid your stone on {geo.labels[square]}."
            return f"Last move: {who} hid a stone."
        if action == "place":
            return f"Last move: {who} played {geo.labels[square]}."
        hidden_square = state.hidden[seat]
        assert hidden_square is not None
        revealed = f"Last move: {who} revealed the hidden stone on {geo.labels[hidden_square]}"
        if action == "reveal":
            return f"{revealed}."
        return f"{revealed} and played {geo.labels[square]}."

    def _tallies(self, state: MajorityState, seen: Knowledge, at_end: Sequence[int | None]) -> list[str]:
        """The table under the board; `at_end` is final_holders(seen)."""
        held_now = [trick.holder for trick in seen.tricks]
        holders = at_end if self._over(state) else held_now
        won = [holders.count(seat) for seat in (WHITE, BLACK)]
        left = [state.stones - (state.placed + 1 - seat) // 2 for seat in (WHITE, BLACK)]
        rows = [
            ("", state.players[WHITE] + " (W)", state.players[BLACK] + " (B)"),
            ("Stones left", str(left[0]), str(left[1])),
            ("Tricks won", str(won[0]), str(won[1])),
        ]
        if self._over(state):
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
        if not self._over(state):
            lines.append("'If it ended now' gives open lines to the side with more stones there.")
        return lines

    # -- storing ------------------------------------------------------------------------------
    def encode(self, state: MajorityState) -> dict[str, Any]:
        return {
            "players": list(state.players),
            "size": state.size,
            "stones": state.stones,
            "hidden_variant": state.hidden_variant,
            "board": state.board,
            "placed": state.placed,
            "hidden": list(state.hidden),
            "revealed_at": list(state.revealed_at),
            "completed_at": [list(per_side) for per_side in state.completed_at],
            "last": list(state.last) if state.last is not None else None,
        }

    def decode(self, data: Any) -> MajorityState:
        last = data["last"]
        return MajorityState(
            players=(data["players"][0], data["players"][1]),
            size=data["size"],
            stones=data["stones"],
            hidden_variant=data["hidden_variant"],
            board=data["board"],
            placed=data["placed"],
            hidden=(data["hidden"][0], data["hidden"][1]),
            revealed_at=(data["revealed_at"][0], data["revealed_at"][1]),
            completed_at=(tuple(data["completed_at"][0]), tuple(data["completed_at"][1])),
            last=(last[0], last[1], last[2]) if last is not None else None,
        )

    # -- help -----------------------------------------------------------------------------------
    def help(self) -> str:
        return HELP


class Psychomachia(Majority):
    """Majority with the hidden stone always on."""

    name = "psychomachia"
    title = "Psychomachia"
    fixed_options = {"hidden": None}


HELP = """\
Majority, and Psychomachia: the same game with one hidden stone each.

Two players share a chequered board whose corner a1 is dark. White
(the first player of the challenge) owns the dark squares and moves
first; Black owns the light squares. Every row and every column is a
trick, and tricks score points.

Turns: put one stone on an empty square of your own colour. There is
no passing. The game ends when both players have placed all their
stones.

Tricks:
  - You complete a row or column when each square of your colour on
    it holds your stone. Whoever completes a line first wins that
    trick at once, for good, whatever happens there later.
  - At the end, every line nobody has won goes to the player with
    more stones on it; with equal numbers nobody gets it.
  - Each trick you win is worth 1 point plus 1 for every opposing
    stone on that line at the end. White adds half a point, so there
    are no draws: the higher total wins.

Hidden stone (-hidden, or the game name psychomachia):
  - Before the first move each player secretly picks an empty square
    of their colour: hide e5 (White) or hide d5 (Black). Either may
    go first; White's first stone waits until both have hidden.
  - The hidden stone is its owner's stone on that square from the
    start, on top of the -stones to place; nobody can play there.
    Only its owner sees it.
  - If it helps you complete a line, the completion counts from the
    move on which it really happened, but only once you reveal.
    Reveal on your own turn: "reveal" alone (the turn goes on: you
    still place a stone), or "reveal,e5" to reveal, then place on e5.
  - If your opponent completes a line you had already completed in
    secret, you keep it only by revealing no later than your next
    move; play that move without revealing and the line is theirs.
  - When all stones are placed, both hidden stones are revealed
    before the tricks are awarded. That is in time for every line
    your opponent never completed, or completed on the very last
    move.
  - Until it is revealed, no board, move list or error message tells
    your opponent or an onlooker where your hidden stone is.

Moves: e5 (place a stone), hide e5, reveal, reveal,e5. Case and extra
spaces do not matter. The list of legal moves (for bots and previews)
holds every square you may play, "hide <square>" during the set-up,
and "reveal" while your stone is hidden; "reveal,<square>" is not
listed, as it is exactly "reveal" followed by that square.

The board: W and B are stones, : and . empty dark and light squares,
< marks the last stone; your own hidden stone shows as a small w or b,
to you only. Beside each row and under each column stands its trick:
W or B won, . open; for the owner of a hidden stone also w or b =
yours once you reveal, ! = reveal by your next move to keep it. Below
the board: stones left, tricks won, the points of the tricks won so
far, and the points if the game ended now.

Options:
  -size=N    a board of N x N squares, N = 6, 8, 10, 12 or 14
             (default 10)
  -stones=N  stones each player places, from 1 up to half the
             squares of the board (one less with -hidden);
             default 40, or where 40 do not fit four fifths of a
             player's squares (14 on 6x6, 25 on 8x8)
  -hidden    play with the hidden stones (Psychomachia)

Examples:
  majority challenge alice bob
  majority challenge -size=8 -stones=20 alice bob
  majority challenge -hidden alice bob
  psychomachia challenge -size=12 alice bob
"""
