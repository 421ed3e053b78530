"""The three kinds of text a player of Move In Synch, In Opposition sends,
as values: a placement, a mode and a direction."""

from __future__ import annotations

from dataclasses import dataclass

from games.synch.state import DIRECTIONS, OPPOSITION, SYNCH, Cell, grid_for


@dataclass(frozen=True)
class Place:
    """A marker's start square."""

    cell: Cell
    size: int
    kind = "place"
    secret = False

    def __str__(self) -> str:
        return f"place {grid_for(self.size).label(self.cell)}"


@dataclass(frozen=True)
class Mode:
    """The decider's half of a round: synch or opposition."""

    name: str
    kind = "mode"
    secret = False

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Direction:
    """The directioner's half of a round: a compass direction."""

    name: str
    kind = "direction"
    secret = False

    def __str__(self) -> str:
        return self.name


SynchMove = Place | Mode | Direction

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


def read_words(size: int, text: str) -> SynchMove | None:
    """The move `text` spells, whether or not it is legal now; None if it
    spells none. A square that is not on the board raises the grid's own
    IllegalMove."""
    words = text.lower().split()
    if words and words[0] in _PLACE_WORDS:
        if len(words) == 1:
            return None
        return Place(grid_for(size).parse("".join(words[1:])), size)
    squashed = "".join(words).replace("-", "").replace("_", "")
    if squashed in _MODE_WORDS:
        return Mode(_MODE_WORDS[squashed])
    if squashed in _DIRECTION_WORDS:
        return Direction(_DIRECTION_WORDS[squashed])
    if squashed[:1].isalpha() and squashed[1:].isdigit() and len(words) == 1:
        return Place(grid_for(size).parse(squashed), size)
    return None
