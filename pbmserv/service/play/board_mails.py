"""The board mails every change of a board sends: to each player their own view
(with the command to paste where it is their turn and the reply address of
their seat), the public view to the subscribers, and an answer to a third
party who sent the command."""

from __future__ import annotations

from dataclasses import replace
from html import escape
from typing import Any

from pbmserv.gamekit import Game
from pbmserv.mail.outbound import BoardThread, HtmlVersion
from pbmserv.service.bots.seats import is_bot
from pbmserv.service.play import board_pictures, deadlines, notifications, reply_addresses, subscriptions, views
from pbmserv.service.play.board import Board
from pbmserv.service.processing.context import Context, Reply
from pbmserv.store import notifications as stored_notifications
from pbmserv.store import records, users
from pbmserv.store.records import Account, BoardRecord
from pbmserv.store.states import Kind


def moves_to_list(ctx: Context, board: BoardRecord) -> list[Any]:
    """The moves an ordinary board mail lists: the last few while the game
    runs, all once it is over (as many as a move list shows), without
    loading a long game's whole history."""
    most = views.MOST_LISTED_MOVES if board.result is not None else ctx.settings.recent_moves
    return records.recent_moves(ctx.connection, board.id, board.move_count, most)


def subject(game: Game, board: BoardRecord) -> str:
    """The Subject of every mail of the board's thread: the same from its
    first mail to its last, as Gmail threads only mails of one Subject
    (docs/decisions/0144-one-thread-per-board.md); whose turn it is the
    body's first lines say."""
    return f"{game.title} Board {board.board}"


def thread_of(game: Game, board: BoardRecord, *, first: bool = False, chat: bool = False) -> BoardThread:
    return BoardThread(game.name, board.board, board.id, board.created_at, first=first, chat=chat)


def mails_to_players(
    ctx: Context, saved: Board, *, first: bool = False, lead: str = "", commenter: str = "",
) -> list[Reply]:
    """The board mail to every player who wants it (`notifications`; the
    command's own player, `commenter`, always does), each seeing the board
    from their own side, and the public view to the subscribers it is for;
    the sender gets the public view (without the comment) if they are none
    of these. The board is saved: its move list is read from the store.
    `first`: the board's first mail, which starts its thread."""
    game, board, state = saved.game, saved.record, saved.state
    moves = moves_to_list(ctx, board)
    board_subscriptions = subscriptions.board_subscriptions(ctx, board)
    watchers = subscriptions.watchers(board, board_subscriptions)
    addresses = ctx.addresses([*board.seats, *watchers])
    title = subject(game, board)
    thread = thread_of(game, board, first=first)

    secret_moves = any(move.secret for move in moves)  # the move list shows each player their own
    texts: dict[tuple[int | None, str], str] = {}
    words = board_pictures.Words(
        title, ctx.settings.recent_moves, ctx.comment, commenter, lead,
        subscriptions.listed_names(board_subscriptions), views.board_page(ctx.settings, game, board),
    )

    def text(viewer: int | None, comment: str = ctx.comment) -> str:
        """The mail for `viewer`, made once for all who see the same board."""
        key = (viewer if secret_moves else game.viewpoint(state, viewer), comment)
        if key not in texts:
            texts[key] = views.board_mail(
                game, board, moves, state, key[0], recent=words.recent, comment=comment, commenter=commenter,
                lead=lead, subscribers=words.subscribers, page=words.page,
            )
        return texts[key]

    replies = []
    reached: set[str] = set()
    board_modes = stored_notifications.board_modes(ctx.connection, board.id)
    to_move = game.to_move(state)
    for seat, userid in enumerate(board.seats):
        recipients = addresses.get(userid, ())
        account = ctx.known_user(userid) if recipients else None
        if account is not None and notifications.gets_board_mail(
            notifications.mode_on(account, board_modes), own=userid == commenter, first=first,
            over=board.result is not None, waits=notifications.waits_for(board, to_move, seat),
        ):
            reached.update(recipients)
            due, paste = closing_lines(ctx, saved, seat, account)
            body = text(seat) + due + paste
            html = player_html(ctx, saved, seat, moves, words, due) if account.pictures else None
            reply_to = seat_address(ctx, game, board, seat, account)
            replies.append(Reply(recipients, title, body, Kind.BOARD, reply_to, html, thread))
    recipients = tuple(address for userid in watchers for address in addresses[userid])
    if recipients:
        reached.update(recipients)
        replies.append(Reply(recipients, title, text(None), Kind.BOARD, thread=thread))
    if ctx.sender and ctx.sender not in reached:  # a third party's command: an answer to the sender
        replies.append(Reply((ctx.sender,), title, text(None, comment=""), Kind.ANSWER, thread=thread))
    return replies


def player_html(
    ctx: Context, saved: Board, seat: int, moves: list[Any], words: board_pictures.Words, due: str, reply_address: str = "",
) -> HtmlVersion | None:
    """The HTML version of a board mail to the player in `seat` who asked
    for pictures, their clock (`due`) last; None for a game that does not
    draw its boards."""
    game, board, state = saved.game, saved.record, saved.state
    html = board_pictures.html_version(
        game, board, moves, state, seat, words, ctx.settings.address.rpartition("@")[2], reply_address,
    )
    if html is not None and due:
        html = replace(html, body=f"{html.body}<p>{escape(due.strip())}</p>\n")
    return html


def to_player(ctx: Context, saved: Board, seat: int, lead: str) -> Reply:
    """The board mail to the player in `seat` alone, their view with their
    reply address, under `lead`, in the board's thread."""
    game, board = saved.game, saved.record
    body = player_view(ctx, saved, seat, ctx.known_user(board.seats[seat]), lead)
    recipients = ctx.addresses([board.seats[seat]])[board.seats[seat]]
    return Reply(
        recipients, subject(game, board), body, Kind.BOARD, reply_address_of(ctx, game, board, seat),
        thread=thread_of(game, board),
    )


def player_view(ctx: Context, saved: Board, seat: int, account: Account, lead: str = "", reply_address: str = "") -> str:
    """The text of a board mail to the player in `seat` alone: their view
    of the board (nothing hidden from them shown), under `lead`, closed by
    their clock and the line to paste while it is their turn (naming
    `reply_address`, if given, as the address to move by)."""
    game, board, state = saved.game, saved.record, saved.state
    body = views.board_mail(
        game, board, moves_to_list(ctx, board), state, seat, recent=ctx.settings.recent_moves, lead=lead,
        page=views.board_page(ctx.settings, game, board),
    )
    return body + "".join(closing_lines(ctx, saved, seat, account, reply_address))


def proven_reply_address(ctx: Context, game: Game, board: BoardRecord) -> str:
    """The reply address for an answer about the board to the mail's
    sender: theirs, if the mail proved them (by a reply address or a
    password) a player of the board and the answer goes to an address of
    their account; else none, so that no seat's address reaches anyone else."""
    proven = {*ctx.proof.passwords, *([ctx.proof.vouched] if ctx.proof.vouched else [])}
    for seat, userid in enumerate(board.seats):
        if userid in proven and ctx.sender.lower() in {address.lower() for address in ctx.addresses([userid])[userid]}:
            return reply_address_of(ctx, game, board, seat)
    return ""


def closing_lines(ctx: Context, saved: Board, seat: int, account: Account, reply_address: str = "") -> tuple[str, str]:
    """The lines that close a board mail to the player in `seat` while it is
    their turn: their clock, then the line to paste, which stays last; ("", "") otherwise."""
    game, board, state = saved.game, saved.record, saved.state
    if board.result is not None or seat not in game.to_move(state):
        return "", ""
    return clock(ctx, board, account), "\n" + views.command_to_paste(game, board, state, seat, reply_address)


def clock(ctx: Context, board: BoardRecord, account: Account) -> str:
    """What the mail to a player to move says of their deadlines ("" for a bot, which has none)."""
    if is_bot(account.userid):
        return ""
    due = deadlines.deadline(board, account.userid, users.vacations_of(ctx.connection, account.id), ctx.now)
    return "\n" + deadlines.clock_text(due, account.timezone)


def reply_address_of(ctx: Context, game: Game, board: BoardRecord, seat: int) -> str:
    """The reply address of the player in `seat` on the board: theirs alone (`service.reply_addresses`)."""
    return seat_address(ctx, game, board, seat, ctx.known_user(board.seats[seat]))


def seat_address(ctx: Context, game: Game, board: BoardRecord, seat: int, account: Account) -> str:
    return reply_addresses.seat_address(ctx.key, ctx.settings.address, game.name, board.board, seat, account)
