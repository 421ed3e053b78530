"""A move or a resignation carried out on a `board.Board`: finished and rated
when it ends the game, the queued moves played that come due after it
(one that is no longer legal dropped, with a mail to its owner)."""

from __future__ import annotations

from pbmserv.gamekit import IllegalMove
from pbmserv.service.play import ratings, views
from pbmserv.service.play.board import Board, save
from pbmserv.service.play.board_mails import mails_to_players
from pbmserv.service.processing.context import Context, Reply
from pbmserv.store import records
from pbmserv.store.records import QueuedRecord
from pbmserv.store.states import Kind


def play(ctx: Context, board: Board, seat: int, text: str, *, auto: bool = False) -> Board:
    """The board after one move of the game, finished (and rated) if the
    move ends it; raises IllegalMove and then changes nothing."""
    played = board.play(seat, text, ctx.now, "" if auto else ctx.comment, auto=auto)
    outcome = played.outcome
    if outcome is None:
        return played
    return ratings.finish(ctx, played, list(outcome.winners), list(outcome.scores) if outcome.scores else None, outcome.reason)


def play_queued(ctx: Context, board: Board) -> tuple[Board, list[Reply]]:
    """Play the queued moves of the players whose turn it now is, as long as
    there are any; an illegal one is dropped with a mail to its owner."""
    dropped: list[Reply] = []
    waiting = {row.seat: row for row in records.queued_moves(ctx.connection, board.record.id)}
    while board.record.result is None and waiting:
        ready = sorted(set(waiting) & set(board.game.to_move(board.state)))
        if not ready:
            break
        queued = waiting.pop(ready[0])
        records.unqueue(ctx.connection, queued.id)
        try:
            board = play(ctx, board, queued.seat, queued.text, auto=True)
        except IllegalMove as error:
            dropped.append(_dropped_mail(ctx, board, queued, error.message))
    return board, dropped


def _dropped_mail(ctx: Context, board: Board, queued: QueuedRecord, reason: str) -> Reply:
    game, record = board.game, board.record
    userid = record.seats[queued.seat]
    body = (
        views.wrap(
            f"Your queued move '{queued.text}' on {game.title} board {record.board} was not played: {reason} "
            f"It is your turn now; send your move with '{game.name} move {record.board} {userid} password move'.",
            hang="",
        )
        + "\n\n" + views.position(game, record, board.state, queued.seat) + "\n"
    )
    return Reply(ctx.addresses([userid]).get(userid, ()), f"{game.title} Board {record.board} queue {userid} dropped", body, Kind.BOARD)


def end_by_resignation(ctx: Context, board: Board, seat: int, reason: str, commenter: str = "", move: str = "resign") -> list[Reply]:
    """`seat` loses the board by `move` (a server move: resign, forfeit); the board is saved and mailed."""
    resigned = board.server_move(seat, move, ctx.now, ctx.comment)
    winners = [s for s in range(len(board.record.seats)) if s != seat]
    saved = save(ctx.connection, ratings.finish(ctx, resigned, winners, None, reason))
    return mails_to_players(ctx, saved, commenter=commenter)
