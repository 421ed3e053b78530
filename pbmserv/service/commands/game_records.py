"""`GAME record board`: a board's whole game, to keep or pass on, as text
and as a JSON attachment, to anybody who asks, as `show` is
(docs/decisions/0148-game-records.md)."""

from __future__ import annotations

import json

from pbmserv.gamekit import Game
from pbmserv.mail.attachments import Attachment
from pbmserv.protocol.commands import Record
from pbmserv.service.commands.handling import handles
from pbmserv.service.play import views
from pbmserv.service.play.board import Board
from pbmserv.service.play.game_record import public_moves, public_record, record_data
from pbmserv.service.processing.context import Context, Reply
from pbmserv.service.processing.errors import ServiceError
from pbmserv.store import records


@handles(Record)
def record(ctx: Context, game: Game, command: Record) -> list[Reply]:
    found = records.find_board(ctx.connection, game.name, command.board)
    if found is None:
        raise no_such_board(ctx, game, command.board)
    loaded = Board.of(game, found)
    board = loaded.record
    moves = public_moves(game, board, records.board_moves(ctx.connection, board.id))
    status = views.status_line(game, board, loaded.state)
    filename = f"{game.name}-{board.board}.json"
    secrets = (
        "" if board.result is not None or not any(move.text.startswith(views.SECRET) for move in moves)
        else " Secret moves read (secret) until the game is over: 'showas' shows you your own."
    )
    about = (
        f"The record of {game.title} Board {board.board} as it stands, as anybody may see it: every move with "
        f"its number, player and time (UTC).{secrets} The attached file {filename} holds the same record as JSON, "
        "for programs."
    )
    page = views.board_page(ctx.settings, game, board)
    parts = [views.wrap(about, hang=""), *([f"The same record on the web: {page}/record"] if page else [])]
    body = "\n".join(parts) + "\n\n" + public_record(game, board, moves, status)
    data = json.dumps(record_data(game, board, moves, status), indent=1, ensure_ascii=False) + "\n"
    attachment = Attachment(filename, "application/json", data.encode("utf-8"))
    return [Reply((ctx.sender,), f"{game.title} Board {board.board} record", body, attachments=(attachment,))]


def no_such_board(ctx: Context, game: Game, number: int) -> ServiceError:
    """The refusal of a board number this game has not, naming the games that have one (a game's name mistaken)."""
    others = [other for other in ctx.catalog if other.name != game.name and records.find_board(ctx.connection, other.name, number)]
    if not others:
        return ServiceError(f"There is no {game.title} board {number}.", f"'{game.name} games' lists the boards in play", game=game.name)
    named = views.names_and([other.title for other in others])
    return ServiceError(
        f"There is no {game.title} board {number}; {named} {'has' if len(others) == 1 else 'have'} a board {number}.",
        f"'{others[0].name} record {number}' mails its record; '{game.name} games' lists the {game.title} boards",
        game=game.name,
    )
