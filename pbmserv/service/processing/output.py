"""What a batch writes besides the commands' own changes: the outbox rows
of its replies, each mail's outcome and the rate events."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from pbmserv.config import Settings
from pbmserv.mail.inbound import IncomingMail
from pbmserv.mail.outbound import BoardThread, compose, new_message_id
from pbmserv.service.delivery.claims import Claim
from pbmserv.service.processing.answers import pause_notice, within_bounds
from pbmserv.service.processing.context import Reply, as_utc
from pbmserv.service.processing.processed import Processed
from pbmserv.service.processing.rates import MailCaps, RateLog
from pbmserv.store import inbound, outbox
from pbmserv.store.key import ServerKey
from pbmserv.store.states import Inbound, Kind, Outbox

if TYPE_CHECKING:
    from pbmserv.store.handles import Connection

log = logging.getLogger("pbmserv.service.processing.processor")  # the name operators filter on

Clock = Callable[[], datetime]
#: how long a process that takes mail to send has it to itself (see `delivery`)
CLAIM_SECONDS = 600.0


@dataclass(frozen=True)
class Composed:
    """A reply, its outbox rows (one for each recipient) and the mail it
    answers (None: a mail of the server's own), to compose one row again
    with the notice of a pause."""

    reply: Reply
    rows: list[dict[str, object]]
    mail: IncomingMail | None


class BatchOutput:
    """The replies for the outbox, each mail's outcome and the rate events,
    kept here and written when the batch ends (a statement each for the
    batch instead of for each mail), with the time of writing as the
    mails' `processed_at`. The caps and the rate log count what is kept
    here too."""

    def __init__(
        self, connection: Connection, clock: Clock, settings: Settings, key: ServerKey, *, claim: Claim | None = None,
    ):
        self.connection = connection
        self.key = key
        self.clock = clock
        #: the replies are written claimed so, for the process they are handed over to
        self.claim = claim
        self.address = settings.address
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

    def wait_turn(self, row_id: int) -> None:
        """Leave the mail pending, unanswered, to be processed in arrival order."""
        self.add([], {"row_id": row_id, "status": Inbound.PENDING, "error": inbound.WAITS_ITS_TURN})

    def finish(
        self, row_id: int, composed: list[Composed], now: datetime, *,
        status: Inbound = Inbound.DONE, error: str = "", masked: bytes | None = None,
    ) -> None:
        """A mail's replies for the outbox, each only within the hourly caps
        of the address it goes to, and its outcome. The reply that fills a
        cap on answers is composed again with a notice at its top: nothing
        more is answered until when (an address is never left to wonder
        why the server went silent)."""
        rows, held_back = [], Counter[str]()
        for made in composed:
            for row in made.rows:
                recipient, size = str(row["recipient"]), row["size"]
                assert isinstance(size, int), "outbox_rows gives each row its size"
                allowed, pause = self.caps.take(recipient, made.reply.kind, now, size)
                if not allowed:
                    held_back[recipient] += 1
                elif pause is None:
                    rows.append(row)
                else:
                    notice = pause_notice(pause)
                    noticed = replace(
                        made.reply, recipients=(recipient,), body=f"{notice}\n\n{made.reply.body}",
                        html=made.reply.html and replace(made.reply.html, notice=notice),
                    )
                    rows += outbox_rows(self.address, self.key, row_id, made.mail, noticed, now)
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
        if self.claim is not None:
            for reply in self.replies:
                reply["next_try_at"] = now + timedelta(seconds=CLAIM_SECONDS)
                reply["claimed_by"], reply["claim_token"] = self.claim.by, self.claim.token
        self.answered.update(inbound_id for reply in self.replies if isinstance(inbound_id := reply["inbound_id"], int))
        outbox.queue(self.connection, self.replies)
        inbound.write_outcomes(self.connection, self.outcomes, now)
        self.replies, self.outcomes = [], []
        self.caps.written()
        self.events.write()


#: the kinds of mail that answer the mail's sender: asked, if the mail proved the address its writer's
ANSWERING = (Kind.ANSWER, Kind.ERROR)


def compose_replies(
    sender: str, key: ServerKey, row_id: int, mail: IncomingMail | None, replies: list[Reply], now: datetime,
    owned: frozenset[str] = frozenset(),
) -> list[Composed]:
    """Each reply to `mail` with its outbox rows, for `BatchOutput.finish`.
    An answer or error to addresses the mail proved its writer owns
    (`owned`, `Proof.owned`) is asked (`Kind.ASKED`): the owner asked for it, so it is
    counted apart from what mail that proves nothing may have an address
    sent, which a forger of the From can spend (`service.rates.CAPS`)."""
    asked = [
        replace(reply, kind=Kind.ASKED)
        if reply.kind in ANSWERING and all(recipient.lower() in owned for recipient in reply.recipients) else reply
        for reply in replies
    ]
    return [Composed(reply, outbox_rows(sender, key, row_id, mail, reply, now), mail) for reply in asked]


def outbox_rows(
    sender: str, key: ServerKey, row_id: int | None, mail: IncomingMail | None, reply: Reply, now: datetime,
) -> list[dict[str, Any]]:
    """The outbox rows of a reply from `sender`, as an answer to `mail` (None: a mail of the server's own).
    A mail that carries a reply address waits in the outbox sealed, and is kept so once sent."""
    rows = []
    if mail is not None and _nowhere(mail.sender):  # a bot's move: the players never saw its mail
        mail = None
    body = within_bounds(reply.body)
    domain = sender.rpartition("@")[2] or "localhost"
    for recipient in dict.fromkeys(reply.recipients):
        if _nowhere(recipient):
            continue
        own_id, in_reply_to, references = _place(key, domain, reply.thread, mail, recipient)
        message_id, raw = compose(
            sender=sender, recipient=recipient, subject=reply.subject, body=body, date=now, message_id=own_id,
            in_reply_to=in_reply_to, references=references, reply_to=reply.reply_to, html=reply.html,
            attachments=reply.attachments,
        )
        if reply.reply_to:
            raw = key.seal(raw)
        rows.append({
            "created_at": now, "inbound_id": row_id, "recipient": recipient, "message_id": message_id, "raw": raw,
            "size": len(raw),
            "status": Outbox.PENDING, "kind": reply.kind, "attempts": 0, "next_try_at": now, "last_error": "",
            "claimed_by": "", "claim_token": "",
        })
    return rows


def _place(
    key: ServerKey, domain: str, thread: BoardThread | None, mail: IncomingMail | None, recipient: str,
) -> tuple[str, str, str]:
    """The Message-ID, In-Reply-To and References of a mail to `recipient`.
    A mail of a board's thread refers to the board's first mail to that
    recipient (whose Message-ID is `thread_root`), and, if it answers the
    recipient's own mail, to that mail too: no mail refers to one its
    recipient never had. Any other mail answers the mail it is a reply to."""
    if thread is None:
        return "", mail.message_id if mail else "", mail.references if mail else ""
    root = thread_root(key, domain, thread, recipient)
    answered = mail if mail is not None and mail.message_id and mail.sender.lower() == recipient.lower() else None
    if thread.first:
        return root, answered.message_id if answered else "", answered.references if answered else ""
    own_id = new_message_id(domain, chat=thread.chat)
    if answered is None:
        return own_id, root, ""
    return own_id, answered.message_id, f"{root} {answered.references}"


def thread_root(key: ServerKey, domain: str, thread: BoardThread, recipient: str) -> str:
    """The Message-ID of the board's first mail to `recipient`, made again
    by any later mail from what the board always has (no column keeps it):
    its row, its game and number and when it began. The code hides the
    recipient's address from whoever sees the ID."""
    began = str(int(as_utc(thread.created_at).timestamp()))
    code = key.code("board thread", thread.game, str(thread.board), str(thread.board_id), began, recipient.lower(), length=16)
    return f"<board.{thread.game}.{thread.board}.{code}@{domain}>"


def _nowhere(address: str) -> bool:
    """An address in `.invalid` (RFC 2606), which exists nowhere: a bot's (`service.bot_turns`)."""
    return address.lower().endswith(".invalid")
