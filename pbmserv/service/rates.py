"""Rate limits, counted in the database, so that every process (`serve`'s
worker, `receive`, the next process after a restart) sees the same counts:

- `RateLog`: events by kind and key (a failed password check by its
  sender, a message by its account, a challenge by the player it names);
- `MailCaps`: how much mail one address was sent, by kind, from the outbox.

Both count what the batch under way has yet to write as well: a batch
writes its replies and events only at its end (one statement each for all
its mails), and a mail's own replies must count against the caps too."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from pbmserv.config import Settings
from pbmserv.store import counts
from pbmserv.store.handles import Connection

HOUR, DAY = timedelta(hours=1), timedelta(days=1)
#: events are kept as long as the longest window that counts them
KEPT_EVENTS = DAY

@dataclass
class RateLog:
    connection: Connection
    unwritten: list[dict[str, object]] = field(default_factory=list)

    def count(self, kind: str, key: str, since: datetime) -> int:
        """How many `kind` events for `key` happened after `since`."""
        return counts.events_since(self.connection, kind, key, since) + sum(
            1 for event in self.unwritten if (event["kind"], event["key"]) == (kind, key) and _after(event["at"], since)
        )

    def take(self, kind: str, key: str, at: datetime, most: int) -> bool:
        """Count one more `kind` event for `key`, unless `most` happened in
        the hour before `at`; whether it was counted."""
        if self.count(kind, key, at - HOUR) >= most:
            return False
        self.add(kind, key, at)
        return True

    def add(self, kind: str, key: str, at: datetime) -> None:
        """Count an event; it is written with the batch, even if the command that caused it is undone."""
        self.unwritten.append({"kind": kind, "key": key[:320], "at": at})

    def write(self) -> None:
        if self.unwritten:
            counts.add_events(self.connection, self.unwritten)
            self.unwritten.clear()


def forget_old_events(connection: Connection, now: datetime) -> None:
    counts.forget_events(connection, now - KEPT_EVENTS)


@dataclass(frozen=True)
class Cap:
    """At most `most` mails of `kinds` to one address within `window`.
    `paused` names what stops when it fills, for the notice in the last mail
    before the pause ("" for a cap whose last mail carries none)."""

    kinds: tuple[str, ...]
    setting: str  # the Settings field with the number, or "" for one
    window: timedelta
    paused: str = ""

    def most(self, settings: Settings) -> int:
        return getattr(settings, self.setting) if self.setting else 1


_ANSWERS = Cap(("answer", "error"), "replies_per_hour", HOUR, "replies")
#: by the kind of a mail: the caps it counts against. Answers and errors go
#: to anybody who writes, relayed mail to anybody an account names, a
#: confirmation request to a new address. Board mails go only to the
#: confirmed addresses of a board's players and subscribers, so what makes
#: them is limited instead (new boards per player, proposals per board):
#: counting them would cost every move two queries that grow with the hour.
CAPS: dict[str, tuple[Cap, ...]] = {
    "answer": (_ANSWERS,),
    "error": (Cap(("error",), "error_replies_per_hour", HOUR, "error replies"), _ANSWERS),
    "relay": (Cap(("relay",), "relays_per_hour", HOUR),),
    "board": (),
    "confirm": (Cap(("confirm",), "", DAY),),
}


@dataclass(frozen=True)
class Pause:
    """The caps on answers to an address that a mail filled: `what` is paused
    ("replies", or "error replies" while other answers still go) after the
    `most` the cap allows, until `until`, when the oldest mail counted
    leaves the window."""

    what: str
    most: int
    until: datetime


@dataclass
class MailCaps:
    """Whether one more mail of a kind may go to an address, counting the
    outbox and the rows the batch has taken but not yet written."""

    connection: Connection
    settings: Settings
    #: when each mail the batch has taken was made, by (recipient, kind)
    unwritten: defaultdict[tuple[str, str], list[datetime]] = field(default_factory=lambda: defaultdict(list))

    def take(self, recipient: str, kind: str, now: datetime) -> tuple[bool, Pause | None]:
        """Whether one more mail of `kind` may go to `recipient` now (and if
        so it is counted), and the pause it begins if it is the last before
        a cap with a notice is full."""
        filled: list[tuple[Cap, int]] = []
        for cap in CAPS[kind]:
            sent = counts.mails_since(self.connection, recipient, cap.kinds, now - cap.window)
            sent += sum(len(self.unwritten[recipient, counted]) for counted in cap.kinds)
            most = cap.most(self.settings)
            if sent >= most:
                return False, None
            if sent + 1 == most and cap.paused:
                filled.append((cap, most))
        self.unwritten[recipient, kind].append(now)
        if not filled:
            return True, None
        until = max(self._oldest(recipient, cap, now) + cap.window for cap, _ in filled)
        cap, most = filled[-1]  # the cap on all answers, if it is full, comes last
        return True, Pause(cap.paused, most, until)

    def _oldest(self, recipient: str, cap: Cap, now: datetime) -> datetime:
        """When the oldest mail `cap` counts for `recipient` was made: the
        outbox's are older than the batch's."""
        stored = counts.oldest_mail_since(self.connection, recipient, cap.kinds, now - cap.window)
        if stored is not None:
            return stored if stored.tzinfo is not None else stored.replace(tzinfo=UTC)
        return min(at for counted in cap.kinds for at in self.unwritten[recipient, counted])

    def written(self) -> None:
        self.unwritten.clear()


def _after(at: object, since: datetime) -> bool:
    assert isinstance(at, datetime), "an unwritten event's time is a datetime"
    return at > since
