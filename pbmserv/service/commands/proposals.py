"""Draw offers and undo requests: `move ... propose|undo|accept|reject`.

One proposal is open per board (`boards.proposal`); it takes effect when
every other player has accepted it, `reject` clears it, and any move lets
it lapse (the board mail of that move says so). An undo request takes
back the proposer's own last move and every move made after it: against
an opponent who answers at once (a bot, a queued move) the last move is
seldom the proposer's own."""

from __future__ import annotations

from typing import Any

from pbmserv.gamekit import Game
from pbmserv.protocol.commands import Proposal
from pbmserv.service.commands import boards
from pbmserv.service.commands.handling import handles
from pbmserv.service.commands.policies import counted
from pbmserv.service.play import board_mails, ratings, views
from pbmserv.service.play.board import Board, replay, save
from pbmserv.service.processing.context import Context, Reply
from pbmserv.service.processing.errors import ServiceError
from pbmserv.store import records
from pbmserv.store.records import BoardRecord

KINDS = {"propose": "draw", "undo": "undo"}
DRAW_REASON = "the players agreed to a draw"
#: draw offers and undo requests one player may make on a board per hour;
#: each is a board mail to every player (the rate event's key: board and seat)
PROPOSALS_PER_HOUR = 5
PROPOSED = "proposal"


@handles(Proposal)
def proposal(ctx: Context, game: Game, command: Proposal) -> list[Reply]:
    user, board, seat = boards.player_on_running_board(ctx, game, command.userid, command.password, command.board, command.guard)
    if command.action in KINDS:
        board, lead = _open(ctx, board, seat, KINDS[command.action])
    elif command.action == "accept":
        board, lead = _accept(ctx, board, seat)
    else:
        board, lead = _reject(board, seat)
    saved = save(ctx.connection, board)
    return board_mails.mails_to_players(ctx, saved, lead=views.wrap(lead, hang=""), commenter=user.userid)


def _error(board: Board, message: str, hint: str) -> ServiceError:
    return ServiceError(message, hint, game=board.game.name, board=board.record.board)


def _answer_hint(board: Board) -> str:
    return f"'{board.game.name} move {board.record.board} userid password accept' (or reject) answers it"


def _open(ctx: Context, board: Board, seat: int, kind: str) -> tuple[Board, str]:
    record = board.record
    if record.proposal is not None:
        raise _error(board, f"{views.whose_proposal(record.proposal, record)} is still open on board {record.board}.", _answer_hint(board))
    if kind == "draw" and not board.game.draws:
        raise _error(
            board, f"{board.game.title} has no draws: every game ends with a winner, so there is no draw to offer.",
            f"play on, or give up with '{board.game.name} move {record.board} userid password resign'; "
            "'... undo' asks to take back your last move",
        )
    proposal: dict[str, Any] = {"kind": kind, "by": seat, "accepted": [seat]}
    if kind == "undo":
        own = [move.number for move in records.board_moves(ctx.connection, record.id) if move.seat == seat]
        if not own:
            raise _error(board, f"You have made no move on board {record.board} to take back.", "make a move instead")
        proposal["from"] = own[-1]
    if not ctx.rates.take(PROPOSED, f"{record.id} {seat}", ctx.now, PROPOSALS_PER_HOUR):
        raise _error(
            board, f"You have made {PROPOSALS_PER_HOUR} offers and requests on board {record.board} in the last hour, "
            "the most the server passes on.", "make a move, or offer again in an hour",
        )
    lead = f"{views.whose_proposal(proposal, record)}: {_what_it_does(proposal, record)} {_answer_hint(board)}."
    return board.propose(proposal, ctx.now), lead


def _what_it_does(proposal: dict[str, Any], board: BoardRecord) -> str:
    if proposal["kind"] == "draw":
        return "the game ends drawn if every other player accepts;"
    return f"{_moves_taken_back(proposal, board)} taken back if every other player accepts;"


def _moves_taken_back(proposal: dict[str, Any], board: BoardRecord) -> str:
    """ "move 7 is" / "moves 7 and 8 are" / "moves 5 to 8 are" """
    first, last = proposal.get("from", board.move_count), board.move_count
    if first == last:
        return f"move {last} is"
    return f"moves {first} {'and' if last == first + 1 else 'to'} {last} are"


def _accept(ctx: Context, board: Board, seat: int) -> tuple[Board, str]:
    record = board.record
    proposal = _open_proposal(board)
    if seat in proposal["accepted"]:
        raise _error(board, f"You have agreed to {views.whose_proposal(proposal, record)} already.", "wait for the other players' answers")
    accepted = [*proposal["accepted"], seat]
    waiting = [record.seats[s] for s in range(len(record.seats)) if s not in accepted]
    if waiting:
        lead = f"{record.seats[seat]} accepts {views.whose_proposal(proposal, record)}; waiting for {views.names_and(waiting)}."
        return board.with_proposal({**proposal, "accepted": accepted}), lead
    board = board.with_proposal(None)
    if proposal["kind"] == "draw":
        return ratings.finish(ctx, board, [], None, DRAW_REASON), f"{views.whose_proposal(proposal, record)} is accepted by every player."
    return _take_back(ctx, board, proposal)


def _take_back(ctx: Context, board: Board, proposal: dict[str, Any]) -> tuple[Board, str]:
    """Undo the proposer's last move and every move after it: the state is
    the replay of the moves before them."""
    record = board.record
    first = proposal.get("from", record.move_count)
    kept = records.board_moves(ctx.connection, record.id, first - 1)
    state = replay(board.game, record, kept)
    lead = f"{views.whose_proposal(proposal, record)} is accepted by every player: {_moves_taken_back(proposal, record)} taken back."
    return board.take_back(first, state, ctx.now), lead


def _open_proposal(board: Board) -> dict[str, Any]:
    record = board.record
    if record.proposal is None:
        raise _error(
            board, f"Nothing is proposed on board {record.board}, so there is nothing to accept or reject.",
            _proposing_hint(board),
        )
    return record.proposal


def _proposing_hint(board: Board) -> str:
    prefix = f"'{board.game.name} move {board.record.board} userid password"
    if board.game.draws:
        return f"{prefix} propose' offers a draw, '... undo' asks to take back your last move"
    return f"{prefix} undo' asks to take back your last move"


def _reject(board: Board, seat: int) -> tuple[Board, str]:
    record = board.record
    proposal = _open_proposal(board)
    if seat == proposal["by"]:
        lead = f"{record.seats[seat]} withdraws the {views.proposal_noun(proposal)}."
    else:
        lead = f"{record.seats[seat]} rejects {views.whose_proposal(proposal, record)}."
    return board.with_proposal(None), lead


def drawn_at_forfeit(ctx: Context, board: Board, seat: int, days: int) -> Board | None:
    """A late player's silence accepts another player's open draw offer at the
    forfeit age: the board ends drawn instead of forfeited. None if there is no such offer."""
    record = board.record
    proposal = record.proposal
    if proposal is None or proposal["kind"] != "draw" or proposal["by"] == seat:
        return None
    reason = f"{record.seats[seat]} did not answer {views.whose_proposal(proposal, record)} in {counted(days, 'day')}"
    return ratings.finish(ctx, board, [], None, reason)
