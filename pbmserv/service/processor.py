"""The transactional heart: an inbound mail is processed in one database
transaction that applies its commands, writes its replies to the outbox and
marks it done — all of it or nothing."""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from email import policy

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.config import Settings
from pbmserv.mail.inbound import IncomingMail, parse_mail, read_identity
from pbmserv.mail.loops import no_reply_reason
from pbmserv.mail.outbound import compose, encoded_subject, text_message
from pbmserv.protocol import ParseError, parse_request, probable_passwords
from pbmserv.protocol.commands import MASK, GameCommand
from pbmserv.service import timers
from pbmserv.service.catalog import Catalog
from pbmserv.service.context import Context, Reply
from pbmserv.service.dispatch import execute
from pbmserv.service.errors import ServiceError
from pbmserv.service.passwords import Passwords
from pbmserv.service.views import wrap
from pbmserv.store.models import InboundMail, OutboxMail

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def dedup_key(raw: bytes, envelope_sender: str, message_id: str) -> str:
    """Same Message-ID from the same sender, or the same bytes without one, is the same mail."""
    if message_id:
        basis = f"{envelope_sender.lower()}\0{message_id}".encode()
    else:
        basis = raw
    return hashlib.sha256(basis).hexdigest()


@dataclass
class Processor:
    sessions: sessionmaker
    settings: Settings
    catalog: Catalog
    clock: Clock = utc_now

    def __post_init__(self) -> None:
        self.passwords = Passwords(self.settings)

    # -- intake ------------------------------------------------------------
    def store(self, raw: bytes, envelope_sender: str | None = None) -> tuple[int, bool]:
        """Commit the raw mail; returns (row id, True if it was a duplicate)."""
        reply_to, message_id = read_identity(raw)
        sender = envelope_sender if envelope_sender is not None else reply_to
        key = dedup_key(raw, sender, message_id)
        try:
            with self.sessions.begin() as session:
                row = InboundMail(
                    received_at=self.clock(), envelope_sender=sender, message_id=message_id,
                    dedup_key=key, raw=raw, status="pending", error="",
                )
                session.add(row)
                session.flush()
                return row.id, False
        except IntegrityError:
            with self.sessions() as session:
                existing = session.scalar(select(InboundMail.id).where(InboundMail.dedup_key == key))
            if existing is None:
                raise
            return existing, True

    # -- processing ----------------------------------------------------------
    def process_pending(self) -> int:
        """Process every pending inbound mail in arrival order; returns how many."""
        count = 0
        while self.process_next():
            count += 1
        return count

    def process_next(self) -> bool:
        """Process the oldest pending mail, if any. Mails are processed one at
        a time in arrival order, also across processes: a later mail (a move)
        may depend on an earlier one (the challenge). A process that finds the
        oldest mail locked waits for it, then finds it done and returns."""
        with self.sessions.begin() as session:
            row = session.scalar(
                select(InboundMail)
                .where(InboundMail.status == "pending")
                .order_by(InboundMail.id)
                .limit(1)
                .with_for_update()
            )
            if row is None:
                return False
            self._process(session, row)
            return True

    def _process(self, session: Session, row: InboundMail) -> None:
        now = self.clock()
        mail = parse_mail(row.raw)
        row.processed_at = now
        reason = no_reply_reason(mail, row.envelope_sender)
        if reason is not None:
            row.status, row.error = "dropped", reason
            log.info("inbound %s dropped: %s", row.id, reason)
            return
        request = parse_request(mail.subject, mail.body, self.catalog.names())
        secrets = tuple(s for line in request.lines for s in probable_passwords(line.text))
        replies: list[Reply] = []
        try:
            with session.begin_nested():
                for line in request.lines:
                    replies += self._run_line(session, mail, line, request.comment, now, secrets)
            row.status = "done"
        except Exception as error:  # a bug must not lose the mail or half-apply it
            log.exception("inbound %s failed", row.id)
            row.status, row.error = "failed", f"{type(error).__name__}: {error}"
            replies = [Reply((mail.sender,), "pbmserv Error", (
                "The server failed while handling your mail; nothing in it was carried out.\n"
                "The operator has been told. Please try again later.\n\n" + quote(mail, secrets)
            ), "error")]
        held_back = 0
        for reply in replies:
            if reply.kind != "board" and self._over_cap(session, mail.sender, reply.kind, now):
                held_back += 1
                continue
            self._queue(session, row, mail, reply, now)
        if held_back:
            row.error = f"{held_back} answer(s) not sent: {mail.sender} reached the hourly reply cap"
            log.warning("inbound %s: %s", row.id, row.error)
        if secrets:
            row.raw = masked_copy(mail, secrets)

    def run_timers(self) -> list[str]:
        """One pass of reminders and forfeits (and of vacations that ran out),
        in one transaction with its mails; returns a line for each thing done."""
        now = self.clock()
        with self.sessions.begin() as session:
            ctx = Context(session, self.settings, self.catalog, self.passwords, now, "")
            replies, report = timers.run(ctx)
            for reply in replies:
                self._queue(session, None, None, reply, now)
        return report

    def _run_line(self, session: Session, mail: IncomingMail, line, comment: str, now: datetime, secrets) -> list[Reply]:  # type: ignore[no-untyped-def]
        ctx = Context(session, self.settings, self.catalog, self.passwords, now, mail.sender, comment)
        if line.error is not None:
            return [error_reply(mail, line.error, self.catalog, secrets)]
        try:
            with session.begin_nested():
                return execute(ctx, line.command)
        except ServiceError as error:
            if error.game is None and isinstance(line.command, GameCommand):
                error.game = line.command.game
                error.board = getattr(line.command, "board", None)
            return [error_reply(mail, error, self.catalog, secrets)]

    def _over_cap(self, session: Session, recipient: str, kind: str, now: datetime) -> bool:
        """Whether `recipient` had as many answers (of this kind, for errors) in the last hour as allowed."""
        kinds = ("error",) if kind == "error" else ("answer", "error")
        cap = self.settings.error_replies_per_hour if kind == "error" else self.settings.replies_per_hour
        recent = session.scalar(
            select(func.count(OutboxMail.id)).where(
                OutboxMail.recipient == recipient,
                OutboxMail.kind.in_(kinds),
                OutboxMail.created_at > now - timedelta(hours=1),
            )
        )
        return (recent or 0) >= cap

    def _queue(
        self, session: Session, row: InboundMail | None, mail: IncomingMail | None, reply: Reply, now: datetime,
    ) -> None:
        """Put the reply in the outbox, as an answer to `mail` (None: a mail of the server's own)."""
        for recipient in dict.fromkeys(reply.recipients):
            message_id, raw = compose(
                sender=self.settings.address, recipient=recipient, subject=reply.subject, body=reply.body, date=now,
                in_reply_to=mail.message_id if mail else "", references=mail.references if mail else "",
            )
            session.add(OutboxMail(
                created_at=now, inbound_id=row.id if row else None, recipient=recipient,
                message_id=message_id, raw=raw,
                status="pending", kind=reply.kind, attempts=0, next_try_at=now, last_error="",
            ))


def error_subject(error: ParseError | ServiceError, catalog: Catalog) -> str:
    if error.game and error.game in catalog:
        title = catalog.get(error.game).title
        if error.board is not None:
            return f"{title} Board {error.board} Error"
        return f"{title} Error"
    return "pbmserv Error"


def error_reply(mail: IncomingMail, error: ParseError | ServiceError, catalog: Catalog, secrets: tuple[str, ...]) -> Reply:
    hint = error.hint if isinstance(error, ServiceError) else error.syntax
    parts = [wrap(mask(error.message, secrets), hang="")]
    if hint:
        parts.append(wrap(f"How to do it right: {hint}"))
    if isinstance(error, ServiceError) and error.board_text:
        parts += ["", error.board_text.rstrip("\n")]
    parts += ["", quote(mail, secrets)]
    return Reply((mail.sender,), error_subject(error, catalog), "\n".join(parts), "error")


def mask(text: str, secrets: tuple[str, ...]) -> str:
    for secret in sorted(set(secrets), key=len, reverse=True):
        if secret:
            text = re.sub(rf"(?<!\S){re.escape(secret)}(?!\S)", MASK, text)
    return text


def quote(mail: IncomingMail, secrets: tuple[str, ...]) -> str:
    lines = [f"Subject: {mail.subject}", *([""] + mail.body.splitlines() if mail.body else [])]
    return "Your mail:\n" + "\n".join(f"> {mask(line, secrets)}".rstrip() for line in lines)


def masked_copy(mail: IncomingMail, secrets: tuple[str, ...]) -> bytes:
    """What is kept of a processed mail that carried passwords: its headers
    that matter and its text, with every password replaced by a mask."""
    copy = text_message(mask(mail.text, secrets) + "\n")
    for name in ("From", "Reply-To", "To", "Date", "Message-ID", "In-Reply-To", "References"):
        if mail.headers.get(name.lower()):
            copy[name] = mail.headers[name.lower()]
    copy["Subject"] = encoded_subject(mask(mail.subject, secrets))
    copy["X-Pbmserv-Masked"] = "passwords removed after processing"
    return copy.as_bytes(policy=policy.SMTP)
