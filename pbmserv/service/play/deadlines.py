"""When a player to move is reminded and when they forfeit: the timer
pass's clock (`timers.timer_pass`), the deadline the web site shows, and
what a board mail to the player to move says of it, in UTC and in the
player's own time zone (docs/decisions/0149-deadlines-in-board-mails.md)."""

from __future__ import annotations

import zoneinfo
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from functools import cache

from pbmserv.service.play import views
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


@cache
def _zone_names() -> dict[str, str]:
    """The tz database's zone names by their lower case, read once (the
    system's, else the `tzdata` package's)."""
    return {name.lower(): name for name in zoneinfo.available_timezones()}


def zone_named(name: str) -> str | None:
    """The tz database's own spelling of a zone `name` in any case
    ("europe/berlin" -> "Europe/Berlin"); None for none. UTC is always
    known, even where the system has no tz database."""
    return "UTC" if name.upper() == "UTC" else _zone_names().get(name.lower())


def shown_in(moment: datetime, zone: str) -> str:
    """A deadline as a board mail shows it: to the minute in UTC and, for a
    player who named a zone other than UTC, in that zone too."""
    utc = f"{as_utc(moment):%Y-%m-%d %H:%M} UTC"
    local_zone = zone_of(zone)
    if local_zone is UTC:
        return utc
    return f"{utc} ({as_utc(moment).astimezone(local_zone):%Y-%m-%d %H:%M} {zone})"


def zone_of(zone: str) -> tzinfo:
    """The player's zone as kept (`timezone`); UTC for none, and for a zone
    the system's tz database no longer has."""
    if zone in ("", "UTC") or zone_named(zone) is None:
        return UTC
    return zoneinfo.ZoneInfo(zone)


def clock_text(due: Deadline, zone: str) -> str:
    """What a board mail to the player to move says of their clock."""
    userid = due.userid
    if due.paused:
        return views.wrap(
            f"You are on vacation, {userid}: your clock is stopped, with no reminder and no forfeit on this board "
            f"until you send 'vacation {userid} password off' (or your vacation days run out).", hang="",
        ) + "\n"
    assert due.reminder is not None and due.forfeit is not None, "a running clock has both"
    forfeit = f"forfeit the game on {shown_in(due.forfeit, zone)}"
    if due.reminder < due.forfeit:
        text = f"Your clock: without your move you are reminded on {shown_in(due.reminder, zone)} and {forfeit}."
    else:
        text = f"Your clock: without your move you {forfeit}."
    return views.wrap(text, hang="") + "\n"
