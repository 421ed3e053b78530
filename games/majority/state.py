"""A board of Majority or Psychomachia as a value, and its stored form."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

WHITE, BLACK = 0, 1
SIDES = ("White", "Black")
STONE = ("W", "B")
COLOUR = ("dark", "light")
EMPTY = "."
#: in `hidden`: a stone is hidden, on a square this state does not know (the
#: state as the opponent can know it: see games.majority.rules.known_to)
UNKNOWN = -1


@dataclass(frozen=True)
class MajorityState:
    players: tuple[str, str]
    size: int
    stones: int  # each side's stones to place (the hidden stone not counted)
    hidden_variant: bool
    board: str  # one character per cell index: ".", "W" or "B" (placed stones only)
    placed: int  # stones placed so far by both sides; placement k is turn k (White's are even)
    #: each side's hidden square; no stone is ever placed on it (its owner may
    #: not, the opponent plays the other colour)
    hidden: tuple[int | None, int | None]
    #: the turn at whose start each side revealed (2 * stones: the final reveal,
    #: at the start of the turn that never comes)
    revealed_at: tuple[int | None, int | None]
    #: per side, per line (rows 1.., then columns a..): the turn that completed it
    completed_at: tuple[tuple[int | None, ...], tuple[int | None, ...]]
    #: the last action: (seat, "hide" | "reveal" | "place" | "reveal,place", cell);
    #: a reveal alone names the hidden stone's cell
    last: tuple[int, str, int] | None

    def hidden_square(self, seat: int) -> int | None:
        """The square of `seat`'s hidden stone, None if it has none or it is UNKNOWN."""
        square = self.hidden[seat]
        return None if square == UNKNOWN else square

    @property
    def in_setup(self) -> bool:
        return self.hidden_variant and None in self.hidden

    @property
    def over(self) -> bool:
        return self.placed >= 2 * self.stones

    @property
    def mover(self) -> int:
        """Whose stone the current turn places (once the set-up is done)."""
        return self.placed % 2


def encode(state: MajorityState) -> dict[str, Any]:
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


def decode(data: Any) -> MajorityState:
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
