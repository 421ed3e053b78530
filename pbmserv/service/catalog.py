"""The games this server offers, by command word."""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Iterator

from pbmserv.gamekit import Game, game_names, get_game


class Catalog:
    def __init__(self, games: Iterable[Game]):
        self._games = {game.name.lower(): game for game in games}

    @classmethod
    def installed(cls, extra: Iterable[str] = ()) -> Catalog:
        """Every game registered under the `pbmserv.games` entry points, plus
        the `extra` ones named as "module:Class"."""
        games = [get_game(name) for name in game_names()]
        for path in extra:
            module_name, _, class_name = path.partition(":")
            games.append(getattr(importlib.import_module(module_name), class_name)())
        return cls(games)

    def names(self) -> list[str]:
        return sorted(self._games)

    def get(self, name: str) -> Game:
        return self._games[name.lower()]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._games

    def __iter__(self) -> Iterator[Game]:
        return iter(self._games[name] for name in self.names())
