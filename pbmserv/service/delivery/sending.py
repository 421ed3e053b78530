"""Working the outbox: send what is due, retry with backoff, give up in the end.

A mail is sent by the process that has claimed it: its next try is moved
`claim_seconds` on, so that no other process takes it up meanwhile. Either
this process claims the mails that are due and writes how each went
(`deliver_due`: `receive`, `pbmserv deliver`), or, in `serve`, the worker,
the database's one writer, claims for the deliverer: it writes its replies
claimed already, claims what has come due (`claim_due`) and hands the ids
over after its commit; the deliverer reads them without a write lock
(`deliver_handed_over`), sends them, and hands how each went back to the
worker (`hand_back`), which writes it in its next batch. Mail is sent
outside any transaction. When how it went cannot be written or handed
back, the process keeps it and does that before it sends anything else, so
that what it sent is never sent again while it lives. A process that dies
in between (a deliverer after sending, a worker before writing what it was
handed back) leaves the claims to run out, and those mails are sent again
then: delivery is at least once, as between mail servers.

In `serve` a claim names its holder (`Claim`): the server, by a name that
stays the same across its restarts, and the deliverer process it is for.
So a claim need not run out when its holder dies: when the worker finds a
new deliverer running (after the old one died, or `serve` was restarted)
it releases the server's claims for any other deliverer (`take_over`),
which are then claimed for the new one at once; and a new worker hands
the deliverer everything still claimed for it again, whose outcomes the
worker before it may have taken with it. The deliverer remembers which
mails it has sent (and how that ended) and hands that back again instead
of sending such a mail twice.
"""

from __future__ import annotations

import logging
import random
import zlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cached_property
from itertools import islice
from typing import TYPE_CHECKING, Any

from pbmserv.mail.backends import Backend, PermanentFailure, TemporaryFailure
from pbmserv.service.delivery.claims import UNOWNED, Claim
from pbmserv.service.intake.arrival import Clock, utc_now
from pbmserv.service.processing.output import CLAIM_SECONDS
from pbmserv.store import outbox
from pbmserv.store.key import ServerKey, is_sealed
from pbmserv.store.owners import ClaimOwner
from pbmserv.store.states import Outbox

if TYPE_CHECKING:
    from pbmserv.store.handles import Connection, Engine

log = logging.getLogger(__name__)

#: outcomes of mails sent, each {row_id, status, attempts, last_error, next_try_at}
Outcomes = list[dict[str, Any]]
#: how many of the mails it sent for good (or gave up) a deliverer remembers, to hand the outcome back again
REMEMBERED_OUTCOMES = 100_000


class OutcomesWaiting(Exception):
    """The outcomes of mails sent could not be handed back yet; nothing more is sent until they are."""


@dataclass
class Delivery:
    engine: Engine
    backend: Backend
    sender: str
    #: the server's key, to open a mail that waits sealed (it carries a reply address)
    key_of: Callable[[], ServerKey]
    clock: Clock = utc_now
    max_attempts: int = 8
    first_retry_seconds: float = 60.0
    batch: int = 50
    claim_seconds: float = CLAIM_SECONDS
    #: who writes the outcomes of the mails sent (`serve`: the worker); None: this process, in a transaction of its own
    hand_back: Callable[[Outcomes], Outcomes] | None = None
    #: in `serve`'s worker and deliverer: the lock that tells other servers this one lives (`store.owners`)
    claim_owner: ClaimOwner | None = None
    #: more sessions with the relay, each sending its share of a batch at the same time as `backend`
    more_sessions: list[Backend] = field(default_factory=list)

    def __post_init__(self) -> None:
        #: outcomes of mails sent that are not written yet
        self._unrecorded: list[dict[str, object]] = []
        #: inbound mails handed over whose replies are not read yet, and outbox mails handed over
        self._handed_over: list[int] = []
        self._handed_over_mails: list[int] = []
        #: the final outcomes of the mails this process sent, by outbox id, oldest first
        self._finished: dict[int, dict[str, object]] = {}
        #: mails handed over and read, not yet sent, by outbox id
        self._queued: dict[int, Any] = {}

    def retry_delay(self, attempts: int) -> timedelta:
        """Exponential backoff with jitter, so many failed mails do not retry in step."""
        base = self.first_retry_seconds * 2 ** (attempts - 1)
        return timedelta(seconds=base * random.uniform(0.8, 1.2))

    def deliver_due(self) -> int:
        """Send every mail that is due; returns how many were sent."""
        self._record()
        sent = 0
        while claimed := self._claim():
            sent += self._send_all(claimed)
        return sent

    @property
    def has_queued(self) -> bool:
        """Whether mail handed over waits to be sent (`deliver_handed_over` sends a batch a call)."""
        return bool(self._queued)

    def deliver_handed_over(self, inbound_ids: Sequence[int], outbox_ids: Sequence[int] = (), claim: Claim = UNOWNED) -> int:
        """Send a batch of the mail handed over: the replies to these
        inbound mails that the worker wrote claimed for this process
        (`claim`), these outbox mails it claimed for it, and what was
        handed over before and is not sent yet; returns how many were
        sent. Mail to players goes first, then the rest in the order it
        was queued, so that a player's reply handed over now never waits
        behind a flood of replies to strangers handed over before it."""
        if self.claim_owner is not None:
            self.claim_owner.keep()
        self._handed_over += inbound_ids
        self._handed_over_mails += outbox_ids
        self._record()
        if self._handed_over or self._handed_over_mails:
            rows = outbox.read_handed_over(self.engine, self._handed_over, self._handed_over_mails, claim.token)
            self._handed_over, self._handed_over_mails = [], []
            again = [self._finished[row.id] for row in rows if row.id in self._finished]
            if again:  # sent before, but how it went was lost with a worker
                log.info("%s mails handed over again were sent already; handing their outcomes back again", len(again))
                self._unrecorded += again
                self._record()
            self._queued.update((row.id, row) for row in rows if row.id not in self._finished)
        batch = sorted(self._queued.values(), key=lambda row: (not row.to_player, row.id))[:self.batch]
        for row in batch:
            del self._queued[row.id]
        return self._send_all(batch) if batch else 0

    def _claim(self) -> list[Any]:
        """The due mails, each claimed in a short transaction of its own, so
        that neither a slow relay nor a big batch holds up the database."""
        now = self.clock()
        with self.engine.begin() as connection:
            return list(outbox.claim_due(connection, now, now + timedelta(seconds=self.claim_seconds), self.batch))

    def _send_all(self, rows: list[Any]) -> int:
        """Send the claimed mails, then write down how each went; returns
        how many were sent. With more than one session, each sends the
        mails of its share of the recipients, in order, at the same time."""
        sessions = [self.backend, *self.more_sessions][:max(1, len({row.recipient for row in rows}))]
        shares: list[list[Any]] = [[] for _ in sessions]
        for row in rows:
            shares[zlib.crc32(row.recipient.encode()) % len(sessions)].append(row)
        if len(sessions) == 1:
            sent = [self._send_share(self.backend, rows)]
        else:
            with ThreadPoolExecutor(len(sessions)) as pool:
                sent = list(pool.map(self._send_share, sessions, shares))
        failure_of = {row.id: failure for share, failures in zip(shares, sent) for row, failure in zip(share, failures)}
        outcomes = [self._outcome(row, failure_of[row.id]) for row in rows]
        self._remember(outcomes)
        self._unrecorded += outcomes
        self._record()
        return sum(1 for outcome in outcomes if outcome["status"] == Outbox.SENT)

    def _record(self) -> None:
        """Write the outcomes of the mails sent, or hand them back to the
        worker to write. When that cannot be done (another writer holds the
        database too long, the worker reads none), they stay in this process
        and an error is raised; every later call does it first, before it
        reads or sends anything, until they are in. Meanwhile the mails'
        claims keep other processes off them (for `claim_seconds`), and this
        process reads them again only once they are recorded as sent."""
        if not self._unrecorded:
            return
        if self.hand_back is not None:
            self._unrecorded = self.hand_back(self._unrecorded)
            if self._unrecorded:
                raise OutcomesWaiting(f"{len(self._unrecorded)} outcomes wait for the worker to take them")
            return
        with self.engine.begin() as connection:
            outbox.write_outcomes(connection, self._unrecorded)
        self._unrecorded = []

    def _remember(self, outcomes: Outcomes) -> None:
        """Keep the outcomes of the mails done with (sent, or given up), the newest `REMEMBERED_OUTCOMES`."""
        self._finished.update((outcome["row_id"], outcome) for outcome in outcomes if outcome["status"] != Outbox.PENDING)
        for row_id in list(islice(self._finished, max(0, len(self._finished) - REMEMBERED_OUTCOMES))):
            del self._finished[row_id]

    @cached_property
    def _key(self) -> ServerKey:
        return self.key_of()

    def _send_share(self, backend: Backend, rows: list[Any]) -> list[Exception | None]:
        """Send these mails in one session of `backend`; what went wrong with each (None: nothing)."""
        try:
            failures = [self._send(backend, row) for row in rows]
        finally:
            unsafe = self._close(backend)
        if unsafe is not None:  # none of what the backend took in this session is safe with it
            failures = [unsafe if failure is None else failure for failure in failures]
        return failures

    def _send(self, backend: Backend, row: Any) -> Exception | None:
        """None when the backend took the mail, else what went wrong."""
        recipient, raw = row.recipient, row.raw
        try:
            backend.send(self.sender, recipient, self._key.unseal(raw) if is_sealed(raw) else raw, f"{row.id}.{row.message_id}")
        except (PermanentFailure, TemporaryFailure) as failure:
            return failure
        except Exception as error:  # a backend's bug must not strand the batch's other mails
            log.exception("delivery to %s failed unexpectedly", recipient)
            return TemporaryFailure(f"{type(error).__name__}: {error}")
        return None

    def _close(self, backend: Backend) -> TemporaryFailure | None:
        try:
            backend.close()
        except TemporaryFailure as failure:
            log.warning("a batch did not reach the %s safely: %s", type(backend).__name__, failure)
            return failure
        return None

    def _outcome(self, row: Any, failure: Exception | None) -> dict[str, object]:
        attempts = row.attempts + 1
        outcome: dict[str, object] = {
            "row_id": row.id, "attempts": attempts, "status": Outbox.SENT, "last_error": "", "next_try_at": self.clock(),
        }
        if failure is None:
            return outcome
        outcome["last_error"] = str(failure)
        fields = {"outbox_id": row.id, "recipient": row.recipient, "attempt": attempts, "error": str(failure)}
        if isinstance(failure, PermanentFailure) or attempts >= self.max_attempts:
            outcome["status"] = Outbox.DEAD
            why = "refused for good" if isinstance(failure, PermanentFailure) else "no attempt left"
            log.error(
                "outbox %s to %s: attempt %s failed: %s; %s, it is a dead letter", row.id, row.recipient, attempts, failure,
                why, extra={**fields, "outcome": "dead"},
            )
        else:
            outcome["status"] = Outbox.PENDING
            next_try = self.clock() + self.retry_delay(attempts)
            outcome["next_try_at"] = next_try
            log.warning(
                "outbox %s to %s: attempt %s failed: %s; next try at %s", row.id, row.recipient, attempts, failure,
                f"{next_try:%Y-%m-%dT%H:%M:%S%z}", extra={**fields, "outcome": "retry", "next_try": next_try.isoformat()},
            )
        return outcome


def take_over(connection: Connection, claim: Claim, now: datetime) -> list[int]:
    """In the worker's transaction, once for each deliverer it finds
    running (`claim`): release this server's claims for every other
    deliverer (gone, and so are the workers and servers that claimed for
    them: a `serve` takes its processes with it when it dies), to be
    claimed for this one as they are now due; returns the ids of the mails
    claimed for this one, to hand over again."""
    released = outbox.release_claims(connection, claim.by, claim.token, now)
    if released:
        log.info("released %s claims of deliverers that are gone", released, extra={"released": released})
    return outbox.held(connection, claim.by, claim.token)


def claim_due(connection: Connection, claim: Claim, now: datetime, most: int) -> list[int]:
    """Claim up to `most` mails that are due for the deliverer `claim`
    names, in the worker's transaction; their ids."""
    rows = outbox.claim_due(connection, now, now + timedelta(seconds=CLAIM_SECONDS), most, claim.by, claim.token)
    return [row.id for row in rows]
