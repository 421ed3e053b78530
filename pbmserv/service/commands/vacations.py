"""Vacations: `vacation on|off` stops reminders and forfeits for a player
within a yearly allowance of days; every started day counts, charged to
the year the vacation began."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import datetime, timedelta

from pbmserv.protocol.commands import Vacation as VacationCommand
from pbmserv.service.commands.accounts import to_account_and_sender
from pbmserv.service.commands.handling import handles
from pbmserv.service.play import views
from pbmserv.service.processing.context import Context, Reply, as_utc
from pbmserv.service.processing.errors import ServiceError
from pbmserv.store import users
from pbmserv.store.users import VacationRecord

DAY = timedelta(days=1)


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


@handles(VacationCommand)
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
    recipients = to_account_and_sender(ctx, user)
    return [Reply(recipients, f"pbmserv vacation {user.userid}", views.wrap(text, hang="") + "\n")]
