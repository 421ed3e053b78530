"""The moves of Majority and Psychomachia as values, and how a player's
text is read into one (checked against the rules, with a refusal that says
how to write it right)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from games.majority.rules import (
    check_colour,
    check_placement,
    example_square,
    geometry,
    not_your_turn,
    to_move,
)
from games.majority.state import COLOUR, EMPTY, UNKNOWN, MajorityState
from pbmserv.gamekit import IllegalMove

_SPACED_SQUARE = re.compile(r"\b([a-z])\s+(\d)")
_SEPARATORS = re.compile(r"[\s,]+")


@dataclass(frozen=True)
class Hide:
    """Set-up: the mover's hidden stone goes on `square`; only its owner may see where."""

    square: int
    size: int
    secret = True

    def __str__(self) -> str:
        return f"hide {geometry(self.size).labels[self.square]}"


@dataclass(frozen=True)
class Reveal:
    """The mover shows their hidden stone; the turn goes on."""

    secret = False

    def __str__(self) -> str:
        return "reveal"


@dataclass(frozen=True)
class Place:
    """A stone on `square`, after showing the hidden stone when `reveal`."""

    square: int
    size: int
    reveal: bool = False
    secret = False

    def __str__(self) -> str:
        label = geometry(self.size).labels[self.square]
        return f"reveal,{label}" if self.reveal else label


MajorityMove = Hide | Reveal | Place


@cache
def _values(size: int) -> tuple[tuple[Hide, ...], tuple[Place, ...]]:
    """Every square's hide and placement on a board of `size`, made once:
    values never change, so every list of moves shares them."""
    squares = range(len(geometry(size).labels))
    return tuple(Hide(i, size) for i in squares), tuple(Place(i, size) for i in squares)


def legal_moves(state: MajorityState, seat: int) -> list[MajorityMove]:
    """Every square `seat` may play, a hide in the set-up, and a reveal
    while its stone is hidden (a reveal and a place, `reveal,<square>`,
    is exactly the reveal followed by that place, so it is not listed)."""
    if seat not in to_move(state):
        return []
    geo = geometry(state.size)
    hides, places = _values(state.size)
    if state.in_setup:
        return [hides[i] for i in geo.side_cells[seat]]
    own_hidden = state.hidden_square(seat)
    moves: list[MajorityMove] = [
        places[i] for i in geo.side_cells[seat] if state.board[i] == EMPTY and i != own_hidden
    ]
    if own_hidden is not None and state.revealed_at[seat] is None:
        moves.append(Reveal())
    return moves


def read_move(state: MajorityState, seat: int, text: str, title: str) -> MajorityMove:
    """The move `seat` sends as `text`; IllegalMove when it cannot be read
    or the rules forbid it now. `title` names the game in refusals. A
    refusal goes to `seat` only, so it may name the seat's hidden square."""
    seats = to_move(state)
    if not seats:
        raise IllegalMove("The game is over: no more moves can be made.")
    if seat not in seats:
        raise IllegalMove(not_your_turn(state, seat))
    words = _words(text)
    if state.in_setup:
        if len(words) == 2 and words[0] == "hide":
            square = _square(state, words[1])
            check_colour(state, seat, square, "hides")
            return Hide(square, state.size)
        raise IllegalMove(
            f"First hide your stone: write hide and an empty {COLOUR[seat]} square, "
            f"like hide {example_square(state, seat)}."
        )
    if not words:
        raise IllegalMove(f"Write the square for your stone, like {example_square(state, seat)}.")
    if words[0] == "hide":
        if not state.hidden_variant:
            raise IllegalMove("This game has no hidden stones: it was not started with -hidden.")
        raise IllegalMove(
            f"Stones are hidden only before the first move: now place a stone, like {example_square(state, seat)}."
        )
    if words[0] == "reveal":
        return _read_reveal(state, seat, words)
    if "reveal" in words:
        raise IllegalMove(f"Reveal first, then place: write reveal,{example_square(state, seat)}.")
    if words == ["pass"]:
        raise IllegalMove(
            f"There is no passing in {title}: place a stone on an empty "
            f"{COLOUR[seat]} square, like {example_square(state, seat)}."
        )
    if len(words) > 1:
        raise IllegalMove(f"Place one stone per turn: write one square, like {example_square(state, seat)}.")
    square = _square(state, words[0])
    check_placement(state, seat, square)
    return Place(square, state.size)


def _read_reveal(state: MajorityState, seat: int, words: list[str]) -> Reveal | Place:
    """`reveal` alone, or `reveal,<square>`: reveal, then place there."""
    if not state.hidden_variant:
        raise IllegalMove("This game has no hidden stone to reveal: it was not started with -hidden.")
    if state.hidden[seat] == UNKNOWN:
        raise IllegalMove(
            f"{state.players[seat]}'s hidden stone is on a square this preview does not know, "
            "so it cannot be revealed here."
        )
    if state.revealed_at[seat] is not None:
        raise IllegalMove(
            f"Your hidden stone is revealed already: place a stone, like {example_square(state, seat)}."
        )
    if len(words) == 1:
        return Reveal()
    if len(words) > 2:
        raise IllegalMove(
            f"Reveal and place one stone at most: write reveal, or reveal,{example_square(state, seat)}."
        )
    square = _square(state, words[1])
    if square == state.hidden[seat]:
        return Reveal()
    check_placement(state, seat, square)
    return Place(square, state.size, reveal=True)


def _words(text: str) -> list[str]:
    joined = _SPACED_SQUARE.sub(r"\1\2", text.strip().lower())
    return [word for word in _SEPARATORS.split(joined) if word]


def _square(state: MajorityState, word: str) -> int:
    geo = geometry(state.size)
    return geo.index(geo.grid.parse(word))
