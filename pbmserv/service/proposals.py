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
from pbmserv.service import boards, views
from pbmserv.service.context import Context, Reply
from pbmserv.service.errors import ServiceError
from pbmserv.service.policies import counted
from pbmserv.store import records
from pbmserv.store.records import BoardRecord

KINDS = {"propose": "draw", "undo": "undo"}
DRAW_REASON = "the players agreed to a draw"
#: draw offers and undo requests one player may make on a board per hour;
#: each is a board mail to every player (the rate event's key: board and seat)
PROPOSALS_PER_HOUR = 5
PROPOSED = "proposal"


def proposal(ctx: Context, game: Game, command: Proposal) -> list[Reply]:
    user, board, seat, _ = boards.player_on_running_board(
        ctx, game, command.userid, command.password, command.board, command.guard
    )
    if command.action in KINDS:
        lead = _open(ctx, game, board, seat, KINDS[command.action])
    elif command.action == "accept":
        lead = _accept(ctx, game, board, seat)
    else:
        lead = _reject(game, board, seat)
    records.save_board(ctx.connection, board)
    return boards.mails_to_players(
        ctx, game, board, game.decode(board.state), lead=views.wrap(lead, hang=""), commenter=user.userid,
    )


def _error(game: Game, board: BoardRecord, message: str, hint: str) -> ServiceError:
    return ServiceError(message, hint, game=game.name, board=board.board)


def _answer_hint(game: Game, board: BoardRecord) -> str:
    return f"'{game.name} move {board.board} userid password accept' (or reject) answers it"


def _open(ctx: Context, game: Game, board: BoardRecord, seat: int, kind: str) -> str:
    if board.proposal is not None:
        raise _error(game, board, f"{views.whose_proposal(board.proposal, board)} is still open on board {board.board}.", _answer_hint(game, board))
    proposal: dict[str, Any] = {"kind": kind, "by": seat, "accepted": [seat]}
    if kind == "undo":
        own = [move.number for move in records.board_moves(ctx.connection, board.id) if move.seat == seat]
        if not own:
            raise _error(game, board, f"You have made no move on board {board.board} to take back.", "make a move instead")
        proposal["from"] = own[-1]
    if not ctx.rates.take(PROPOSED, f"{board.id} {seat}", ctx.now, PROPOSALS_PER_HOUR):
        raise _error(
            game, board, f"You have made {PROPOSALS_PER_HOUR} offers and requests on board {board.board} in the last hour, "
            "the most the server passes on.", "make a move, or offer again in an hour",
        )
    board.proposal = proposal
    board.updated_at = ctx.now
    return f"{views.whose_proposal(proposal, board)}: {_what_it_does(proposal, board)} {_answer_hint(game, board)}."


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


def _accept(ctx: Context, game: Game, board: BoardRecord, seat: int) -> str:
    proposal = _open_proposal(game, board)
    if seat in proposal["accepted"]:
        raise _error(game, board, f"You have agreed to {views.whose_proposal(proposal, board)} already.", "wait for the other players' answers")
    accepted = [*proposal["accepted"], seat]
    waiting = [board.seats[s] for s in range(len(board.seats)) if s not in accepted]
    if waiting:
        board.proposal = {**proposal, "accepted": accepted}
        return f"{board.seats[seat]} accepts {views.whose_proposal(proposal, board)}; waiting for {views.names_and(waiting)}."
    board.proposal = None
    if proposal["kind"] == "draw":
        boards.finish(ctx, board, [], None, DRAW_REASON)
        return f"{views.whose_proposal(proposal, board)} is accepted by every player."
    return _take_back(ctx, game, board, proposal)


def _take_back(ctx: Context, game: Game, board: BoardRecord, proposal: dict[str, Any]) -> str:
    """Undo the proposer's last move and every move after it: the state is
    the replay of the moves before them."""
    moves = records.board_moves(ctx.connection, board.id)
    first = proposal.get("from", board.move_count)
    kept = [move for move in moves if move.number < first]
    state = boards.replay(game, board, kept)
    lead = f"{views.whose_proposal(proposal, board)} is accepted by every player: {_moves_taken_back(proposal, board)} taken back."
    for move in reversed(moves[len(kept):]):
        records.remove_move(ctx.connection, board.id, move.number)
    board.move_count = len(kept)
    board.state = game.encode(state)
    board.updated_at = ctx.now
    return lead


def _open_proposal(game: Game, board: BoardRecord) -> dict[str, Any]:
    if board.proposal is None:
        raise _error(
            game, board, f"Nothing is proposed on board {board.board}, so there is nothing to accept or reject.",
            f"'{game.name} move {board.board} userid password propose' offers a draw, '... undo' asks to take back your last move",
        )
    return board.proposal


def _reject(game: Game, board: BoardRecord, seat: int) -> str:
    proposal = _open_proposal(game, board)
    board.proposal = None
    if seat == proposal["by"]:
        return f"{board.seats[seat]} withdraws the {views.proposal_noun(proposal)}."
    return f"{board.seats[seat]} rejects {views.whose_proposal(proposal, board)}."


def draw_at_forfeit(ctx: Context, game: Game, board: BoardRecord, seat: int, days: int) -> list[Reply]:
    """A late player's silence accepts another player's open draw offer at the
    forfeit age: the board ends drawn instead of forfeited. No mails if there is none."""
    proposal = board.proposal
    if proposal is None or proposal["kind"] != "draw" or proposal["by"] == seat:
        return []
    reason = f"{board.seats[seat]} did not answer {views.whose_proposal(proposal, board)} in {counted(days, 'day')}"
    boards.finish(ctx, board, [], None, reason)
    records.save_board(ctx.connection, board)
    return boards.mails_to_players(ctx, game, board, game.decode(board.state))
