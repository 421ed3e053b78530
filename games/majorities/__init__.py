"""Bill Taylor's Majorities on the hexhex board."""

from games.majorities.board import MajoritiesState, board_for, dead_cubes, tallies
from games.majorities.game import Majorities

__all__ = ["Majorities", "MajoritiesState", "board_for", "dead_cubes", "tallies"]
