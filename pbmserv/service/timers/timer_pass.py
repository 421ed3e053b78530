"""The timer pass: a nag mail to a player whose move is `nagtime` days late
(again every `nagtime` days), a forfeit at `forfeittime` days, and the end
of vacations that used up the year's allowance (`vacations`)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from pbmserv.gamekit import Game
from pbmserv.service.bots import seats as bots
from pbmserv.service.commands import proposals
from pbmserv.service.commands.accounts import mail_addresses
from pbmserv.service.commands.policies import counted
from pbmserv.service.commands.vacations import DAY, vacation_end
from pbmserv.service.play import board_mails, deadlines, playing, views
from pbmserv.service.play.board import Board, save
from pbmserv.service.processing.context import Context, Reply, as_utc
from pbmserv.store import records, users
from pbmserv.store.handles import Connection
from pbmserv.store.records import BoardRecord
from pbmserv.store.states import Kind


def end_used_up_vacations(ctx: Context) -> tuple[list[Reply], list[str]]:
    """End the vacations that used up the year's allowance, telling their players."""
    replies, report = [], []
    for running in users.running_vacations(ctx.connection):
        ends = vacation_end(ctx, users.vacations_of(ctx.connection, running.user_id), running)
        if ends <= ctx.now:
            users.end_vacation(ctx.connection, running.id, ends)
            user = users.account_by_id(ctx.connection, running.user_id)
            assert user is not None, "a vacation goes with its account"
            report.append(f"vacation of {user.userid} ended: allowance used up")
            text = f"The vacation of {user.userid} has ended: the vacation days of {ends.year} are used up."
            recipients = tuple(mail_addresses(users.addresses_of(ctx.connection, user.id)))
            replies.append(Reply(recipients, f"pbmserv vacation {user.userid}", text + "\n", Kind.BOARD))
    return replies, report


def lateness(ctx: Context, board: BoardRecord, userid: str) -> timedelta | None:
    """How long the board has waited for the player's move, vacations not
    counted; None while the player is on vacation."""
    return deadlines.lateness(board.updated_at, users.vacations_of(ctx.connection, ctx.known_user(userid).id), ctx.now)


def _nag_due(ctx: Context, board: BoardRecord, late: timedelta, nag_days: int) -> bool:
    if late < nag_days * DAY:
        return False
    nagged = as_utc(board.nagged_at) if board.nagged_at else None
    return nagged is None or nagged <= as_utc(board.updated_at) or ctx.now - nagged >= nag_days * DAY


def running_boards(connection: Connection) -> list[int]:
    """The ids of the running boards, in the order the timer pass takes them."""
    return records.running_board_ids(connection)


def check_boards(ctx: Context, board_ids: list[int]) -> tuple[list[Reply], list[str]]:
    """Forfeit or nag the late players on these boards (those still
    running). Returns the mails and a line for each thing done."""
    replies: list[Reply] = []
    report: list[str] = []
    for record in records.running_boards_among(ctx.connection, board_ids):
        if record.game_type not in ctx.catalog:
            continue
        board = Board.of(ctx.catalog.get(record.game_type), record)
        game, state = board.game, board.state
        nag_days, forfeit_days = record.timers["nagtime"], record.timers["forfeittime"]
        late = {
            seat: time for seat in sorted(game.to_move(state))
            if not bots.is_bot(record.seats[seat]) and (time := lateness(ctx, record, record.seats[seat])) is not None
        }
        forfeiting = [seat for seat, time in late.items() if time >= forfeit_days * DAY]
        drawn = proposals.drawn_at_forfeit(ctx, board, forfeiting[0], forfeit_days) if forfeiting else None
        if drawn is not None:
            saved = save(ctx.connection, drawn)
            replies += board_mails.mails_to_players(ctx, saved)
            report.append(f"{game.name} board {record.board}: {views.end_reason(saved.record)}")
            continue
        if forfeiting:
            userid = record.seats[forfeiting[0]]
            reason = f"{userid} did not move within {counted(forfeit_days, 'day')} and forfeited"
            replies += playing.end_by_resignation(ctx, board, forfeiting[0], reason, move="forfeit")
            report.append(f"{game.name} board {record.board}: {reason}")
            continue
        nagged = [seat for seat, time in late.items() if _nag_due(ctx, record, time, nag_days)]
        for seat in nagged:
            replies.append(_nag(ctx, game, record, state, seat, late[seat], forfeit_days))
            report.append(f"{game.name} board {record.board}: reminded {record.seats[seat]} ({counted(late[seat].days, 'day')} late)")
        if nagged:
            save(ctx.connection, board.nagged(ctx.now))
    return replies, report


def _nag(ctx: Context, game: Game, board: BoardRecord, state: Any, seat: int, late: timedelta, forfeit_days: int) -> Reply:
    userid = board.seats[seat]
    deadline = ctx.now + (forfeit_days * DAY - late)
    text = views.wrap(
        f"Reminder: {game.title} Board {board.board} has waited {counted(late.days, 'day')} for your move, {userid}. "
        f"Without a move by {deadlines.shown_in(deadline, ctx.known_user(userid).timezone)} the game is forfeited. "
        f"'vacation {userid} password on' pauses reminders and forfeits while you are away.", hang="",
    )
    board_text = views.board_mail(
        game, board, board_mails.moves_to_list(ctx, board), state, seat, recent=ctx.settings.recent_moves,
        page=views.board_page(ctx.settings, game, board),
    )
    board_text += "\n" + views.command_to_paste(game, board, state, seat)
    recipients = ctx.addresses([userid])[userid]
    return Reply(
        recipients, board_mails.subject(game, board), f"{text}\n\n{board_text}", Kind.BOARD,
        board_mails.reply_address_of(ctx, game, board, seat), thread=board_mails.thread_of(game, board),
    )
