"""The site's pages that list: the first page, a game's boards, a player,
a game's standings and its rules with example positions. Plain functions
over a read-only connection, as `web.boards`."""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cache

from pbmserv.gamekit import Drawing, Game
from pbmserv.service.processing.catalog import Catalog
from pbmserv.store import records, site
from pbmserv.store.following import RatingRecord
from pbmserv.store.handles import Connection
from pbmserv.web.boards import BoardLine, NotFound, board_lines

#: the finished boards the first page lists
RECENT_RESULTS = 20
#: the moves played from a new board for the rules' example position
EXAMPLE_MOVES = 6


@dataclass(frozen=True)
class GameLine:
    name: str
    title: str
    running: int


@dataclass(frozen=True)
class FirstPage:
    games: tuple[GameLine, ...]
    running: tuple[BoardLine, ...]
    results: tuple[BoardLine, ...]


@dataclass(frozen=True)
class GamePage:
    game: Game
    running: tuple[BoardLine, ...]
    finished: tuple[BoardLine, ...]


@dataclass(frozen=True)
class PlayerPage:
    userid: str
    ratings: tuple[tuple[str, RatingRecord], ...]  # (game title, rating)
    running: tuple[BoardLine, ...]
    finished: tuple[BoardLine, ...]


@dataclass(frozen=True)
class Example:
    """A position of the rules page: what it shows, and its drawing."""

    caption: str
    drawing: Drawing
    text: str


def first_page(connection: Connection, catalog: Catalog) -> FirstPage:
    running = board_lines(catalog, records.running_boards(connection))
    games = tuple(GameLine(game.name, game.title, sum(line.game == game.name for line in running)) for game in catalog)
    return FirstPage(games, tuple(running), tuple(board_lines(catalog, site.recent_results(connection, RECENT_RESULTS))))


def game_page(connection: Connection, catalog: Catalog, game: Game) -> GamePage:
    return GamePage(
        game, tuple(board_lines(catalog, records.boards_in_game(connection, game.name, "active"))),
        tuple(board_lines(catalog, records.finished_boards(connection, game.name))),
    )


def player_page(connection: Connection, catalog: Catalog, userid: str) -> PlayerPage:
    user_id = site.user_id_of(connection, userid)
    if user_id is None:
        raise NotFound(f"There is no player with the userid {userid!r}. The first page lists the boards in play and their players.")
    titles = {game.name: game.title for game in catalog}
    rated = tuple((titles[r.game_type], r) for r in site.ratings_of(connection, user_id) if r.game_type in titles)
    lines = board_lines(catalog, site.boards_of_player(connection, userid))
    return PlayerPage(userid, rated, tuple(b for b in lines if b.running), tuple(b for b in lines if not b.running))


@cache
def examples(game: Game) -> tuple[Example, ...]:
    """A new board with the default options, and the position after
    EXAMPLE_MOVES moves drawn from the legal ones (the same every time),
    each as the public sees it."""
    players = [f"player{seat + 1}" for seat in range(game.min_players)]
    state = game.new({}, players)
    shown = [Example("A new board", game.draw(state, None), game.render(state, None))]
    rng = random.Random(game.name)
    played = 0
    while played < EXAMPLE_MOVES and game.outcome(state) is None and game.to_move(state):
        seat = min(game.to_move(state))
        state = game.apply(state, seat, rng.choice(list(game.moves(state, seat))))
        played += 1
    if played:
        shown.append(Example(f"After {played} moves", game.draw(state, None), game.render(state, None)))
    return tuple(shown)
