"""A board of Majority or Psychomachia as a value."""

from __future__ import annotations

from dataclasses import dataclass

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
