"""Game commands that change a board: challenge, move, resign, each a
command's changes to a `board.Board` saved once; and the board mails that
every change of a board sends."""

from __future__ import annotations

from typing import Any

from pbmserv.gamekit import Game, IllegalMove, InvalidOption
from pbmserv.protocol import GAME_VERBS
from pbmserv.protocol.commands import (
    Challenge,
    Credential,
    Move,
    Resign,
)
from pbmserv.service import bots, policies, ratings, reply_addresses, subscriptions, views
from pbmserv.service.board import Board, check_running, create, load, playing_seat, save
from pbmserv.service.context import Context, Reply
from pbmserv.service.errors import ServiceError, UnconfirmedUser
from pbmserv.service.rates import HOUR
from pbmserv.store import records
from pbmserv.store.records import Account, BoardRecord, QueuedRecord
from pbmserv.store.states import Kind

FIRST_BOARD = 101
#: the rate event of a new board, by each player it names
CHALLENGED = "challenged"


def syntax(game: str, verb: str) -> str:
    return GAME_VERBS[verb].syntax_for(game)


# -- board mails --------------------------------------------------------------
def moves_to_list(ctx: Context, board: BoardRecord) -> list[Any]:
    """The moves an ordinary board mail lists: the last few while the game
    runs, all once it is over (as many as a move list shows), without
    loading a long game's whole history."""
    most = views.MOST_LISTED_MOVES if board.result is not None else ctx.settings.recent_moves
    return records.recent_moves(ctx.connection, board.id, board.move_count, most)


def mails_to_players(
    ctx: Context, saved: Board, *, subject_prefix: str = "", lead: str = "", commenter: str = "",
) -> list[Reply]:
    """The board mail to every player, each seeing the board from their own side,
    and the public view to the subscribers it is for; the sender gets the
    public view (without the comment) if they are none of these. The board
    is saved: its move list is read from the store."""
    game, board, state = saved.game, saved.record, saved.state
    moves = moves_to_list(ctx, board)
    board_subscriptions = subscriptions.board_subscriptions(ctx, board)
    watchers = subscriptions.watchers(board, board_subscriptions)
    addresses = ctx.addresses([*board.seats, *watchers])
    subject = views.subject(game, board, state, subject_prefix)

    secret_moves = any(move.secret for move in moves)  # the move list shows each player their own
    texts: dict[tuple[int | None, str], str] = {}

    def text(viewer: int | None, comment: str = ctx.comment) -> str:
        """The mail for `viewer`, made once for all who see the same board."""
        key = (viewer if secret_moves else game.viewpoint(state, viewer), comment)
        if key not in texts:
            texts[key] = views.board_mail(
                game, board, moves, state, key[0], recent=ctx.settings.recent_moves, comment=comment,
                commenter=commenter, lead=lead, subscribers=subscriptions.listed_names(board_subscriptions),
            )
        return texts[key]

    replies = []
    reached: set[str] = set()
    for seat, userid in enumerate(board.seats):
        recipients = addresses.get(userid, ())
        if recipients:
            reached.update(recipients)
            body = text(seat)
            if board.result is None and seat in game.to_move(state):
                body += "\n" + views.command_to_paste(game, board, state, seat)
            replies.append(Reply(recipients, subject, body, Kind.BOARD, reply_address_of(ctx, game, board, seat)))
    recipients = tuple(address for userid in watchers for address in addresses[userid])
    if recipients:
        reached.update(recipients)
        replies.append(Reply(recipients, subject, text(None), Kind.BOARD))
    if ctx.sender and ctx.sender not in reached:  # a third party's command: an answer to the sender
        replies.append(Reply((ctx.sender,), subject, text(None, comment=""), Kind.ANSWER))
    return replies


def reply_address_of(ctx: Context, game: Game, board: BoardRecord, seat: int) -> str:
    """The reply address of the player in `seat` on the board: theirs alone (`service.reply_addresses`)."""
    account = ctx.known_user(board.seats[seat])
    return reply_addresses.seat_address(ctx.key, ctx.settings.address, game.name, board.board, seat, account)


# -- challenge ---------------------------------------------------------------
def challenge(ctx: Context, game: Game, command: Challenge) -> list[Reply]:
    usage = syntax(game.name, "challenge")
    players, given = bots.seat_bots(ctx, game, list(command.userids), command.options, usage)
    # `-boards upper alice bob`: a valued option given none made its value
    # a player; say how to write it rather than count the players
    for name, value in given:
        option = next((o for o in game.options if o.name == name), None)
        if value is not None or option is None or isinstance(option.default, bool):
            continue
        allowed = {str(v).lower() for v in option.allowed}
        word = next((userid for userid in players if userid.lower() in allowed), None)
        if word is not None:
            raise ServiceError(
                f"'-{name} {word}' reads {word} as a player: write -{name}={word}, one word.", usage, game=game.name,
            )
        raise ServiceError(f"-{name} needs its value after '=': {option.syntax()}.", usage, game=game.name)
    if not game.min_players <= len(players) <= game.max_players:
        count = (
            f"{game.min_players}" if game.min_players == game.max_players
            else f"{game.min_players} to {game.max_players}"
        )
        raise ServiceError(f"{game.title} is played by {count} players, but the challenge names {len(players)}.", usage, game=game.name)
    if len(set(players)) != len(players):
        raise ServiceError("A challenge must name different players.", usage, game=game.name)
    users = [ctx.known_user(userid, "every player must have signed up before a challenge names them") for userid in players]
    for user in users:
        if user.disabled_at is not None:
            raise ServiceError(
                f"The account '{user.userid}' has been disabled by the operator of this server; a challenge may not name it.",
                usage, game=game.name,
            )
    _check_confirmed(ctx, game, players, usage)
    policies.check_challenge(ctx, game, users)
    _count_challenge(ctx, game, players)
    options = {name: value for name, value in given}
    try:
        state = game.new(options, players)
    except InvalidOption as error:
        raise ServiceError(error.message, f"{usage}; '{game.name} help' lists the options", game=game.name) from None
    newest = records.newest_board_number(ctx.connection, game.name)
    timers = {"nagtime": ctx.settings.nagtime, "forfeittime": ctx.settings.forfeittime, **dict(command.timers)}
    board = create(ctx.connection, game, (newest or FIRST_BOARD - 1) + 1, options, timers, players, state, ctx.now)
    subscriptions.subscribe_followers(ctx, board.record)
    policies.game_started(ctx, game, users)
    return mails_to_players(ctx, board, subject_prefix="New ", commenter=_challenger(ctx, players))


def _check_confirmed(ctx: Context, game: Game, players: list[str], usage: str) -> None:
    """Only an account that has shown it reads its mail may be named: else
    a signup forged in someone's name would send them every board mail."""
    addresses = ctx.addresses([userid for userid in players if not bots.is_bot(userid)])
    for userid, confirmed in addresses.items():
        if not confirmed:
            raise UnconfirmedUser(
                f"{userid} has not confirmed an address yet, so no challenge may name them.",
                f"{userid} confirms by replying to the welcome mail of their signup; then challenge again: {usage}",
                game=game.name,
            )


def _challenger(ctx: Context, players: list[str]) -> str:
    """Who a challenge's comment is from: the named player whose address
    sent it, else the sending address (a challenge needs no password)."""
    addresses = ctx.addresses(players)
    return next((userid for userid in players if ctx.sender in addresses.get(userid, ())), ctx.sender)


def _count_challenge(ctx: Context, game: Game, players: list[str]) -> None:
    """A challenge needs no password, so anybody could start boards, and
    their mails, for any player: a player may be named in at most
    `challenges_per_hour` new boards an hour."""
    most = ctx.settings.challenges_per_hour
    players = [userid for userid in players if not bots.is_bot(userid)]  # anybody may play a bot at any time
    for userid in players:
        if ctx.rates.count(CHALLENGED, userid, ctx.now - HOUR) >= most:
            raise ServiceError(
                f"{userid} has been named in {most} new boards in the last hour, the most the server allows.",
                "send the challenge again in an hour",
                game=game.name,
            )
    for userid in players:
        ctx.rates.add(CHALLENGED, userid, ctx.now)


# -- moves -------------------------------------------------------------------
def check_guard(board: Board, guard: int | None) -> None:
    record = board.record
    if guard is not None and guard != record.move_count + 1:
        raise ServiceError(
            f"The guard #{guard} does not match: the next move on board {record.board} is move {record.move_count + 1}.",
            "the board may have changed since your mail was written; look at it again and resend with the right #n, or without #n",
            game=board.game.name, board=record.board,
        )


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


def player_on_running_board(
    ctx: Context, game: Game, userid: str, password: Credential, number: int, guard: int | None = None,
) -> tuple[Account, Board, int]:
    """The authenticated player, their board (locked, still running, at the
    guarded move number) and their seat on it."""
    user = ctx.authenticate(userid, password)
    board = load(ctx.connection, game, number, lock=True)
    seat = playing_seat(board, user.userid)
    check_running(board)
    check_guard(board, guard)
    return user, board, seat


def move(ctx: Context, game: Game, command: Move) -> list[Reply]:
    user, board, seat = player_on_running_board(ctx, game, command.userid, command.password, command.board, command.guard)
    record = board.record
    if seat not in game.to_move(board.state):
        waiting = views.names_and(views.to_move_names(game, record, board.state))
        raise ServiceError(
            f"It is not your turn on {game.title} board {record.board}: {waiting} is to move.",
            "wait for the board mail that says it is your turn",
            game=game.name, board=record.board,
        )
    lapsing = record.proposal
    try:
        played = play(ctx, board, seat, command.move)
    except IllegalMove as error:
        raise ServiceError(
            error.message,
            f"{syntax(game.name, 'move')}; '{game.name} help' explains the moves",
            game=game.name, board=record.board, board_text=views.position(game, record, board.state, seat),
        ) from None
    played, dropped = play_queued(ctx, played)
    saved = save(ctx.connection, played)
    lead = views.wrap(f"{views.whose_proposal(lapsing, record)} lapses with this move.", hang="") if lapsing else ""
    return dropped + mails_to_players(ctx, saved, lead=lead, commenter=user.userid)


def resign(ctx: Context, game: Game, command: Resign) -> list[Reply]:
    user, board, seat = player_on_running_board(ctx, game, command.userid, command.password, command.board, command.guard)
    return end_by_resignation(ctx, board, seat, f"{user.userid} resigned", commenter=user.userid)


def end_by_resignation(ctx: Context, board: Board, seat: int, reason: str, commenter: str = "", move: str = "resign") -> list[Reply]:
    """`seat` loses the board by `move` (a server move: resign, forfeit); the board is saved and mailed."""
    resigned = board.server_move(seat, move, ctx.now, ctx.comment)
    winners = [s for s in range(len(board.record.seats)) if s != seat]
    saved = save(ctx.connection, ratings.finish(ctx, resigned, winners, None, reason))
    return mails_to_players(ctx, saved, commenter=commenter)
