"""`queue` (a move played when the player's turn comes) and `preview` (a
what-if board, saved nowhere)."""

from __future__ import annotations

from typing import Any

from pbmserv.gamekit import Game, IllegalMove
from pbmserv.protocol.commands import Preview, Queue
from pbmserv.service.commands import boards, showing
from pbmserv.service.commands.handling import handles
from pbmserv.service.play import views
from pbmserv.service.play.board import load, playing_seat, position
from pbmserv.service.processing.context import Context, Reply
from pbmserv.service.processing.errors import ServiceError
from pbmserv.store import records
from pbmserv.store.records import BoardRecord


# -- queue -----------------------------------------------------------------------
@handles(Queue)
def queue(ctx: Context, game: Game, command: Queue) -> list[Reply]:
    """Keep the player's next move (replacing an earlier one); only the sender hears of it."""
    user, loaded, seat = boards.player_on_running_board(ctx, game, command.userid, command.password, command.board)
    board = loaded.record
    if seat in game.to_move(loaded.state):
        raise ServiceError(
            f"It is your turn on {game.title} board {board.board} already, so there is nothing to queue.",
            f"send the move itself: {boards.syntax(game.name, 'move')}",
            game=game.name, board=board.board,
        )
    earlier = records.queue_move(ctx.connection, board.id, seat, command.move, ctx.now)
    return [Reply((ctx.sender,), f"{game.title} Board {board.board} queue {user.userid}", _queued_text(game, board, command.move, earlier))]


def _queued_text(game: Game, board: BoardRecord, text: str, earlier: str | None) -> str:
    replaced = f" It replaces your earlier queued move '{earlier}'." if earlier is not None else ""
    return views.wrap(
        f"Your move '{text}' is queued on {game.title} board {board.board}.{replaced} It is played for you "
        "as soon as your turn comes, and marked (Auto) in the move list; if it is not legal then, it is "
        "dropped and you get a mail saying why. Nobody else sees it before it is played; a new 'queue' "
        "replaces it.",
        hang="",
    ) + "\n"


# -- preview ---------------------------------------------------------------------
@handles(Preview)
def preview(ctx: Context, game: Game, command: Preview) -> list[Reply]:
    """The board (as it stands, or after move n) after the given moves, as the
    sender sees it; nothing is saved."""
    user = ctx.authenticate(command.userid, command.password)
    loaded = load(ctx.connection, game, command.board.board)
    board = loaded.record
    seat = playing_seat(loaded, user.userid)
    at = command.board.at_move
    showing.check_position(game, board, at, f"{game.name} preview {board.board}#n {user.userid} password move")
    state, moves = position(ctx.connection, loaded, at)
    known = game.known_to(state, seat)
    if known is None:
        _check_no_secrets(game, board, moves, seat)
    previewed = state if known is None else known
    for number, text in enumerate(command.moves, start=1):
        previewed = _preview_move(game, board, previewed, seat, number, text)
    text = _preview_text(game, board, previewed, seat, command, own_view=known is not None)
    return [Reply((ctx.sender,), f"{game.title} Board {board.board} preview", text)]


def _check_no_secrets(game: Game, board: BoardRecord, moves: list[records.MoveRecord], seat: int) -> None:
    """A game without a view of what `seat` can know (`Game.known_to`) is
    previewed on the whole state: with others' secret moves in it, its
    legality and result could give them away, so it is refused."""
    if board.result is None and any(move.secret and move.seat != seat for move in moves):
        raise ServiceError(
            f"{game.title} board {board.board} holds secret moves of other players, and a preview could give them away.",
            f"preview an earlier position ({board.board}#n) before their secret moves, or wait until they are revealed",
            game=game.name, board=board.board,
        )


def _preview_move(game: Game, board: BoardRecord, state: Any, viewer: int, number: int, text: str) -> Any:
    """`state` after the previewed move; the sender moves if it is their turn, else the (first) player to move."""
    to_move = game.to_move(state)
    usage = f"{boards.syntax(game.name, 'preview')}; '{game.name} help' explains the moves"
    if not to_move:
        raise ServiceError(
            f"Preview move {number} ('{text}') comes after the end of the game.", usage, game=game.name, board=board.board,
        )
    mover = viewer if viewer in to_move else min(to_move)
    try:
        return game.play(state, mover, text)
    except IllegalMove as error:
        raise ServiceError(
            f"Preview move {number} ('{text}', by {board.seats[mover]}) is not legal: {error.message}",
            usage, game=game.name, board=board.board, board_text=views.position(game, board, state, viewer),
        ) from None


def _preview_text(game: Game, board: BoardRecord, state: Any, viewer: int, command: Preview, *, own_view: bool) -> str:
    start = f"after move {command.board.at_move}" if command.board.at_move is not None else "as it stands"
    outcome = game.outcome(state)
    if outcome is not None:
        winners = views.names_and([board.seats[seat] for seat in outcome.winners])
        result = f"The game would be won by {winners}: {outcome.reason}." if winners else f"The game would be drawn: {outcome.reason}."
    else:
        names = views.names_and([name + "'s" for name in views.to_move_names(game, board, state)])
        result = f"It would be {names} turn."
    unknown = " The other players' hidden parts are unknown to the preview: it plays as if they were not there." if own_view else ""
    lead = views.wrap(
        f"Preview, as {board.seats[viewer]} sees it, of board {board.board} {start} followed by "
        f"{'; '.join(command.moves)}. Nothing is saved.{unknown}",
        hang="",
    )
    return "\n".join([views.title_line(game, board), lead, result, "", views.position(game, board, state, viewer)]) + "\n"
