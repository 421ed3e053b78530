"""Working the outbox: send what is due, retry with backoff, give up in the end."""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import select, update
from sqlalchemy.orm import sessionmaker

from pbmserv.mail.backends import Backend, PermanentFailure, TemporaryFailure
from pbmserv.service.processor import Clock, utc_now
from pbmserv.store.models import OutboxMail

log = logging.getLogger(__name__)


@dataclass
class Delivery:
    sessions: sessionmaker
    backend: Backend
    sender: str
    clock: Clock = utc_now
    max_attempts: int = 8
    first_retry_seconds: float = 60.0
    batch: int = 50
    claim_seconds: float = 600.0

    def retry_delay(self, attempts: int) -> timedelta:
        """Exponential backoff with jitter, so many failed mails do not retry in step."""
        base = self.first_retry_seconds * 2 ** (attempts - 1)
        return timedelta(seconds=base * random.uniform(0.8, 1.2))

    def deliver_due(self) -> int:
        """Send every mail that is due; returns how many were sent."""
        sent = 0
        while claimed := self._claim():
            outcomes = [(row_id, self._send(recipient, raw)) for row_id, recipient, raw in claimed]
            self._record(outcomes)
            sent += sum(1 for _, failure in outcomes if failure is None)
        return sent

    def _claim(self) -> list[tuple[int, str, bytes]]:
        """The due mails, each claimed for `claim_seconds` by moving its next
        try that far on, in a short transaction of its own: mail is sent
        outside any transaction, so neither a slow relay nor a big batch
        holds up the database (SQLite has one write lock for SMTP intake and
        the processor too). A process that dies while sending leaves its
        claims to run out, and those mails are sent again then: delivery is
        at least once, as between mail servers."""
        now = self.clock()
        with self.sessions.begin() as session:
            rows = session.execute(
                select(OutboxMail.id, OutboxMail.recipient, OutboxMail.raw)
                .where(OutboxMail.status == "pending", OutboxMail.next_try_at <= now)
                .order_by(OutboxMail.id)
                .limit(self.batch)
                .with_for_update(skip_locked=True)
            ).all()
            if rows:
                session.execute(
                    update(OutboxMail)
                    .where(OutboxMail.id.in_([row.id for row in rows]))
                    .values(next_try_at=now + timedelta(seconds=self.claim_seconds))
                )
        return [(row.id, row.recipient, row.raw) for row in rows]

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

    def _record(self, outcomes: list[tuple[int, Exception | None]]) -> None:
        with self.sessions.begin() as session:
            delivered = [row_id for row_id, failure in outcomes if failure is None]
            if delivered:
                session.execute(
                    update(OutboxMail)
                    .where(OutboxMail.id.in_(delivered))
                    .values(status="sent", last_error="", attempts=OutboxMail.attempts + 1)
                )
            failed = {row_id: failure for row_id, failure in outcomes if failure is not None}
            for row in session.scalars(select(OutboxMail).where(OutboxMail.id.in_(list(failed)))) if failed else ():
                self._failed(row, failed[row.id])

    def _failed(self, row: OutboxMail, failure: Exception) -> None:
        row.attempts += 1
        row.last_error = str(failure)
        if isinstance(failure, PermanentFailure):
            row.status = "dead"
            log.warning("outbox %s to %s refused for good: %s", row.id, row.recipient, failure)
        elif row.attempts >= self.max_attempts:
            row.status = "dead"
            log.warning("outbox %s to %s given up after %s attempts", row.id, row.recipient, row.attempts)
        else:
            row.next_try_at = self.clock() + self.retry_delay(row.attempts)
