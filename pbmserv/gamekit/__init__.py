"""Everything a game plugin may import: the plugin API, the drawing of a position, the default stored form of a state and shared board geometry."""

from pbmserv.gamekit.api import Game, IllegalMove, InvalidOption, Move, Option, Outcome, TextMove
from pbmserv.gamekit.drawing import Drawing, Ink, Kind, Mark, Panel, Seat, Tally
from pbmserv.gamekit.hexagonal import HexHexGrid
from pbmserv.gamekit.regions import connected_sets
from pbmserv.gamekit.registry import UnknownGame, game_names, get_game
from pbmserv.gamekit.square import COMPASS, OPPOSITE, SquareGrid
from pbmserv.gamekit.stored import from_data, to_data
from pbmserv.gamekit.text import filled

__all__ = [
    "COMPASS",
    "OPPOSITE",
    "Drawing",
    "Game",
    "HexHexGrid",
    "IllegalMove",
    "Ink",
    "InvalidOption",
    "Kind",
    "Mark",
    "Move",
    "Option",
    "Outcome",
    "Panel",
    "Seat",
    "SquareGrid",
    "Tally",
    "TextMove",
    "UnknownGame",
    "connected_sets",
    "filled",
    "from_data",
    "game_names",
    "get_game",
    "to_data",
]
