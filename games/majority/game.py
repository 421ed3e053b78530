"""Majority: White and Black fill the dark and light squares of a chequered
board and score the rows and columns ("tricks") they win; Psychomachia is the
same game with one hidden stone per player (the rules `majority help` gives).

The rules are in games.majority.rules (turns, squares, what a move does) and
games.majority.tricks (who holds a trick); moves are read in
games.majority.moves, drawn for each viewer in games.majority.view and
laid out as text in games.majority.board_text.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

import games.majority.rules as rules
from games.majority.board_text import text
from games.majority.moves import Hide, MajorityMove, Place, Reveal, legal_moves, read_move
from games.majority.state import BLACK, EMPTY, SIDES, WHITE, MajorityState
from games.majority.tricks import final_holders, knowledge, points
from games.majority.view import draw, number
from pbmserv.gamekit import Drawing, Game, InvalidOption, Option, Outcome

DEFAULT_STONES = 40
SIZES = tuple(range(6, 15, 2))


class Majority(Game):
    name = "majority"
    title = "Majority"
    playout_moves = 0  # the tally is the score if the game ended now
    state_type = MajorityState
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

    def to_move(self, state: MajorityState) -> frozenset[int]:
        return rules.to_move(state)

    def read_move(self, state: MajorityState, seat: int, text: str) -> MajorityMove:
        return read_move(state, seat, text, self.title)

    def apply(self, state: MajorityState, seat: int, move: MajorityMove) -> MajorityState:
        match move:
            case Hide(square=square):
                return rules.hide(state, seat, square)
            case Reveal():
                return rules.reveal(state, seat)
            case Place(square=square, reveal=revealing):
                return rules.place(state, seat, square, revealing=revealing)

    def moves(self, state: MajorityState, seat: int) -> list[MajorityMove]:
        return legal_moves(state, seat)

    def outcome(self, state: MajorityState) -> Outcome | None:
        if not state.over:
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

    def tally(self, state: MajorityState) -> tuple[float, ...]:
        """The public board's points if the game ended now, White's half
        point left out; an unrevealed hidden stone plays no part."""
        seen = knowledge(state, None)
        white, black = points(seen, final_holders(seen))
        return white - 0.5, black

    def judge(self, state: MajorityState) -> tuple[float, ...]:
        """The tally with every hidden stone revealed now. The bots judge
        only states drawn from their own view, where both hidden stones are
        known, and a stone hidden still counts at the end unless revealed
        too late for a trick; the public tally would value neither."""
        return self.tally(rules.revealed_now(state))

    def known_to(self, state: MajorityState, seat: int) -> MajorityState | None:
        return rules.known_to(state, seat) if state.hidden_variant else None

    def determinize(self, state: MajorityState, seat: int, rng: random.Random) -> MajorityState:
        return rules.determinize(state, seat, rng)

    def viewpoint(self, state: MajorityState, viewer: int | None) -> int | None:
        return viewer if state.hidden_variant else None  # only hidden stones differ between views

    def draw(self, state: MajorityState, viewer: int | None) -> Drawing:
        return draw(state, viewer)

    def text(self, drawing: Drawing) -> str:
        return text(drawing)

    def help(self) -> str:
        return HELP


class Psychomachia(Majority):
    """Majority with the hidden stone always on."""

    name = "psychomachia"
    title = "Psychomachia"
    fixed_options = {"hidden": None}
    options = (
        Majority.options[0],
        Option(
            "stones",
            DEFAULT_STONES,
            tuple(range(1, SIZES[-1] ** 2 // 2)),
            "stones each player places besides the hidden one: at most half the squares less "
            "one, the square the hidden stone takes; where 40 do not fit, the default is four "
            "fifths of a player's squares",
        ),
        Majority.options[2],
    )


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
    The square after the comma is where your new stone goes; naming
    your hidden stone's own square there ("reveal,d4" with your stone
    hidden on d4) reads as "reveal" alone: you still place a stone.
  - If your opponent completes a line you had already completed in
    secret, you keep it only by revealing no later than your next
    move; play that move without revealing and the line is theirs.
  - If that completion of your opponent's rested on their own hidden
    stone, you cannot see it yet, and your time starts only when they
    reveal: you keep the line by revealing no later than your next
    move after their reveal. Should they never reveal, the reveal at
    the end is in time.
  - When all stones are placed, both hidden stones are revealed
    before the tricks are awarded. That is in time for every line
    your opponent never completed, completed on the very last move,
    or completed with a hidden stone they never revealed.
  - Until it is revealed, no board, move list or error message tells
    your opponent or an onlooker where your hidden stone is.

Moves: e5 (place a stone), hide e5, reveal, reveal,e5. Case and extra
spaces do not matter.

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
