"""Following and talking: subscribe, unsubscribe, notify, chat, message, broadcast."""

from __future__ import annotations

from dataclasses import replace

from pbmserv.gamekit import Game
from pbmserv.protocol.commands import Broadcast, Chat, Message, Notify, Subscribe, Unsubscribe
from pbmserv.service.commands import policies
from pbmserv.service.commands.boards import syntax
from pbmserv.service.commands.handling import handles
from pbmserv.service.play import board_mails, subscriptions, views
from pbmserv.service.play.board import load
from pbmserv.service.processing.context import Context, Reply
from pbmserv.service.processing.errors import ServiceError
from pbmserv.store import following, users
from pbmserv.store.records import Account
from pbmserv.store.states import Kind

#: the rate event of a chat, message or broadcast, by the account that sends it
RELAYED = "relay"


# -- subscriptions -------------------------------------------------------------
@handles(Subscribe)
def subscribe(ctx: Context, game: Game, command: Subscribe) -> list[Reply]:
    user = ctx.authenticate(command.userid, command.password)
    if command.board is None:
        return _follow_new_boards(ctx, game, user)
    return _watch(ctx, game, user, command.board, final_only=False)


@handles(Notify)
def notify(ctx: Context, game: Game, command: Notify) -> list[Reply]:
    user = ctx.authenticate(command.userid, command.password)
    return _watch(ctx, game, user, command.board, final_only=True)


def _follow_new_boards(ctx: Context, game: Game, user: Account) -> list[Reply]:
    policy = policies.policy_for(ctx, user, game.name)
    if policy.subscribes_new_boards:
        raise ServiceError(
            f"{user.userid} already subscribes to every new {game.title} board.",
            f"'{game.name} unsubscribe all {user.userid} password' ends it",
            game=game.name,
        )
    following.save_policy(ctx.connection, replace(policy, subscribes_new_boards=True))
    body = views.wrap(
        f"{user.userid} now gets every mail of each new {game.title} board, from the next challenge on "
        f"(not of boards {user.userid} plays: those come anyway). '{game.name} subscribe BOARD' adds a "
        f"board that is already running; '{game.name} unsubscribe all' ends it all.", hang="",
    )
    return [Reply((ctx.sender,), f"{game.title} subscribe all {user.userid}", body + "\n")]


def _watch(ctx: Context, game: Game, user: Account, number: int, *, final_only: bool) -> list[Reply]:
    """Subscribe `user` to the board: every mail, or only the final one."""
    verb = "notify" if final_only else "subscribe"
    loaded = load(ctx.connection, game, number)
    board = loaded.record
    if user.userid in board.seats:
        raise ServiceError(
            f"{user.userid} plays on {game.title} board {board.board} and gets its mails anyway.",
            f"'{verb}' is for boards you do not play on; '{game.name} show {board.board}' mails you this one",
            game=game.name, board=board.board,
        )
    if board.result is not None:
        raise ServiceError(
            f"{game.title} board {board.board} is over, so no more mail will come from it.",
            f"'{game.name} show {board.board}' mails you the final board",
            game=game.name, board=board.board,
        )
    found = following.find_subscription(ctx.connection, board.id, user.id)
    if found is not None and found.final_only == final_only:
        what = "the final result of" if final_only else "every mail of"
        raise ServiceError(
            f"{user.userid} already gets {what} {game.title} board {board.board}.",
            f"'{game.name} unsubscribe {board.board} {user.userid} password' ends it",
            game=game.name, board=board.board,
        )
    following.subscribe(ctx.connection, user.id, board.id, final_only=final_only, now=ctx.now)
    what = "only the final result of" if final_only else "every mail of"
    lead = f"({user.userid} now gets {what} this board.)"
    body = views.board_mail(
        game, board, board_mails.moves_to_list(ctx, board), loaded.state, None, recent=ctx.settings.recent_moves, lead=lead,
        subscribers=subscriptions.listed_names(subscriptions.board_subscriptions(ctx, board)),
        page=views.board_page(ctx.settings, game, board),
    )
    return [Reply((ctx.sender,), board_mails.subject(game, board), body, thread=board_mails.thread_of(game, board))]


@handles(Unsubscribe)
def unsubscribe(ctx: Context, game: Game, command: Unsubscribe) -> list[Reply]:
    user = ctx.authenticate(command.userid, command.password)
    if command.board is None:
        return _unsubscribe_all(ctx, game, user)
    board = load(ctx.connection, game, command.board).record
    found = following.find_subscription(ctx.connection, board.id, user.id)
    if found is None:
        raise ServiceError(
            f"{user.userid} does not subscribe to {game.title} board {board.board}.",
            f"'{game.name} unsubscribe all {user.userid} password' ends every {game.title} subscription",
            game=game.name, board=board.board,
        )
    following.unsubscribe(ctx.connection, [found.id])
    body = f"{user.userid} no longer gets the mails of {game.title} board {board.board}.\n"
    return [Reply((ctx.sender,), board_mails.subject(game, board), body, thread=board_mails.thread_of(game, board))]


def _unsubscribe_all(ctx: Context, game: Game, user: Account) -> list[Reply]:
    """Ends the subscription to new boards and every board subscription of the game type."""
    policy = policies.find_policy(ctx, user, game.name)
    follows_new = policy is not None and policy.subscribes_new_boards
    watched = following.subscriptions_in_game(ctx.connection, user.id, game.name)
    if not follows_new and not watched:
        raise ServiceError(
            f"{user.userid} subscribes to no {game.title} boards.",
            f"{syntax(game.name, 'subscribe')} starts a subscription",
            game=game.name,
        )
    if policy is not None and follows_new:
        following.save_policy(ctx.connection, replace(policy, subscribes_new_boards=False))
    following.unsubscribe(ctx.connection, [subscription.id for subscription in watched])
    boards = f"{len(watched)} board {'subscription' if len(watched) == 1 else 'subscriptions'}"
    body = views.wrap(
        f"{user.userid} no longer gets {game.title} boards: ended "
        + ("the subscription to new boards and " if follows_new else "")
        + f"{boards}.", hang="",
    )
    return [Reply((ctx.sender,), f"{game.title} unsubscribe all {user.userid}", body + "\n")]


# -- talking -------------------------------------------------------------------
def _text_of(ctx: Context, what: str, usage: str, game: str | None = None, board: int | None = None) -> str:
    text = ctx.comment.strip()
    if not text:
        raise ServiceError(
            f"The {what} is empty: its text goes in the body of the mail.",
            f"put '{usage}' in the Subject (not in a 'multiple' mail) and the text in the body",
            game=game, board=board,
        )
    return text


def _addresses_of(ctx: Context, userids: list[str]) -> tuple[str, ...]:
    found = ctx.addresses(userids)
    return tuple(dict.fromkeys(address for userid in userids for address in found[userid]))


def _count_relay(ctx: Context, user: Account) -> None:
    """Count a message or broadcast of `user` against the hourly limit; refused beyond it. (Chat on a board goes
    only to its players and followers: the cap on chat mails to each of them bounds it.)"""
    most = ctx.settings.messages_per_hour
    if not ctx.rates.take(RELAYED, user.userid, ctx.now, most):
        raise ServiceError(
            f"{user.userid} has sent {most} messages in the last hour, the most an account may send.",
            "send it again in an hour",
        )


@handles(Chat)
def chat(ctx: Context, game: Game, command: Chat) -> list[Reply]:
    """The body goes to the players and the subscribers of the board (not to
    `notify` subscribers), the sender's own copy included, in the board's
    thread; each player's copy comes from their reply address, so that a
    reply to it is a chat of theirs (`protocol.reply`)."""
    user = ctx.authenticate(command.userid, command.password)
    board = load(ctx.connection, game, command.board).record
    board_subscriptions = subscriptions.board_subscriptions(ctx, board)
    if user.userid not in board.seats and user.id not in {s.user_id for s in board_subscriptions}:
        raise ServiceError(
            f"{user.userid} neither plays nor subscribes to {game.title} board {board.board}, so cannot chat there.",
            f"'{game.name} subscribe {board.board} {user.userid} password' first",
            game=game.name, board=board.board,
        )
    text = _text_of(ctx, "chat", f"{game.name} chat {board.board} {user.userid} password", game.name, board.board)
    readers = list(dict.fromkeys(
        [*board.seats, *(s.userid for s in board_subscriptions if not s.final_only), user.userid]
    ))
    body = (
        f"{user.userid} writes about {game.title} Board {board.board} ({' vs '.join(board.seats)}):\n\n{text}\n\n"
        + views.wrap(f"This chat went to {views.names_and(readers)}.", hang="") + "\n"
    )
    thread = board_mails.thread_of(game, board, chat=True)
    title = board_mails.subject(game, board)
    answer = views.wrap("A reply to this mail is a chat of yours on the board (to move, reply to a board mail).", hang="") + "\n"
    to_players = [
        Reply(
            recipients, title, f"{body}{answer}", Kind.CHAT, board_mails.reply_address_of(ctx, game, board, seat), thread=thread,
        )
        for seat, userid in enumerate(board.seats) if (recipients := _addresses_of(ctx, [userid]))
    ]
    others = _addresses_of(ctx, [userid for userid in readers if userid not in board.seats])
    answer = views.wrap(
        f"To answer in this chat, send '{game.name} chat {board.board} userid password' with your text in the body "
        "(a subscriber has no reply address).", hang="",
    ) + "\n"
    return [*to_players, *([Reply(others, title, f"{body}{answer}", Kind.CHAT, thread=thread)] if others else [])]


@handles(Message)
def message(ctx: Context, command: Message) -> list[Reply]:
    """The body goes to the users named; the sender gets a copy."""
    user = ctx.authenticate(command.userid, command.password)
    for userid in command.to:
        ctx.known_user(userid, "'message' sends only to players who have signed up")
    text = _text_of(ctx, "message", f"message {user.userid} password {' '.join(command.to)}")
    body = (
        f"{user.userid} writes to {views.names_and(list(command.to))}:\n\n{text}\n\n"
        f"(Answer with 'message yourid yourpassword {user.userid}' in the Subject.)\n"
    )
    readers = list(dict.fromkeys([*command.to, user.userid]))
    _count_relay(ctx, user)
    return [Reply(_addresses_of(ctx, readers), f"pbmserv message from {user.userid}", body, Kind.RELAY)]


@handles(Broadcast)
def broadcast(ctx: Context, command: Broadcast) -> list[Reply]:
    """The body goes to every user; only the server's admins may do it."""
    user = ctx.authenticate(command.userid, command.password)
    if user.userid not in {admin.lower() for admin in ctx.settings.admins}:
        raise ServiceError(
            f"Only the server's admins may broadcast, and {user.userid} is not one.",
            "'message userid password to-userid...' writes to the players you name",
        )
    text = _text_of(ctx, "broadcast", f"broadcast {user.userid} password")
    everybody = users.all_userids(ctx.connection)
    body = f"{user.userid} writes to everybody on this server:\n\n{text}\n"
    _count_relay(ctx, user)
    return [Reply(_addresses_of(ctx, everybody), f"pbmserv broadcast from {user.userid}", body, Kind.RELAY)]
