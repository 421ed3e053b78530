"""Rate limits, counted in the database, so that every process (`serve`'s
worker, `receive`, the next process after a restart) sees the same counts:

- `RateLog`: events by kind and key (a failed password check by its
  sender, a message by its account, a challenge by the player it names);
- `MailCaps`: how much mail one address was sent, by kind, from the outbox
  (mails and bytes).

Both count what the batch under way has yet to write as well: a batch
writes its replies and events only at its end (one statement each for all
its mails), and a mail's own replies must count against the caps too."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from weakref import WeakKeyDictionary

from cachetools import LRUCache

from pbmserv.config import Settings
from pbmserv.store import counts
from pbmserv.store.handles import Connection, Engine
from pbmserv.store.states import Kind

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
    """At most `mails` mails of `kinds` to one address within `window`, and
    at most `size` bytes of them (each a Settings field, or the number
    itself); the mail that reaches either is the last. `paused` names what
    stops when it fills, for the notice in that last mail ("" for a cap
    whose last mail carries none). A `tallied` cap is counted in the
    database only when the worker's own tally (`Tallies`) says the address
    could be near it."""

    kinds: tuple[Kind, ...]
    mails: str | int
    size: str | int
    window: timedelta
    paused: str = ""
    tallied: bool = False

    def most(self, settings: Settings) -> tuple[int, int]:
        """The mails and the bytes it allows."""
        return _setting(settings, self.mails), _setting(settings, self.size)


def _setting(settings: Settings, value: str | int) -> int:
    return value if isinstance(value, int) else int(getattr(settings, value))


_ANSWERS = Cap((Kind.ANSWER, Kind.ERROR), "replies_per_hour", "reply_bytes_per_hour", HOUR, "replies")
#: by the kind of a mail: the caps it counts against. Answers and errors go
#: to anybody who writes, relayed mail to anybody an account names, a
#: confirmation request to a new address (one a day, of a few KB). Board
#: mails go only to the confirmed addresses of a board's players and
#: subscribers, and what makes them is limited too (new boards per player,
#: proposals per board); their cap bounds what all of an address's boards
#: send it, far above real play, so it is tallied rather than counted for
#: every move. An answer its mail proved its address's owner asked for
#: (by reply address, password or the trusted mail server's word) has a
#: cap of its own, which forged mail cannot spend, as generous as board
#: mails' (a player may ask for every board they are sent). Chat on a
#: board goes only to its players and followers, from one of them: its cap,
#: as generous, bounds what all of them together send one address.
CAPS: dict[Kind, tuple[Cap, ...]] = {
    Kind.ANSWER: (_ANSWERS,),
    Kind.ERROR: (Cap((Kind.ERROR,), "error_replies_per_hour", "error_reply_bytes_per_hour", HOUR, "error replies"), _ANSWERS),
    Kind.RELAY: (Cap((Kind.RELAY,), "relays_per_hour", "relay_bytes_per_hour", HOUR),),
    Kind.BOARD: (Cap((Kind.BOARD,), "board_mails_per_hour", "board_bytes_per_hour", HOUR, "board mails", tallied=True),),
    Kind.CONFIRM: (Cap((Kind.CONFIRM,), 1, 20_000, DAY),),
    Kind.ASKED: (
        Cap((Kind.ASKED,), "asked_replies_per_hour", "asked_reply_bytes_per_hour", HOUR, "replies to your own mail"),
    ),
    Kind.CHAT: (Cap((Kind.CHAT,), "chats_per_hour", "chat_bytes_per_hour", HOUR),),
}


@dataclass(frozen=True)
class Pause:
    """The caps on what an address is sent that a mail filled: `what` is
    paused ("replies"; "error replies" while other answers still go;
    "board mails") after the `most` mails or `most_bytes` bytes the cap
    allows (`by_bytes`: the bytes filled it), until `until`, when enough
    of the mails counted have left the window."""

    what: str
    most: int
    until: datetime
    most_bytes: int = 0
    by_bytes: bool = False


#: how long the tally of an address's board mails stands for a count in the database
TALLY_SECONDS = 300
#: addresses tallied, the least recently used forgotten (and counted again when next mailed)
TALLIED_ADDRESSES = 20_000


@dataclass
class Tally:
    """What an address had been sent in the window when it was last counted
    in the database (`at`), and what this process has sent it since."""

    at: datetime
    mails: int
    size: int


class Tallies:
    """The worker's own tally of the board mails each address was sent,
    so that a move does not cost a count in the database for each player
    (0.6 ms a move when it did): an address is counted there when it was
    not in the last TALLY_SECONDS, and whenever its tally is past half of
    a cap; in between, the tally (the count then, plus every mail this
    process has taken since) is at least what the window holds now, as far
    as this process wrote it. Mail that other processes write is seen at
    the next count, at most TALLY_SECONDS later."""

    def __init__(self) -> None:
        self._tallies: LRUCache[str, Tally] = LRUCache(maxsize=TALLIED_ADDRESSES)

    def far_below(self, recipient: str, now: datetime, most: int, most_bytes: int, size: int) -> bool:
        """Whether one more mail of `size` leaves `recipient` below half of both bounds, by a recent tally."""
        tally = self._tallies.get(recipient)
        return (
            tally is not None and tally.at <= now < tally.at + timedelta(seconds=TALLY_SECONDS)
            and 2 * (tally.mails + 1) <= most and 2 * (tally.size + size) <= most_bytes
        )

    def counted(self, recipient: str, now: datetime, mails: int, size: int) -> None:
        self._tallies[recipient] = Tally(now, mails, size)

    def add(self, recipient: str, size: int) -> None:
        tally = self._tallies.get(recipient)
        if tally is not None:
            tally.mails += 1
            tally.size += size


#: each database's tallies (tests run many in one process; a server, one)
_TALLIES: WeakKeyDictionary[Engine, Tallies] = WeakKeyDictionary()


def tallies_of(engine: Engine) -> Tallies:
    tallies = _TALLIES.get(engine)
    if tallies is None:
        tallies = _TALLIES[engine] = Tallies()
    return tallies


@dataclass
class MailCaps:
    """Whether one more mail of a kind may go to an address, counting the
    outbox and the rows the batch has taken but not yet written."""

    connection: Connection
    settings: Settings
    #: when each mail the batch has taken was made and its bytes, by (recipient, kind)
    unwritten: defaultdict[tuple[str, str], list[tuple[datetime, int]]] = field(default_factory=lambda: defaultdict(list))

    def __post_init__(self) -> None:
        self.tallies = tallies_of(self.connection.engine)

    def take(self, recipient: str, kind: Kind, now: datetime, size: int) -> tuple[bool, Pause | None]:
        """Whether one more mail of `kind` and `size` bytes may go to
        `recipient` now (and if so it is counted), and the pause it begins
        if it is the last before a cap with a notice is full."""
        filled: list[tuple[Cap, int, int, bool]] = []
        for cap in CAPS[kind]:
            most, most_bytes = cap.most(self.settings)
            if cap.tallied and self.tallies.far_below(recipient, now, most, most_bytes, size):
                continue
            sent, sent_bytes = counts.mails_since(self.connection, recipient, cap.kinds, now - cap.window)
            for counted in cap.kinds:
                sent += len(self.unwritten[recipient, counted])
                sent_bytes += sum(bytes_ for _, bytes_ in self.unwritten[recipient, counted])
            if sent >= most or sent_bytes >= most_bytes:
                return False, None
            if cap.tallied:
                self.tallies.counted(recipient, now, sent, sent_bytes)
            if cap.paused and (sent + 1 >= most or sent_bytes + size >= most_bytes):
                filled.append((cap, most, most_bytes, sent + 1 < most))
        self.unwritten[recipient, kind].append((now, size))
        if any(cap.tallied for cap in CAPS[kind]):
            self.tallies.add(recipient, size)
        if not filled:
            return True, None
        until = max(self._free_at(recipient, cap, now, most, most_bytes) for cap, most, most_bytes, _ in filled)
        cap, most, most_bytes, by_bytes = filled[-1]  # the cap on all answers, if it is full, comes last
        return True, Pause(cap.paused, most, until, most_bytes, by_bytes)

    def _free_at(self, recipient: str, cap: Cap, now: datetime, most: int, most_bytes: int) -> datetime:
        """When enough of the mails `cap` counts for `recipient` (this one
        too) have left the window for one more to go: the outbox's are
        older than the batch's."""
        mails = [
            (at if at.tzinfo is not None else at.replace(tzinfo=UTC), size)
            for at, size in counts.mails_in_window(self.connection, recipient, cap.kinds, now - cap.window)
        ]
        mails += sorted(mail for counted in cap.kinds for mail in self.unwritten[recipient, counted])
        left, left_bytes = len(mails), sum(size for _, size in mails)
        for at, size in mails:
            left, left_bytes = left - 1, left_bytes - size
            if left < most and left_bytes < most_bytes:
                return at + cap.window
        return now + cap.window

    def written(self) -> None:
        self.unwritten.clear()


def _after(at: object, since: datetime) -> bool:
    assert isinstance(at, datetime), "an unwritten event's time is a datetime"
    return at > since
