"""Finding games through the `pbmserv.games` entry-point group."""

from __future__ import annotations

from functools import cache
from importlib.metadata import EntryPoint, entry_points

from pbmserv.gamekit.api import Game

ENTRY_POINT_GROUP = "pbmserv.games"


class UnknownGame(LookupError):
    pass


@cache
def _entry_points() -> dict[str, EntryPoint]:
    return {ep.name.lower(): ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def game_names() -> list[str]:
    return sorted(_entry_points())


@cache
def get_game(name: str) -> Game:
    """The game registered under `name` (case-insensitive)."""
    ep = _entry_points().get(name.lower())
    if ep is None:
        raise UnknownGame(name)
    game_class = ep.load()
    game = game_class()
    if not isinstance(game, Game):
        raise TypeError(f"entry point {name} is not a pbmserv.gamekit.Game")
    return game
