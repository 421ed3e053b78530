"""Game commands that change a board: challenge, move, resign; and what they share with the commands that show one."""

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
from pbmserv.service import bots, policies, ratings, replays, reply_addresses, subscriptions, views
from pbmserv.service.context import Context, Reply
from pbmserv.service.errors import ServiceError, UnconfirmedUser
from pbmserv.service.rates import HOUR
from pbmserv.store import records
from pbmserv.store.records import Account, BoardRecord
from pbmserv.store.states import Kind

FIRST_BOARD = 101
#: the rate event of a new board, by each player it names
CHALLENGED = "challenged"


def syntax(game: str, verb: str) -> str:
    return GAME_VERBS[verb].syntax_for(game)


# -- loading -----------------------------------------------------------------
def load_board(ctx: Context, game: Game, number: int, *, lock: bool = False) -> BoardRecord:
    board = records.find_board(ctx.connection, game.name, number, lock=lock)
    if board is None:
        raise ServiceError(
            f"There is no {game.title} board {number}.",
            f"'{game.name} games' lists the boards in play",
            game=game.name,
        )
    return board


def replay(game: Game, board: BoardRecord, moves: list[records.MoveRecord]) -> Any:
    """The state after `moves` (the board's first moves), from the latest state kept on the way (`replays`)."""
    return replays.replay(game, board, [(move.seat, move.text) for move in moves])


def position(ctx: Context, game: Game, board: BoardRecord, at: int | None) -> tuple[Any, list[records.MoveRecord]]:
    """The state after move `at` (as it stands when None) and the moves that led there."""
    moves = records.board_moves(ctx.connection, board.id, at)
    if at is None or at == board.move_count:
        return game.decode(board.state), moves
    return replay(game, board, moves), moves


def listed_position(ctx: Context, game: Game, board: BoardRecord, at: int | None) -> tuple[Any, list[records.MoveRecord]]:
    """The state after move `at` (as it stands when None) and the last of
    the moves that led there, as many as a move list shows: a long game's
    whole history is not loaded to be left out (a replay reads only who
    played what)."""
    if at is None or at == board.move_count:
        state = game.decode(board.state)
        at = board.move_count
    else:
        state = replays.replay(game, board, records.played_moves(ctx.connection, board.id, at))
    return state, records.recent_moves(ctx.connection, board.id, at, views.MOST_LISTED_MOVES)


def moves_to_list(ctx: Context, board: BoardRecord) -> list[Any]:
    """The moves an ordinary board mail lists: the last few while the game
    runs, all once it is over (as many as a move list shows), without
    loading a long game's whole history."""
    most = views.MOST_LISTED_MOVES if board.result is not None else ctx.settings.recent_moves
    return records.recent_moves(ctx.connection, board.id, board.move_count, most)


def mails_to_players(
    ctx: Context, game: Game, board: BoardRecord, state: Any, *, subject_prefix: str = "", lead: str = "",
    commenter: str = "",
) -> list[Reply]:
    """The board mail to every player, each seeing the board from their own side,
    and the public view to the subscribers it is for; the sender gets the
    public view (without the comment) if they are none of these."""
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
    board = records.insert_board(
        ctx.connection,
        game_type=game.name,
        board=(newest or FIRST_BOARD - 1) + 1,
        options=options,
        timers={"nagtime": ctx.settings.nagtime, "forfeittime": ctx.settings.forfeittime, **dict(command.timers)},
        seats=players,
        state=game.encode(state),
        move_count=0,
        status="active",
        result=None,
        created_at=ctx.now,
        updated_at=ctx.now,
    )
    subscriptions.subscribe_followers(ctx, board)
    policies.game_started(ctx, game, users)
    return mails_to_players(ctx, game, board, state, subject_prefix="New ", commenter=_challenger(ctx, players))


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
def playing_seat(ctx: Context, game: Game, board: BoardRecord, userid: str) -> int:
    if userid not in board.seats:
        raise ServiceError(
            f"{userid} is not a player on {game.title} board {board.board}.",
            f"'{game.name} show {board.board}' shows who plays there",
            game=game.name, board=board.board,
        )
    return board.seats.index(userid)


def check_running(game: Game, board: BoardRecord, state: Any) -> None:
    if board.result is not None:
        raise ServiceError(
            f"{game.title} board {board.board} is over. {views.status_line(game, board, state)}",
            f"start a new game with '{game.name} challenge'",
            game=game.name, board=board.board,
        )


def check_guard(game: Game, board: BoardRecord, guard: int | None) -> None:
    if guard is not None and guard != board.move_count + 1:
        raise ServiceError(
            f"The guard #{guard} does not match: the next move on board {board.board} is move {board.move_count + 1}.",
            "the board may have changed since your mail was written; look at it again and resend with the right #n, or without #n",
            game=game.name, board=board.board,
        )


def _record(ctx: Context, board: BoardRecord, seat: int, text: str, secret: bool, *, auto: bool = False) -> None:
    records.record_move(
        ctx.connection, board_id=board.id, number=board.move_count + 1, seat=seat, text=text, secret=secret,
        created_at=ctx.now, comment="" if auto else ctx.comment, auto=auto,
    )
    board.move_count += 1
    board.updated_at = ctx.now
    board.proposal = None  # an open draw offer or undo request lapses with any move


def _play(ctx: Context, game: Game, board: BoardRecord, state: Any, seat: int, text: str, *, auto: bool = False) -> Any:
    """Play and record one move of the game, read once into the game's own
    value; raises IllegalMove and then changes nothing."""
    move = game.read_move(state, seat, text)
    new_state = game.apply(state, seat, move)
    _record(ctx, board, seat, str(move), move.secret, auto=auto)
    board.state = game.encode(new_state)
    outcome = game.outcome(new_state)
    if outcome is not None:
        finish(ctx, board, list(outcome.winners), list(outcome.scores) if outcome.scores else None, outcome.reason)
    return new_state


def play_queued(ctx: Context, game: Game, board: BoardRecord, state: Any) -> tuple[Any, list[Reply]]:
    """Play the queued moves of the players whose turn it now is, as long as
    there are any; an illegal one is dropped with a mail to its owner."""
    dropped: list[Reply] = []
    waiting = {row.seat: row for row in records.queued_moves(ctx.connection, board.id)}
    if not waiting:
        return state, dropped
    played = False
    while board.result is None and waiting:
        ready = sorted(set(waiting) & set(game.to_move(state)))
        if not ready:
            break
        queued = waiting.pop(ready[0])
        records.unqueue(ctx.connection, queued.id)
        try:
            state = _play(ctx, game, board, state, queued.seat, queued.text, auto=True)
            played = True
        except IllegalMove as error:
            dropped.append(_dropped_mail(ctx, game, board, state, queued, error.message))
    if played:  # the board is written already when no queued move went on it
        records.save_board(ctx.connection, board)
    return state, dropped


def _dropped_mail(ctx: Context, game: Game, board: BoardRecord, state: Any, queued: Any, reason: str) -> Reply:
    userid = board.seats[queued.seat]
    body = (
        views.wrap(
            f"Your queued move '{queued.text}' on {game.title} board {board.board} was not played: {reason} "
            f"It is your turn now; send your move with '{game.name} move {board.board} {userid} password move'.",
            hang="",
        )
        + "\n\n" + views.position(game, board, state, queued.seat) + "\n"
    )
    return Reply(ctx.addresses([userid]).get(userid, ()), f"{game.title} Board {board.board} queue {userid} dropped", body, Kind.BOARD)


def player_on_running_board(
    ctx: Context, game: Game, userid: str, password: Credential, number: int, guard: int | None = None,
) -> tuple[Account, BoardRecord, int, Any]:
    """The authenticated player, their board (locked, still running, at the
    guarded move number), their seat on it and its state."""
    user = ctx.authenticate(userid, password)
    board = load_board(ctx, game, number, lock=True)
    seat = playing_seat(ctx, game, board, user.userid)
    state = game.decode(board.state)
    check_running(game, board, state)
    check_guard(game, board, guard)
    return user, board, seat, state


def move(ctx: Context, game: Game, command: Move) -> list[Reply]:
    user, board, seat, state = player_on_running_board(
        ctx, game, command.userid, command.password, command.board, command.guard
    )
    if seat not in game.to_move(state):
        waiting = views.names_and(views.to_move_names(game, board, state))
        raise ServiceError(
            f"It is not your turn on {game.title} board {board.board}: {waiting} is to move.",
            "wait for the board mail that says it is your turn",
            game=game.name, board=board.board,
        )
    lapsing = board.proposal
    try:
        new_state = _play(ctx, game, board, state, seat, command.move)
    except IllegalMove as error:
        raise ServiceError(
            error.message,
            f"{syntax(game.name, 'move')}; '{game.name} help' explains the moves",
            game=game.name, board=board.board, board_text=views.position(game, board, state, seat),
        ) from None
    records.save_board(ctx.connection, board)
    new_state, dropped = play_queued(ctx, game, board, new_state)
    lead = views.wrap(f"{views.whose_proposal(lapsing, board)} lapses with this move.", hang="") if lapsing else ""
    return dropped + mails_to_players(ctx, game, board, new_state, lead=lead, commenter=user.userid)


def resign(ctx: Context, game: Game, command: Resign) -> list[Reply]:
    user, board, seat, _ = player_on_running_board(
        ctx, game, command.userid, command.password, command.board, command.guard
    )
    return end_by_resignation(ctx, game, board, seat, f"{user.userid} resigned", commenter=user.userid)


def end_by_resignation(
    ctx: Context, game: Game, board: BoardRecord, seat: int, reason: str, commenter: str = "", move: str = "resign",
) -> list[Reply]:
    """`seat` loses the board by `move` (a server move: resign, forfeit)."""
    state = game.decode(board.state)
    _record(ctx, board, seat, move, False)
    finish(ctx, board, [s for s in range(len(board.seats)) if s != seat], None, reason)
    records.save_board(ctx.connection, board)
    return mails_to_players(ctx, game, board, state, commenter=commenter)


def finish(ctx: Context, board: BoardRecord, winners: list[int], scores: list[Any] | None, reason: str) -> None:
    """The board is over: keep its result, with the rating changes it caused
    (written with the board's other changes by `records.save_board`)."""
    board.status = "finished"
    board.proposal = None
    records.clear_queue(ctx.connection, board.id)
    board.result = {"winners": winners, "scores": scores, "reason": reason}
    unrated = ratings.unrated_because(ctx, board)
    if unrated is None:
        board.result["ratings"] = ratings.rate_board(ctx, board, winners)
    else:
        board.result["unrated"] = unrated


# -- queries -------------------------------------------------------------------
