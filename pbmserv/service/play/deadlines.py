"""When a player to move is reminded and when they forfeit: the timer
pass's clock (`timers.timer_pass`), and the deadline the web site shows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from pbmserv.service.processing.context import as_utc
from pbmserv.store.records import BoardRecord
from pbmserv.store.users import VacationRecord

DAY = timedelta(days=1)


def lateness(waiting_since: datetime, vacations: Sequence[VacationRecord], now: datetime) -> timedelta | None:
    """How long a board has waited for the player's move since
    `waiting_since`, the player's `vacations` not counted; None while the
    player is on vacation."""
    since = as_utc(waiting_since)
    away = timedelta()
    for vacation in vacations:
        if vacation.ended_at is None:
            return None
        away += max(min(as_utc(vacation.ended_at), now) - max(as_utc(vacation.started_at), since), timedelta())
    return now - since - away


@dataclass(frozen=True)
class Deadline:
    """What waits for a player to move: the next reminder and the forfeit
    (None for both while the player is on vacation, which pauses them)."""

    userid: str
    reminder: datetime | None
    forfeit: datetime | None

    @property
    def paused(self) -> bool:
        return self.forfeit is None


def deadline(board: BoardRecord, userid: str, vacations: Sequence[VacationRecord], now: datetime) -> Deadline:
    """The times the timer pass reminds `userid`, to move on `board`, and
    forfeits their game (it runs every `timer_seconds`, so each comes at
    the first pass after its time)."""
    late = lateness(board.updated_at, vacations, now)
    if late is None:
        return Deadline(userid, None, None)
    nag, forfeit = board.timers["nagtime"] * DAY, board.timers["forfeittime"] * DAY
    nagged = as_utc(board.nagged_at) if board.nagged_at is not None else None
    if late < nag:
        reminder = now + (nag - late)
    elif nagged is not None and nagged > as_utc(board.updated_at):
        reminder = nagged + nag  # reminded since the last move: again `nagtime` later
    else:
        reminder = now
    return Deadline(userid, reminder, now + (forfeit - late))
