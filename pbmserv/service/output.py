"""What a batch writes besides the commands' own changes: the outbox rows
of its replies, each mail's outcome and the rate events."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from pbmserv.config import Settings
from pbmserv.mail.inbound import IncomingMail
from pbmserv.mail.outbound import compose
from pbmserv.service.context import Reply
from pbmserv.service.processed import Processed
from pbmserv.service.rates import MailCaps, RateLog
from pbmserv.store import inbound, outbox

if TYPE_CHECKING:
    from pbmserv.store.handles import Connection

log = logging.getLogger("pbmserv.service.processor")  # the name operators filter on

Clock = Callable[[], datetime]
#: how long a process that takes mail to send has it to itself (see `delivery`)
CLAIM_SECONDS = 600.0


class BatchOutput:
    """The replies for the outbox, each mail's outcome and the rate events,
    kept here and written when the batch ends (a statement each for the
    batch instead of for each mail), with the time of writing as the
    mails' `processed_at`. The caps and the rate log count what is kept
    here too."""

    def __init__(self, connection: Connection, clock: Clock, settings: Settings, *, claimed: bool = False):
        self.connection = connection
        self.clock = clock
        #: the replies are written claimed, for the process they are handed over to
        self.claimed = claimed
        self.caps = MailCaps(connection, settings)
        self.events = RateLog(connection)
        self.replies: list[dict[str, object]] = []
        self.answered: set[int] = set()  # the inbound mails with replies written
        self.outcomes: list[dict[str, object]] = []
        #: how each mail went, logged once the batch is committed
        self.processed: list[Processed] = []

    def add(self, replies: list[dict[str, object]], outcome: dict[str, object]) -> None:
        self.replies += replies
        self.outcomes.append(outcome)

    def finish(
        self, row_id: int, composed: list[tuple[str, list[dict[str, object]]]], now: datetime, *,
        status: str = "done", error: str = "", masked: bytes | None = None,
    ) -> None:
        """A mail's replies for the outbox, each only within the hourly caps
        of the address it goes to, and its outcome."""
        rows, held_back = [], Counter[str]()
        for kind, reply_rows in composed:
            for row in reply_rows:
                recipient = str(row["recipient"])
                if self.caps.allows(recipient, kind, now):
                    self.caps.take(recipient, kind)
                    rows.append(row)
                else:
                    held_back[recipient] += 1
        if held_back:
            capped = f"{held_back.total()} mail(s) not sent: {', '.join(held_back)} reached the hourly cap"
            log.warning("inbound %s: %s", row_id, capped)
            error = f"{error}; {capped}" if error else capped
        outcome: dict[str, object] = {"row_id": row_id, "status": status, "error": error}
        if masked is not None:
            outcome["raw"] = masked
        self.add(rows, outcome)

    def write(self) -> None:
        now = self.clock()
        if self.claimed:
            for reply in self.replies:
                reply["next_try_at"] = now + timedelta(seconds=CLAIM_SECONDS)
        self.answered.update(inbound_id for reply in self.replies if isinstance(inbound_id := reply["inbound_id"], int))
        outbox.queue(self.connection, self.replies)
        inbound.write_outcomes(self.connection, self.outcomes, now)
        self.replies, self.outcomes = [], []
        self.caps.written()
        self.events.write()


def outbox_rows(
    sender: str, row_id: int | None, mail: IncomingMail | None, reply: Reply, now: datetime,
) -> list[dict[str, Any]]:
    """The outbox rows of a reply from `sender`, as an answer to `mail` (None: a mail of the server's own)."""
    rows = []
    for recipient in dict.fromkeys(reply.recipients):
        message_id, raw = compose(
            sender=sender, recipient=recipient, subject=reply.subject, body=reply.body, date=now,
            in_reply_to=mail.message_id if mail else "", references=mail.references if mail else "",
        )
        rows.append({
            "created_at": now, "inbound_id": row_id, "recipient": recipient, "message_id": message_id, "raw": raw,
            "status": "pending", "kind": reply.kind, "attempts": 0, "next_try_at": now, "last_error": "",
        })
    return rows
