"""Working the outbox: send what is due, retry with backoff, give up in the end."""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import select
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

    def retry_delay(self, attempts: int) -> timedelta:
        """Exponential backoff with jitter, so many failed mails do not retry in step."""
        base = self.first_retry_seconds * 2 ** (attempts - 1)
        return timedelta(seconds=base * random.uniform(0.8, 1.2))

    def deliver_due(self) -> int:
        """Send every mail that is due; returns how many were sent."""
        sent = 0
        while True:
            with self.sessions.begin() as session:
                rows = list(session.scalars(
                    select(OutboxMail)
                    .where(OutboxMail.status == "pending", OutboxMail.next_try_at <= self.clock())
                    .order_by(OutboxMail.id)
                    .limit(self.batch)
                    .with_for_update(skip_locked=True)
                ))
                if not rows:
                    return sent
                for row in rows:
                    sent += self._attempt(row)

    def _attempt(self, row: OutboxMail) -> int:
        row.attempts += 1
        try:
            self.backend.send(self.sender, row.recipient, row.raw)
        except PermanentFailure as error:
            row.status, row.last_error = "dead", str(error)
            log.warning("outbox %s to %s refused for good: %s", row.id, row.recipient, error)
            return 0
        except TemporaryFailure as error:
            row.last_error = str(error)
            if row.attempts >= self.max_attempts:
                row.status = "dead"
                log.warning("outbox %s to %s given up after %s attempts", row.id, row.recipient, row.attempts)
            else:
                row.next_try_at = self.clock() + self.retry_delay(row.attempts)
            return 0
        row.status, row.last_error = "sent", ""
        return 1
