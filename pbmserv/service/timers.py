"""Timers: a nag mail to a player whose move is `nagtime` days late (again
every `nagtime` days), a forfeit at `forfeittime` days, and `vacation`,
which stops both for a player within a yearly allowance of days."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from pbmserv.gamekit import Game
from pbmserv.protocol.commands import Vacation as VacationCommand
from pbmserv.service import boards, bots, proposals, views
from pbmserv.service.accounts import mail_addresses
from pbmserv.service.board import Board, save
from pbmserv.service.context import Context, Reply, as_utc
from pbmserv.service.errors import ServiceError
from pbmserv.service.policies import counted
from pbmserv.store import records, users
from pbmserv.store.handles import Connection
from pbmserv.store.records import BoardRecord
from pbmserv.store.states import Kind
from pbmserv.store.users import VacationRecord

DAY = timedelta(days=1)


# -- vacation ----------------------------------------------------------------------
def vacation_days_used(vacations: list[VacationRecord], year: int, now: datetime) -> int:
    """Days used in `year`: every started 24 hours of a vacation count as a day,
    charged to the calendar year (UTC) in which the vacation began."""
    used = 0
    for vacation in vacations:
        started = as_utc(vacation.started_at)
        if started.year == year:
            ended = as_utc(vacation.ended_at) if vacation.ended_at else now
            used += max(1, math.ceil((ended - started) / DAY))
    return used


def _open(vacations: list[VacationRecord]) -> VacationRecord | None:
    return next((v for v in vacations if v.ended_at is None), None)


def vacation_end(ctx: Context, vacations: list[VacationRecord], vacation: VacationRecord) -> datetime:
    """When a running vacation ends by itself: when the year's allowance is used up."""
    started = as_utc(vacation.started_at)
    earlier = [v for v in vacations if v.id != vacation.id]
    left = ctx.settings.vacation_days - vacation_days_used(earlier, started.year, started)
    return started + left * DAY


def vacation(ctx: Context, command: VacationCommand) -> list[Reply]:
    user = ctx.authenticate(command.userid, command.password)
    vacations = users.vacations_of(ctx.connection, user.id)
    running = _open(vacations)
    allowance = ctx.settings.vacation_days
    usage = f"vacation {user.userid} password {'off' if command.on else 'on'}"
    if command.on:
        if running is not None:
            raise ServiceError(f"{user.userid} is on vacation already.", f"'{usage}' ends it")
        left = allowance - vacation_days_used(vacations, ctx.now.year, ctx.now)
        if left <= 0:
            raise ServiceError(
                f"{user.userid} has used all {allowance} vacation days of {ctx.now.year}.",
                "the allowance starts again on 1 January; until then, move or resign",
            )
        users.start_vacation(ctx.connection, user.id, ctx.now)
        text = (
            f"{user.userid} is on vacation from now: no reminders and no forfeits on {user.userid}'s boards "
            f"until '{usage}', at the latest on {ctx.now + left * DAY:%Y-%m-%d %H:%M} UTC, when the {left} "
            f"vacation days left of {ctx.now.year} are used up. Every started day counts."
        )
    else:
        if running is None:
            raise ServiceError(f"{user.userid} is not on vacation.", f"'{usage}' starts one")
        ended_at = min(ctx.now, vacation_end(ctx, vacations, running))
        ended = replace(running, ended_at=ended_at)
        users.end_vacation(ctx.connection, ended.id, ended_at)
        vacations = [ended if v.id == ended.id else v for v in vacations]
        left = allowance - vacation_days_used(vacations, as_utc(running.started_at).year, ctx.now)
        text = f"Welcome back, {user.userid}: the vacation is over. {left} of the {allowance} vacation days of the year are left."
    recipients = tuple(dict.fromkeys([*mail_addresses(users.addresses_of(ctx.connection, user.id)), ctx.sender]))
    return [Reply(recipients, f"pbmserv vacation {user.userid}", views.wrap(text, hang="") + "\n")]


# -- the timer pass ------------------------------------------------------------------
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
    since = as_utc(board.updated_at)
    user = ctx.known_user(userid)
    away = timedelta()
    for v in users.vacations_of(ctx.connection, user.id):
        if v.ended_at is None:
            return None
        away += max(min(as_utc(v.ended_at), ctx.now) - max(as_utc(v.started_at), since), timedelta())
    return ctx.now - since - away


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
            replies += boards.mails_to_players(ctx, saved)
            report.append(f"{game.name} board {record.board}: {views.end_reason(saved.record)}")
            continue
        if forfeiting:
            userid = record.seats[forfeiting[0]]
            reason = f"{userid} did not move within {counted(forfeit_days, 'day')} and forfeited"
            replies += boards.end_by_resignation(ctx, board, forfeiting[0], reason, move="forfeit")
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
        f"Without a move by {deadline:%Y-%m-%d %H:%M} UTC the game is forfeited. "
        f"'vacation {userid} password on' pauses reminders and forfeits while you are away.", hang="",
    )
    board_text = views.board_mail(
        game, board, boards.moves_to_list(ctx, board), state, seat, recent=ctx.settings.recent_moves,
    )
    board_text += "\n" + views.command_to_paste(game, board, state, seat)
    recipients = ctx.addresses([userid])[userid]
    return Reply(
        recipients, f"Nag: {views.subject(game, board, state)}", f"{text}\n\n{board_text}", Kind.BOARD,
        boards.reply_address_of(ctx, game, board, seat),
    )
