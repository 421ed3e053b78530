"""The site's addresses and their handlers: each reads what it shows in
one read-only transaction (`web.boards`, `web.listings`) and lays it out.
The handlers are plain functions, which Starlette runs in its thread pool."""

from __future__ import annotations

import json
from base64 import b64encode
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from pbmserv.gamekit import Drawing, Game
from pbmserv.pictures import png, svg
from pbmserv.service.play import game_record, ratings
from pbmserv.service.processing.context import as_utc
from pbmserv.store import records
from pbmserv.store.database import reading
from pbmserv.store.handles import Connection
from pbmserv.store.records import BoardRecord
from pbmserv.web import boards, listings
from pbmserv.web.boards import NotFound
from pbmserv.web.caching import answer, board_etag, etag_of, not_modified, still_fresh

if TYPE_CHECKING:
    from pbmserv.web.app import Site

HTML = "text/html; charset=utf-8"
TEXT = "text/plain; charset=utf-8"
ATOM = "application/atom+xml; charset=utf-8"
PICTURES: dict[str, tuple[str, Callable[[Drawing], bytes | str]]] = {"svg": ("image/svg+xml", svg), "png": ("image/png", png)}
#: what makes a board's answer from the connection, the game and the board's record
Making = Callable[[Connection, Game, BoardRecord], bytes | str]
#: the moves a board's feed holds, the newest
FEED_MOVES = 50


def routes(site: Site) -> list[Route]:
    def route(path: str, handler: Any, **bound: Any) -> Route:
        return Route(path, partial(handler, site, **bound), methods=["GET"])

    return [
        route("/", first_page),
        route("/players/{userid}.atom", player_feed),
        route("/players/{userid}", player_page),
        route("/{game}/standings", standings_page),
        route("/{game}/rules", rules_page),
        route("/{game}/{board:int}.svg", picture, kind="svg"),
        route("/{game}/{board:int}.png", picture, kind="png"),
        route("/{game}/{board:int}.json", board_json),
        route("/{game}/{board:int}.atom", board_feed),
        route("/{game}/{board:int}/record", board_record),
        route("/{game}/{board:int}", board_page),
        route("/{game}", game_page),
    ]


def asked_move(request: Request) -> int | None:
    """The position `?move=K` asks for, as a number of moves (None: the latest)."""
    value = request.query_params.get("move")
    if value is None:
        return None
    if not value.isdigit():
        raise NotFound(f"?move={value} is not a position: give the number of moves played, like ?move=3.")
    return int(value)


def first_page(site: Site, request: Request) -> Response:
    with reading(site.engine) as connection:
        page = listings.first_page(connection, site.catalog)
    return answer(request, site.page(request, "index.html", page=page), HTML)


def game_page(site: Site, request: Request) -> Response:
    game = boards.game_of(site.catalog, request.path_params["game"])
    with reading(site.engine) as connection:
        page = listings.game_page(connection, site.catalog, game)
    return answer(request, site.page(request, "game.html", page=page), HTML)


def board_page(site: Site, request: Request) -> Response:
    game = boards.game_of(site.catalog, request.path_params["game"])
    with reading(site.engine) as connection:
        facts = boards.page_facts(connection, game, request.path_params["board"], asked_move(request), as_utc(site.clock()))

        def make() -> str:
            view = boards.board_view(connection, game, facts)
            return site.page(request, "board.html", view=view, position=view.position)

        return _kept_answer(site, request, etag_of("page", *facts.key), make, HTML)


def _board_answer(site: Site, request: Request, variant: str, make: Making, media_type: str) -> Response:
    """What shows one board in `variant` (its format, and whatever else it
    shows that its board does not say), keyed by the board (`caching`):
    `make` (connection, game, record) gives the body."""
    game = boards.game_of(site.catalog, request.path_params["game"])
    with reading(site.engine) as connection:
        record = boards.board_record(connection, game, request.path_params["board"])
        etag = board_etag(record, variant, request.query_params.get("move"))
        return _kept_answer(site, request, etag, partial(make, connection, game, record), media_type)


def _kept_answer(site: Site, request: Request, etag: str, make: Callable[[], bytes | str], media_type: str) -> Response:
    """A 304 before anything is made when the client holds `etag`; else the body kept under it, or `make`'s."""
    if still_fresh(request, etag):
        return not_modified(etag)
    return answer(request, site.bodies.get(etag, make), media_type, etag)


def picture(site: Site, request: Request, kind: str) -> Response:
    media_type, paint = PICTURES[kind]  # svg gives text, png bytes

    def make(connection: Connection, game: Game, record: BoardRecord) -> bytes | str:
        shown = boards.position(connection, game, record, boards.checked_move(record, asked_move(request)))
        return paint(shown.drawing)

    return _board_answer(site, request, kind, make, media_type)


def board_json(site: Site, request: Request) -> Response:
    def make(connection: Connection, game: Game, record: BoardRecord) -> str:
        shown = boards.position(connection, game, record, boards.checked_move(record, asked_move(request)))
        moves = game_record.public_moves(game, record, records.board_moves(connection, record.id, shown.at))
        return json.dumps(public_state(shown, moves), indent=1, ensure_ascii=False) + "\n"

    return _board_answer(site, request, "json", make, "application/json")


def public_state(shown: boards.Position, moves: tuple[game_record.ListedMove, ...]) -> dict[str, Any]:
    """What everybody may know of a position: never a state's own fields."""
    game, record, drawing = shown.game, shown.record, shown.drawing
    tally = drawing.tally
    return {
        "game": game.name, "title": game.title, "board": record.board, "status": record.status,
        "players": game_record.players_data(game, record),
        "move_count": record.move_count, "at": shown.at, "to_move": shown.to_move,
        "result": game_record.result_data(record),
        "moves": game_record.moves_data(moves),
        "board_text": shown.text,
        "drawing": {
            "title": drawing.title, "last_move": drawing.last_move,
            "tally": None if tally is None else {
                "columns": list(tally.columns), "rows": [{"label": label, "values": list(values)} for label, values in tally.rows],
            },
        },
    }


def board_record(site: Site, request: Request) -> Response:
    def make(connection: Connection, game: Game, record: BoardRecord) -> str:
        shown = boards.position(connection, game, record, record.move_count)
        moves = game_record.public_moves(game, record, records.board_moves(connection, record.id))
        return game_record.public_record(game, record, moves, shown.status)

    return _board_answer(site, request, "record", make, TEXT)


def board_feed(site: Site, request: Request) -> Response:
    def make(connection: Connection, game: Game, record: BoardRecord) -> str:
        recent = records.recent_moves(connection, record.id, record.move_count, FEED_MOVES)
        moves = reversed(game_record.public_moves(game, record, recent))
        return site.page(request, "board.atom", game=game, record=record, moves=list(moves), base=site.base_url(request))

    return _board_answer(site, request, f"atom {site.base_url(request)}", make, ATOM)  # its links start with the address


def player_page(site: Site, request: Request) -> Response:
    with reading(site.engine) as connection:
        page = listings.player_page(connection, site.catalog, request.path_params["userid"].lower())
    return answer(request, site.page(request, "player.html", page=page), HTML)


def player_feed(site: Site, request: Request) -> Response:
    with reading(site.engine) as connection:
        page = listings.player_page(connection, site.catalog, request.path_params["userid"].lower())
    entries = sorted([*page.running, *page.finished], key=lambda line: as_utc(line.updated_at), reverse=True)
    body = site.page(request, "player.atom", page=page, entries=entries, base=site.base_url(request), now=site.clock())
    return answer(request, body, ATOM)


def standings_page(site: Site, request: Request) -> Response:
    game = boards.game_of(site.catalog, request.path_params["game"])
    with reading(site.engine) as connection:
        groups = ratings.standings(connection, game.name, as_utc(site.clock()))
    body = site.page(
        request, "standings.html", game=game, groups=groups, headings=ratings.STANDING_GROUPS, start=ratings.START_RATING,
    )
    return answer(request, body, HTML)


def rules_page(site: Site, request: Request) -> Response:
    game = boards.game_of(site.catalog, request.path_params["game"])
    examples = [(example, _data_uri(svg(example.drawing))) for example in listings.examples(game)]
    return answer(request, site.page(request, "rules.html", game=game, examples=examples), HTML)


def _data_uri(picture: str) -> str:
    return "data:image/svg+xml;base64," + b64encode(picture.encode()).decode()
