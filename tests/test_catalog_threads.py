"""The catalog shared by threads (the web site's handlers): while one
thread loads a game, another still finds it there, and gets the same one."""

from __future__ import annotations

import threading

from pbmserv.gamekit import Game
from pbmserv.service.processing.catalog import Catalog
from tests.toygame import Toy


def test_a_game_being_loaded_is_in_the_catalog_and_loaded_once() -> None:
    started, release = threading.Event(), threading.Event()
    loads: list[Game] = []

    def load() -> Game:
        started.set()
        release.wait(30)
        loads.append(Toy())
        return loads[-1]

    catalog = Catalog(loaders={"toy": load})
    found: list[Game] = []
    first = threading.Thread(target=lambda: found.append(catalog.get("toy")))
    first.start()
    assert started.wait(30)
    assert "toy" in catalog and catalog.names() == ["toy"]  # while the first thread loads it
    second = threading.Thread(target=lambda: found.append(catalog.get("toy")))
    second.start()
    release.set()
    first.join(30)
    second.join(30)
    assert len(loads) == 1 and found == [loads[0], loads[0]]
