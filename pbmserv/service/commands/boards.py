"""Game commands that change a board: challenge, move, resign, each a
command's changes to a `board.Board` saved once, then mailed."""

from __future__ import annotations

from pbmserv.gamekit import Game, IllegalMove, InvalidOption
from pbmserv.protocol import GAME_VERBS
from pbmserv.protocol.commands import Challenge, Credential, Move, Resign
from pbmserv.service.bots import seats as bots
from pbmserv.service.commands import policies
from pbmserv.service.commands.handling import handles
from pbmserv.service.play import subscriptions, views
from pbmserv.service.play.board import Board, check_running, create, load, playing_seat, save
from pbmserv.service.play.board_mails import mails_to_players
from pbmserv.service.play.playing import end_by_resignation, play, play_queued
from pbmserv.service.processing.context import Context, Reply
from pbmserv.service.processing.errors import ServiceError, UnconfirmedUser
from pbmserv.service.processing.rates import HOUR
from pbmserv.store import records
from pbmserv.store.records import Account

FIRST_BOARD = 101
#: the rate event of a new board, by each player it names
CHALLENGED = "challenged"


def syntax(game: str, verb: str) -> str:
    return GAME_VERBS[verb].syntax_for(game)


# -- board mails --------------------------------------------------------------






# -- challenge ---------------------------------------------------------------
@handles(Challenge)
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
    board = start_board(ctx, game, users, dict(given), dict(command.timers), usage)
    return mails_to_players(ctx, board, first=True, commenter=_challenger(ctx, players))


def start_board(
    ctx: Context, game: Game, users: list[Account], options: dict[str, str | None], timers: dict[str, int], usage: str,
) -> Board:
    """A new board of `users` in this seat order, with the options given
    (the game's defaults for the rest) and the server's timers where none
    is given; counted against what the players seek. The callers have
    checked that the players may play it."""
    players = [user.userid for user in users]
    try:
        state = game.new(options, players)
    except InvalidOption as error:
        raise ServiceError(error.message, f"{usage}; '{game.name} help' lists the options", game=game.name) from None
    newest = records.newest_board_number(ctx.connection, game.name)
    timers = {"nagtime": ctx.settings.nagtime, "forfeittime": ctx.settings.forfeittime, **timers}
    board = create(ctx.connection, game, (newest or FIRST_BOARD - 1) + 1, options, timers, players, state, ctx.now)
    subscriptions.subscribe_followers(ctx, board.record)
    policies.game_started(ctx, game, users)
    return board


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
    `challenges_per_hour` new boards an hour. Boards against a bot are not
    counted: how many of them a player has at once is bounded apart
    (`bots.seats.most_boards`), and a player may start the next as soon as
    one ends."""
    if any(bots.is_bot(userid) for userid in players):
        return
    most = ctx.settings.challenges_per_hour
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


@handles(Move)
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


@handles(Resign)
def resign(ctx: Context, game: Game, command: Resign) -> list[Reply]:
    user, board, seat = player_on_running_board(ctx, game, command.userid, command.password, command.board, command.guard)
    return end_by_resignation(ctx, board, seat, f"{user.userid} resigned", commenter=user.userid)


