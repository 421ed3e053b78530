"""Intake refuses mail before the database's disk, or its size limit, is
reached (issue 35, item 4): SMTP with 452 4.3.1, `receive` with exit 75,
so that the sending MTA keeps the mail and tries again. Measured by
`store.room`, without SQLAlchemy (`receive`'s hot path)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from pbmserv.config import MIB, Settings
from pbmserv.store.room import Room

log = logging.getLogger(__name__)

#: how long intake trusts a measure of the database's room (a flood grows it by a few MB a second at most)
ROOM_SECONDS = 1.0
#: what intake says when it refuses mail for want of room: "4.3.1 mail system full" (RFC 3463)
NO_ROOM = "mail system full, try again later"


def room_problem(room: Room, settings: Settings) -> str | None:
    """Why intake must refuse mail now, or None: the database has reached
    `max_database_mib`, or its disk has less than `min_free_mib` free."""
    if settings.max_database_mib and room.used_bytes >= settings.max_database_mib * MIB:
        return f"the database takes {room.used_bytes / MIB:.0f} MiB, its limit is {settings.max_database_mib} MiB ([storage] max_database_mib)"
    if settings.min_free_mib and room.free_bytes is not None and room.free_bytes < settings.min_free_mib * MIB:
        return f"its disk has {room.free_bytes / MIB:.0f} MiB free, less than {settings.min_free_mib} MiB ([storage] min_free_mib)"
    return None


def room_limited(settings: Settings, on_sqlite: bool) -> bool:
    """Whether intake has a limit to check (the free space is known on SQLite only)."""
    return bool(settings.max_database_mib or (on_sqlite and settings.min_free_mib))


class RoomCheck:
    """`room_problem`, measured at most once a `ROOM_SECONDS`: intake asks
    for every mail. The first refusal and the end of them are logged."""

    def __init__(self, settings: Settings, measure: Callable[[], Room], clock: Callable[[], float] = time.monotonic):
        self.settings = settings
        self.measure = measure
        self.clock = clock
        self._problem: str | None = None
        self._until = -float("inf")

    def fresh(self) -> bool:
        """Whether `problem` answers without measuring."""
        return self.clock() < self._until

    def problem(self) -> str | None:
        if not self.fresh():
            problem = room_problem(self.measure(), self.settings)
            if (problem is None) != (self._problem is None):
                if problem is not None:
                    log.warning("intake refuses mail (452 4.3.1, receive exits 75): %s", problem)
                else:
                    log.warning("intake takes mail again: there is room")
            self._problem, self._until = problem, self.clock() + ROOM_SECONDS
        return self._problem

