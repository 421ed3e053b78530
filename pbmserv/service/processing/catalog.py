"""The games this server offers, by command word."""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Iterable, Iterator
from functools import partial

from pbmserv.gamekit import Game, game_names, get_game


class Catalog:
    """Games by command word. A game registered under the entry points is
    loaded when it is first asked for, not before: a mail that plays no
    game (a `receive` of a signup, or of `help`) loads none. Threads may
    share it (the web site's handlers): a game is loaded once, and is in
    it all the while."""

    def __init__(self, games: Iterable[Game] = (), loaders: dict[str, Callable[[], Game]] | None = None):
        self._games = {game.name.lower(): game for game in games}
        self._loaders = {name.lower(): load for name, load in (loaders or {}).items() if name.lower() not in self._games}
        self._loading = threading.Lock()

    @classmethod
    def installed(cls, extra: Iterable[str] = ()) -> Catalog:
        """Every game registered under the `pbmserv.games` entry points, plus
        the `extra` ones named as "module:Class" (loaded now: their names
        are their classes')."""
        games = []
        for path in extra:
            module_name, _, class_name = path.partition(":")
            games.append(getattr(importlib.import_module(module_name), class_name)())
        return cls(games, {name: partial(get_game, name) for name in game_names()})

    def names(self) -> list[str]:
        return sorted({*self._games, *self._loaders})

    def get(self, name: str) -> Game:
        key = name.lower()
        if key not in self._games:
            with self._loading:
                if key not in self._games:  # not loaded by another thread meanwhile
                    self._games[key] = self._loaders[key]()
                    del self._loaders[key]  # only now: until it is loaded, `in` sees its loader
        return self._games[key]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name.lower() in self._games or name.lower() in self._loaders)

    def __iter__(self) -> Iterator[Game]:
        return iter(self.get(name) for name in self.names())
