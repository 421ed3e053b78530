"""Working the outbox: send what is due, retry with backoff, give up in the end.

A mail is sent by the process that has claimed it: its next try is moved
`claim_seconds` on, so that no other process takes it up meanwhile. Either
a deliverer claims the mails that are due (`deliver_due`), or, in `serve`,
the worker writes its replies claimed already and hands their inbound ids
to the deliverer after the commit (`deliver_handed_over`), which then
reads them without taking SQLite's write lock. Mail is sent outside any
transaction, and how it went is written afterwards. When that cannot be
written (another writer holds the database longer than the busy timeout),
the process keeps it and writes it before it sends anything else, so
that what it sent is never sent again while it lives. A process that
dies in between leaves its claims to run out, and those mails are sent
again then: delivery is at least once, as between mail servers.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import Engine, Row, bindparam, select, update

from pbmserv.mail.backends import Backend, PermanentFailure, TemporaryFailure
from pbmserv.service.processor import CLAIM_SECONDS, Clock, utc_now
from pbmserv.store.database import reading
from pbmserv.store.models import OutboxMail

log = logging.getLogger(__name__)

OUTBOX = OutboxMail.__table__
#: what sending a mail needs of its row
_SENDABLE = select(OUTBOX.c.id, OUTBOX.c.recipient, OUTBOX.c.raw, OUTBOX.c.attempts)
_DUE = (
    _SENDABLE
    .where(OUTBOX.c.status == "pending", OUTBOX.c.next_try_at <= bindparam("now"))
    .order_by(OUTBOX.c.id)
    .limit(bindparam("most"))
    .with_for_update(skip_locked=True)
)
_CLAIM = update(OUTBOX).where(OUTBOX.c.id.in_(bindparam("ids", expanding=True))).values(next_try_at=bindparam("until"))
_HANDED_OVER = (
    _SENDABLE
    .where(
        OUTBOX.c.inbound_id.in_(bindparam("inbound_ids", expanding=True)),
        OUTBOX.c.status == "pending", OUTBOX.c.attempts == 0,
    )
    .order_by(OUTBOX.c.id)
)
_OUTCOME = (
    update(OUTBOX)
    .where(OUTBOX.c.id == bindparam("row_id"))
    .values(
        status=bindparam("status"), attempts=bindparam("attempts"), last_error=bindparam("last_error"),
        next_try_at=bindparam("next_try_at"),
    )
)


@dataclass
class Delivery:
    engine: Engine
    backend: Backend
    sender: str
    clock: Clock = utc_now
    max_attempts: int = 8
    first_retry_seconds: float = 60.0
    batch: int = 50
    claim_seconds: float = CLAIM_SECONDS

    def __post_init__(self) -> None:
        #: outcomes of mails sent that are not written yet
        self._unrecorded: list[dict[str, object]] = []
        #: inbound mails handed over whose replies are not read yet
        self._handed_over: list[int] = []

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

    def deliver_handed_over(self, inbound_ids: list[int]) -> int:
        """Send the replies to these inbound mails that the worker wrote
        claimed for this process, and to those handed over before that
        could not be read then; returns how many were sent."""
        self._handed_over += inbound_ids
        self._record()
        if not self._handed_over:
            return 0
        with reading(self.engine) as connection:
            rows = connection.execute(_HANDED_OVER, {"inbound_ids": self._handed_over}).all()
        self._handed_over = []
        return self._send_all(rows)

    def _claim(self) -> list[Row]:
        """The due mails, each claimed in a short transaction of its own, so
        that neither a slow relay nor a big batch holds up the database."""
        now = self.clock()
        with self.engine.begin() as connection:
            rows = connection.execute(_DUE, {"now": now, "most": self.batch}).all()
            if rows:
                until = now + timedelta(seconds=self.claim_seconds)
                connection.execute(_CLAIM, {"ids": [row.id for row in rows], "until": until})
        return rows

    def _send_all(self, rows: list[Row]) -> int:
        """Send the claimed mails, then write down how each went; returns how many were sent."""
        try:
            failures = [self._send(row.recipient, row.raw) for row in rows]
        finally:
            unsafe = self._close()
        if unsafe is not None:  # none of what the backend took in this batch is safe with it
            failures = [unsafe if failure is None else failure for failure in failures]
        outcomes = [self._outcome(row, failure) for row, failure in zip(rows, failures)]
        self._unrecorded += outcomes
        self._record()
        return sum(1 for outcome in outcomes if outcome["status"] == "sent")

    def _record(self) -> None:
        """Write the outcomes of the mails sent. When another writer holds
        the database too long, they stay in this process and the error is
        raised; every later call writes them first, before it reads or
        sends anything, until they are in. Meanwhile the mails' claims keep
        other processes off them (for `claim_seconds`), and this process
        reads them again only once they are recorded as sent."""
        if self._unrecorded:
            with self.engine.begin() as connection:
                connection.execute(_OUTCOME, self._unrecorded)
            self._unrecorded = []

    def _send(self, recipient: str, raw: bytes) -> Exception | None:
        """None when the backend took the mail, else what went wrong."""
        try:
            self.backend.send(self.sender, recipient, raw)
        except (PermanentFailure, TemporaryFailure) as failure:
            return failure
        except Exception as error:  # a backend's bug must not strand the batch's other mails
            log.exception("delivery to %s failed unexpectedly", recipient)
            return TemporaryFailure(f"{type(error).__name__}: {error}")
        return None

    def _close(self) -> TemporaryFailure | None:
        try:
            self.backend.close()
        except TemporaryFailure as failure:
            log.warning("a batch did not reach the %s safely: %s", type(self.backend).__name__, failure)
            return failure
        return None

    def _outcome(self, row: Row, failure: Exception | None) -> dict[str, object]:
        attempts = row.attempts + 1
        outcome: dict[str, object] = {
            "row_id": row.id, "attempts": attempts, "status": "sent", "last_error": "", "next_try_at": self.clock(),
        }
        if failure is None:
            return outcome
        outcome["last_error"] = str(failure)
        fields = {"outbox_id": row.id, "recipient": row.recipient, "attempt": attempts, "error": str(failure)}
        if isinstance(failure, PermanentFailure) or attempts >= self.max_attempts:
            outcome["status"] = "dead"
            why = "refused for good" if isinstance(failure, PermanentFailure) else "no attempt left"
            log.error(
                "outbox %s to %s: attempt %s failed: %s; %s, it is a dead letter", row.id, row.recipient, attempts, failure,
                why, extra={**fields, "outcome": "dead"},
            )
        else:
            outcome["status"] = "pending"
            next_try = self.clock() + self.retry_delay(attempts)
            outcome["next_try_at"] = next_try
            log.warning(
                "outbox %s to %s: attempt %s failed: %s; next try at %s", row.id, row.recipient, attempts, failure,
                f"{next_try:%Y-%m-%dT%H:%M:%S%z}", extra={**fields, "outcome": "retry", "next_try": next_try.isoformat()},
            )
        return outcome
