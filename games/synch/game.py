"""Move In Synch, In Opposition by Leroy Quet.

Two markers walk a square board and draw their owners' symbols on the empty
squares they reach. The game goes in rounds (the rules' "moves"); every
round has two halves, each a move of its own: the decider's mode
(`synch` or `opposition`) and the directioner's compass direction, in that
order or (with `-order=direction-first`) the other way round. The seats
swap roles every round. The mails speak of rounds so that their numbers are
never mistaken for the server's move numbers, which count every half.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import games.synch.rules as rules
import games.synch.view as view
from games.synch.moves import Direction, Mode, Place, SynchMove, read_words
from games.synch.state import (
    DIRECTION_FIRST,
    EMPTY,
    MODE_FIRST,
    MODES,
    SIDE_NAMES,
    TITLE,
    SynchState,
)
from pbmserv.gamekit import Drawing, Game, IllegalMove, Option, Outcome


class Synch(Game):
    name = "synch"
    title = TITLE
    playout_moves = 0
    state_type = SynchState
    draws = True  # equal symbols
    min_players = 2
    max_players = 2
    side_names = SIDE_NAMES
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

    # -- whose turn, and what is legal -----------------------------------------
    def to_move(self, state: SynchState) -> frozenset[int]:
        phase = rules.phase(state)
        return frozenset() if phase is None else frozenset({phase.seat})

    def moves(self, state: SynchState, seat: int) -> list[SynchMove]:
        phase = rules.phase(state)
        if phase is None or phase.seat != seat:
            return []
        if phase.kind == "place":
            return [Place(cell, state.size) for cell in rules.legal_places(state, seat)]
        if phase.kind == "mode":
            return [Mode(mode) for mode in rules.legal_modes(state)]
        return [Direction(direction) for direction in rules.legal_directions(state)]

    # -- playing --------------------------------------------------------------
    def read_move(self, state: SynchState, seat: int, text: str) -> SynchMove:
        phase = rules.phase(state)
        if phase is None:
            raise IllegalMove("The game is over: no more moves are accepted.")
        if seat != phase.seat:
            raise IllegalMove(f"It is not your turn: {view.request(state, phase)}")
        try:
            move = read_words(state.size, text)
        except IllegalMove:
            if phase.kind == "place":
                raise
            move = None  # an off-board square: the player must send something else anyway
        if move is None:
            raise IllegalMove(f"'{text.strip()}' is not a move here: you must {view.what_to_send(state, phase)}.")
        if move.kind != phase.kind:
            raise IllegalMove(view.wrong_kind(state, phase, move.kind))
        if isinstance(move, Place):
            problem = view.refused_place(state, seat, move.cell)
        elif isinstance(move, Mode):
            problem = view.refused_mode(state, move.name)
        else:
            problem = view.refused_direction(state, move.name)
        if problem is not None:
            raise IllegalMove(problem)
        return move

    def apply(self, state: SynchState, seat: int, move: SynchMove) -> SynchState:
        if isinstance(move, Place):
            return rules.place(state, seat, move.cell)
        if isinstance(move, Mode):
            return rules.announce(state, move.name)
        assert isinstance(move, Direction)
        return rules.go(state, move.name)

    # -- the end --------------------------------------------------------------
    def outcome(self, state: SynchState) -> Outcome | None:
        ending = rules.ending(state)
        if ending is None:
            return None
        counts = state.counts()
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

    def tally(self, state: SynchState) -> tuple[float, ...]:
        """The symbols each player has on the board."""
        return tuple(float(count) for count in state.counts())

    # -- the board mail -------------------------------------------------------
    def viewpoint(self, state: SynchState, viewer: int | None) -> int | None:
        return None  # the board shows only what both have sent

    def draw(self, state: SynchState, viewer: int | None) -> Drawing:
        return view.draw(state)

    def text(self, drawing: Drawing) -> str:
        return view.text(drawing)

    # -- the move list: a line per round -----------------------------------------
    def move_rounds(self, state: SynchState, texts: Sequence[str]) -> list[tuple[str, int]]:
        """Read back from `state`: a round under way holds its first half;
        a finished round holds two halves, or only the direction when the
        decider could not step (direction-first, where it ends with the mode)."""
        rounds: list[tuple[str, int]] = []
        left = len(texts)
        number = state.moves_done
        if state.pending is not None:
            rounds.append((f"round {number + 1}", 1))
            left -= 1
        while left > 0 and number > 0:
            halves = 2 if state.order == MODE_FIRST or texts[left - 1] in MODES else 1
            if halves > left:
                return rounds[::-1]
            rounds.append((f"round {number}", halves))
            left -= halves
            number -= 1
        if left == 2:
            rounds.append(("set-up", 2))
        return rounds[::-1]

    # -- help -----------------------------------------------------------------
    def help(self) -> str:
        return HELP


HELP = """\
Move In Synch, In Opposition (Leroy Quet, 2009): synch

Two markers wander over a square board, one per player. Wherever a
marker arrives on an empty square, it marks the square with its
owner's symbol (x for the first player, o for the second). The
player with more symbols at the end wins.

Set-up. The first player places their marker with `place c3`; then
the second player places theirs on any other square. Each start
square gets its owner's symbol. A bare square (`c3`) is read as a
placement too.

Rounds. The game is played in rounds. Every round has two halves,
one from each player, and each half is a move of its own (so the
server's move numbers count two moves per round). In rounds
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
marks it with its owner's symbol, unless both markers arrived on the
same empty square: then neither marks it. A symbol is never erased or
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
            marker that moved marks a square.

The board mail. x and o are symbols, . an empty square; 1 and 2 are
the first and second player's markers, * both markers on one square.
A marker stands in place of its square's symbol, and the lines under
the board say what lies beneath each one and whether the last round
marked it. Below that: the symbol counts, the empty squares, the rounds
without a new symbol, and who must send what next. The move list
shows one line per round, with both halves side by side.

One mail, two halves. The roles swap every round, so a player's
halves come two in a row: the last half of one round and the first
of the next (in the default order your direction ends a round and
your synch or opposition opens the next). Put multiple in the
Subject and the two commands on lines of their own in the body: the
server carries them out in turn, as if they came one after another.
  multiple
  synch move 101 alice secret ne
  synch move 101 alice secret synch

Examples
  synch challenge alice bob
  synch challenge -size=10 -order=direction-first alice bob
  synch move 101 alice secret place c3
  synch move 101 bob secret synch
  synch move 101 alice secret ne
"""
