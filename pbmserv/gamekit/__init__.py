"""Everything a game plugin may import: the plugin API and shared board geometry."""

from pbmserv.gamekit.api import Game, IllegalMove, InvalidOption, Move, Option, Outcome, TextMove
from pbmserv.gamekit.hexagonal import HexHexGrid
from pbmserv.gamekit.regions import connected_regions, connected_sets, is_connected
from pbmserv.gamekit.registry import UnknownGame, game_names, get_game
from pbmserv.gamekit.square import COMPASS, OPPOSITE, SquareGrid
from pbmserv.gamekit.text import filled

__all__ = [
    "COMPASS",
    "OPPOSITE",
    "Game",
    "HexHexGrid",
    "IllegalMove",
    "InvalidOption",
    "Move",
    "Option",
    "Outcome",
    "SquareGrid",
    "TextMove",
    "UnknownGame",
    "connected_regions",
    "connected_sets",
    "filled",
    "game_names",
    "get_game",
    "is_connected",
]
