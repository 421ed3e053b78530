"""The transactional heart: an inbound mail is processed in one database
transaction that applies its commands, writes its replies to the outbox and
marks it done — all of it or nothing."""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from sqlalchemy import Connection, Engine, Row, bindparam, func, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

from pbmserv.config import Settings
from pbmserv.mail.inbound import IncomingMail, parse_mail, read_identity
from pbmserv.mail.loops import no_reply_reason
from pbmserv.mail.outbound import compose, message_bytes
from pbmserv.protocol import ParseError, Request, parse_request, probable_passwords
from pbmserv.protocol.commands import MASK, GameCommand
from pbmserv.service import timers
from pbmserv.service.catalog import Catalog
from pbmserv.service.context import Context, Reply
from pbmserv.service.dispatch import execute
from pbmserv.service.errors import ServiceError
from pbmserv.service.passwords import Passwords
from pbmserv.service.views import wrap
from pbmserv.store.database import lost_a_race, savepoint, writing
from pbmserv.store.models import InboundMail, OutboxMail
from pbmserv.store.spool import Arrival, Spool

log = logging.getLogger(__name__)

INBOUND = InboundMail.__table__
OUTBOX = OutboxMail.__table__
_PENDING = (
    select(INBOUND.c.id, INBOUND.c.dedup_key, INBOUND.c.raw, INBOUND.c.envelope_sender)
    .where(INBOUND.c.status == "pending")
    .order_by(INBOUND.c.id)
    .limit(bindparam("most"))
    .with_for_update()
)
_PENDING_ONE = (
    select(INBOUND.c.id, INBOUND.c.raw)
    .where(INBOUND.c.dedup_key == bindparam("dedup_key"), INBOUND.c.status == "pending")
    .with_for_update()
)
_MARK = (
    update(INBOUND)
    .where(INBOUND.c.id == bindparam("row_id"))
    .values(status=bindparam("status"), error=bindparam("error"), processed_at=bindparam("processed_at"))
)
_MARK_MASKED = _MARK.values(raw=bindparam("raw"))
_QUEUE = insert(OUTBOX)
_RECENT_ANSWERS = select(func.count(OUTBOX.c.id)).where(
    OUTBOX.c.recipient == bindparam("recipient"),
    OUTBOX.c.kind.in_(bindparam("kinds", expanding=True)),
    OUTBOX.c.created_at > bindparam("since"),
)


def _new_mails(dialect_insert: Callable[[Any], Any]) -> Any:
    """Insert mails whose dedup key is new; a key already stored (by
    another process meanwhile, or an earlier admission) is left out, not
    an error (which, on PostgreSQL, would also abort psycopg's pipeline)."""
    return dialect_insert(INBOUND).on_conflict_do_nothing(index_elements=[INBOUND.c.dedup_key])


#: by dialect, giving back (dedup key, id) of each mail stored
_STORE = {
    name: _new_mails(dialect_insert).returning(INBOUND.c.dedup_key, INBOUND.c.id)
    for name, dialect_insert in (("postgresql", postgresql.insert), ("sqlite", sqlite.insert))
}
_ADMIT = _new_mails(sqlite.insert)
_STORED = select(INBOUND.c.dedup_key, INBOUND.c.id).where(INBOUND.c.dedup_key.in_(bindparam("keys", expanding=True)))

Clock = Callable[[], datetime]
#: running boards the timer pass checks in one transaction
TIMER_BOARDS_PER_TRANSACTION = 50
#: spooled mails a batch moves into the database at most
ADMITTED_PER_BATCH = 200
#: how long a process that takes mail to send has it to itself (see `delivery`)
CLAIM_SECONDS = 600.0


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def dedup_key(raw: bytes, envelope_sender: str, message_id: str) -> str:
    """Same Message-ID from the same sender, or the same bytes without one, is the same mail."""
    if message_id:
        basis = f"{envelope_sender.lower()}\0{message_id}".encode()
    else:
        basis = raw
    return hashlib.sha256(basis).hexdigest()


class BatchOutput:
    """What processing writes besides the commands' own changes: the replies
    for the outbox and each mail's outcome, kept here and written when the
    batch ends (two statements for the batch instead of two for each mail),
    with the time of writing as the mails' `processed_at`. The hourly reply
    caps count the outbox, so `write` comes first there."""

    def __init__(self, connection: Connection, clock: Clock, *, claimed: bool = False):
        self.connection = connection
        self.clock = clock
        #: the replies are written claimed, for the process they are handed over to
        self.claimed = claimed
        self.replies: list[dict[str, object]] = []
        self.answered: set[int] = set()  # the inbound mails with replies written
        self.outcomes: list[dict[str, object]] = []
        self.masked_outcomes: list[dict[str, object]] = []

    def add(self, replies: list[dict[str, object]], outcome: dict[str, object]) -> None:
        self.replies += replies
        (self.outcomes if "raw" not in outcome else self.masked_outcomes).append(outcome)

    def write(self) -> None:
        now = self.clock()
        for outcome in (*self.outcomes, *self.masked_outcomes):
            outcome["processed_at"] = now
        if self.claimed:
            for reply in self.replies:
                reply["next_try_at"] = now + timedelta(seconds=CLAIM_SECONDS)
        self.answered.update(reply["inbound_id"] for reply in self.replies if reply["inbound_id"] is not None)  # type: ignore[misc]
        for statement, rows in ((_QUEUE, self.replies), (_MARK, self.outcomes), (_MARK_MASKED, self.masked_outcomes)):
            if rows:
                self.connection.execute(statement, rows)
                rows.clear()


@dataclass
class Processor:
    engine: Engine
    settings: Settings
    catalog: Catalog
    clock: Clock = utc_now
    #: where SMTP intake keeps mail on SQLite (see `pbmserv.store.spool`); None: straight into the database
    spool: Spool | None = None

    def __post_init__(self) -> None:
        self.passwords = Passwords(self.settings)

    # -- intake ------------------------------------------------------------
    def store(self, raw: bytes, envelope_sender: str | None = None) -> tuple[int, bool]:
        """Commit the raw mail; returns (row id, True if it was a duplicate)."""
        return self.store_many([(raw, envelope_sender)])[0]

    def store_many(self, mails: list[tuple[bytes, str | None]]) -> list[tuple[int, bool]]:
        """Commit several raw mails in one transaction; returns (row id, True
        if it was a duplicate) for each. A mail that another process
        stores at the same moment is left to it and counted a duplicate
        here. On PostgreSQL the two transactions may deadlock, and one is
        rolled back; it is then done again, and finds that process's mails
        stored. Each time, one more of the mails is stored, so this ends."""
        identified = [self._arrival(raw, envelope_sender) for raw, envelope_sender in mails]
        return self._store_racing(identified)

    def _store_racing(self, identified: list[Arrival]) -> list[tuple[int, bool]]:
        for _ in range(len(identified)):
            try:
                return self._store_identified(identified)
            except DBAPIError as error:
                if not lost_a_race(error):
                    raise
        return self._store_identified(identified)

    def accept(self, mails: list[tuple[bytes, str | None]]) -> None:
        """Commit mails that arrived together, before they are acknowledged
        (SMTP intake): into the spool when there is one, else into the
        database, in one transaction either way (under load the write lock
        changes hands once per group, not once per mail)."""
        if self.spool is None:
            self.store_many(mails)
        else:
            self.spool.append([self._arrival(raw, envelope_sender) for raw, envelope_sender in mails])

    def _arrival(self, raw: bytes, envelope_sender: str | None) -> Arrival:
        reply_to, message_id = read_identity(raw)
        sender = envelope_sender if envelope_sender is not None else reply_to
        return Arrival(self.clock(), sender, message_id, dedup_key(raw, sender, message_id), raw)

    def _store_identified(self, identified: list[Arrival]) -> list[tuple[int, bool]]:
        with writing(self.engine, durable=True) as connection:  # the sender is told next that the mail is safe
            keys = list(dict.fromkeys(mail.dedup_key for mail in identified))
            known = {key: row_id for key, row_id in connection.execute(_STORED, {"keys": keys})}
            fresh: dict[str, dict[str, object]] = {}
            for mail in identified:
                if mail.dedup_key not in known:
                    fresh.setdefault(mail.dedup_key, _pending_row(mail))
            if fresh:
                rows = connection.execute(_STORE[connection.dialect.name], list(fresh.values()))
                stored = {key: row_id for key, row_id in rows}
                if len(stored) < len(fresh):  # stored by another process since the first look
                    taken = connection.execute(_STORED, {"keys": [key for key in fresh if key not in stored]})
                    known.update({key: row_id for key, row_id in taken})
        outcomes, seen = [], set()
        for key in (mail.dedup_key for mail in identified):
            if key in known:
                outcomes.append((known[key], True))
            else:  # stored now, in arrival order; a second copy in the same group is a duplicate
                outcomes.append((stored[key], key in seen))
                seen.add(key)
        return outcomes

    # -- processing ----------------------------------------------------------
    def process_pending(self) -> int:
        """Process every pending inbound mail in arrival order; returns how many."""
        count, more = 0, True
        while more:
            processed, more = self.process_batch()
            count += processed
        return count

    def process_batch(
        self, most: int = 50, seconds: float = 0.025, on_mail: Callable[[str], None] | None = None,
        hand_over: Callable[[list[int]], None] | None = None,
    ) -> tuple[int, bool]:
        """Process the oldest pending mails, one after another in one
        transaction (a commit costs more than a move), each mail all or
        nothing in a savepoint; returns how many, and whether pending mail
        may be left. It stops after `most` mails or once `seconds` have
        passed, so that SMTP intake, which needs the write lock too, never
        waits long.

        Mails are processed in arrival order, also across processes: a later
        mail (a move) may depend on an earlier one (the challenge). A process
        that finds the oldest mails locked waits for them, then finds them
        done and takes the next. `on_mail(dedup key)` is told of each mail
        as its processing begins. With `hand_over`, the replies are written
        claimed (`delivery`), and after the commit `hand_over` gets the ids
        of the inbound mails they answer, to send them at once."""
        deadline = time.monotonic() + seconds
        durable = self.spool is not None and self.spool.removal_due()
        with writing(self.engine, durable=durable) as connection:
            admitted = self._admit(connection)
            rows = connection.execute(_PENDING, {"most": most}).all()
            output = BatchOutput(connection, self.clock, claimed=hand_over is not None)
            done = 0
            for row in rows:
                if on_mail is not None:
                    on_mail(row.dedup_key)
                self._process(connection, output, row)
                done += 1
                if time.monotonic() >= deadline and done < len(rows):
                    break
            output.write()
        self._forget(admitted, synced=durable and done > 0)  # each mail done wrote its outcome
        if hand_over is not None and output.answered:
            hand_over(sorted(output.answered))
        more = done < len(rows) or len(rows) == most or len(admitted) == ADMITTED_PER_BATCH
        return done, more

    def _forget(self, admitted: list[Arrival], synced: bool = False) -> None:
        """Tell the spool which of its mails are in the database now
        (committed), and whether that commit was a durable one that wrote
        (`synced`: all admitted so far is on the disk)."""
        if self.spool is not None:
            self.spool.admitted(admitted[-1].id if admitted else 0, synced)

    def _admit(self, connection: Connection) -> list[Arrival]:
        """Move the mails waiting in the spool into the database, in this
        transaction: they are forgotten there once it is committed (a mail
        admitted twice, after a crash in between, has a dedup key that is
        already stored and is left out the second time)."""
        if self.spool is None:
            return []
        arrivals = self.spool.waiting(ADMITTED_PER_BATCH)
        if arrivals:
            connection.execute(_ADMIT, [_pending_row(mail) for mail in arrivals])
        return arrivals

    def _process(self, connection: Connection, output: BatchOutput, row: Row) -> None:
        """One mail: its commands in a savepoint, then its replies and its
        outcome for the batch to write.

        A mail of one command (nearly all of them) runs it in the mail's own
        savepoint, several commands each get a savepoint of their own: a
        command refused with a ServiceError changes nothing and is answered
        with an error mail. A bug (any other exception) rolls back the whole
        mail, which is marked failed and answered with an apology; a lost or
        unusable database connection rolls back the batch, to be tried again."""
        now = self.clock()
        mail = parse_mail(row.raw)
        secrets: tuple[str, ...] = ()
        masked: bytes | None = None
        status, problem = "done", ""
        try:
            reason = no_reply_reason(mail, row.envelope_sender)
            if reason is not None:
                log.info("inbound %s dropped: %s", row.id, reason)
                replies, status, problem = [], "dropped", reason
            else:
                request = parse_request(mail.subject, mail.body, self.catalog.names())
                secrets = passwords_in(request)
                masked = masked_copy(mail, secrets)
                alone = len(request.lines) == 1
                with savepoint(connection, "mail"):
                    replies = [
                        reply for line in request.lines
                        for reply in self._run_line(connection, mail, line, request.comment, now, secrets, alone)
                    ]
        except (OperationalError, InterfaceError):  # the database, not the mail: try the batch again later
            raise
        except ServiceError as error:  # the only command was refused
            replies = [self._error_reply(mail, request.lines[0], error, secrets)]
        except Exception as error:  # a bug must not lose the mail or half-apply it
            log.exception("inbound %s failed", row.id)
            status, problem = "failed", f"{type(error).__name__}: {error}"
            replies = [apology(mail, secrets)]
        try:
            self._finish(connection, output, row.id, mail, replies, now, status=status, error=problem, masked=masked)
        except (OperationalError, InterfaceError):
            raise
        except Exception as error:  # not even the answer could be made: the mail must not block the queue
            log.exception("inbound %s could not be answered", row.id)
            self._finish(connection, output, row.id, mail, [], now, status="failed", error=f"{type(error).__name__}: {error}")

    def _finish(
        self, connection: Connection, output: BatchOutput, row_id: int, mail: IncomingMail, replies: list[Reply],
        now: datetime, *, status: str = "done", error: str = "", masked: bytes | None = None,
    ) -> None:
        """The replies for the outbox (answers and errors within the
        sender's hourly caps) and the mail's outcome."""
        rows, held_back = [], 0
        for reply in replies:
            if reply.kind != "board" and self._over_cap(output, mail.sender, reply.kind, now):
                held_back += 1
                continue
            rows += self._outbox_rows(row_id, mail, reply, now)
        if held_back:
            error = f"{held_back} answer(s) not sent: {mail.sender} reached the hourly reply cap"
            log.warning("inbound %s: %s", row_id, error)
        outcome: dict[str, object] = {"row_id": row_id, "status": status, "error": error}
        if masked is not None:
            outcome["raw"] = masked
        output.add(rows, outcome)

    def give_up(self, key: str, reason: str) -> bool:
        """Mark the pending mail with this dedup key failed without
        processing it, with the apology a failed mail gets (`serve` does
        this to the mail its worker was stuck on); False if it is no longer
        pending. A worker killed while stuck took the admission of spooled
        mail back with its transaction, so they are admitted here first."""
        now = self.clock()
        with self.engine.begin() as connection:
            admitted = self._admit(connection)
            row = connection.execute(_PENDING_ONE, {"dedup_key": key}).first()
            if row is None:
                return False
            mail = parse_mail(row.raw)
            secrets = passwords_in(parse_request(mail.subject, mail.body, self.catalog.names()))
            output = BatchOutput(connection, self.clock)
            self._finish(
                connection, output, row.id, mail, [apology(mail, secrets)], now,
                status="failed", error=reason, masked=masked_copy(mail, secrets),
            )
            output.write()
        self._forget(admitted)
        log.error("inbound %s given up: %s", row.id, reason)
        return True

    def run_timers(self) -> list[str]:
        """One pass of vacations that ran out, reminders and forfeits;
        returns a line for each thing done. The boards are taken a few at a
        time, each group in a transaction with its mails: a pass over many
        boards never holds the database (on SQLite, all of it) for long."""
        now = self.clock()
        report: list[str] = []
        with self.engine.begin() as connection:
            report += self._timer_step(connection, now, timers.end_used_up_vacations)
            board_ids = timers.running_boards(connection)
        for start in range(0, len(board_ids), TIMER_BOARDS_PER_TRANSACTION):
            group = board_ids[start:start + TIMER_BOARDS_PER_TRANSACTION]
            with self.engine.begin() as connection:
                report += self._timer_step(connection, now, lambda ctx: timers.check_boards(ctx, group))
        return report

    def _timer_step(
        self, connection: Connection, now: datetime, step: Callable[[Context], tuple[list[Reply], list[str]]],
    ) -> list[str]:
        """Run one step of the timer pass and queue the mails it made; returns its report."""
        ctx = Context(connection, self.settings, self.catalog, self.passwords, now, "")
        try:
            replies, report = step(ctx)
            ctx.close()
        except BaseException:
            ctx.discard()
            raise
        output = BatchOutput(connection, self.clock)
        output.replies += [row for reply in replies for row in self._outbox_rows(None, None, reply, now)]
        output.write()
        return report

    def _run_line(  # type: ignore[no-untyped-def]
        self, connection: Connection, mail: IncomingMail, line, comment: str, now: datetime, secrets, alone: bool,
    ) -> list[Reply]:
        """The replies to one line; with `alone` (the mail's only line) a
        refusal is raised for the mail's savepoint to undo."""
        if line.error is not None:
            return [error_reply(mail, line.error, self.catalog, secrets)]
        if alone:
            return self._execute(connection, mail, line.command, comment, now)
        try:
            with savepoint(connection, "line"):
                return self._execute(connection, mail, line.command, comment, now)
        except ServiceError as error:
            return [self._error_reply(mail, line, error, secrets)]

    def _execute(self, connection: Connection, mail: IncomingMail, command, comment: str, now: datetime) -> list[Reply]:  # type: ignore[no-untyped-def]
        ctx = Context(connection, self.settings, self.catalog, self.passwords, now, mail.sender, comment)
        try:
            replies = execute(ctx, command)
            ctx.close()  # the ORM session's changes fail here, inside the savepoint
        except BaseException:
            ctx.discard()
            raise
        return replies

    def _error_reply(self, mail: IncomingMail, line, error: ServiceError, secrets: tuple[str, ...]) -> Reply:  # type: ignore[no-untyped-def]
        if error.game is None and isinstance(line.command, GameCommand):
            error.game = line.command.game
            error.board = getattr(line.command, "board", None)
        return error_reply(mail, error, self.catalog, secrets)

    def _over_cap(self, output: BatchOutput, recipient: str, kind: str, now: datetime) -> bool:
        """Whether `recipient` had as many answers (of this kind, for errors) in the last hour as allowed."""
        kinds = ["error"] if kind == "error" else ["answer", "error"]
        cap = self.settings.error_replies_per_hour if kind == "error" else self.settings.replies_per_hour
        output.write()  # the batch's own answers count too
        recent = output.connection.scalar(
            _RECENT_ANSWERS, {"recipient": recipient, "kinds": kinds, "since": now - timedelta(hours=1)}
        )
        return (recent or 0) >= cap

    def _outbox_rows(
        self, row_id: int | None, mail: IncomingMail | None, reply: Reply, now: datetime,
    ) -> list[dict[str, object]]:
        """The outbox rows of a reply, as an answer to `mail` (None: a mail of the server's own)."""
        rows = []
        for recipient in dict.fromkeys(reply.recipients):
            message_id, raw = compose(
                sender=self.settings.address, recipient=recipient, subject=reply.subject, body=reply.body, date=now,
                in_reply_to=mail.message_id if mail else "", references=mail.references if mail else "",
            )
            rows.append({
                "created_at": now, "inbound_id": row_id, "recipient": recipient, "message_id": message_id, "raw": raw,
                "status": "pending", "kind": reply.kind, "attempts": 0, "next_try_at": now, "last_error": "",
            })
        return rows


def _pending_row(mail: Arrival) -> dict[str, object]:
    return {
        "received_at": mail.received_at, "envelope_sender": mail.envelope_sender, "message_id": mail.message_id,
        "dedup_key": mail.dedup_key, "raw": mail.raw, "status": "pending", "error": "",
    }


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


def passwords_in(request: Request) -> tuple[str, ...]:
    """The words of the mail's commands that may be passwords (masked
    wherever the mail is quoted or kept)."""
    return tuple(secret for line in request.lines for secret in probable_passwords(line.text))


def apology(mail: IncomingMail, secrets: tuple[str, ...]) -> Reply:
    """The answer to a mail the server failed on: nothing in it was done."""
    return Reply((mail.sender,), "pbmserv Error", (
        "The server failed while handling your mail; nothing in it was carried out.\n"
        "The operator has been told. Please try again later.\n\n" + quote(mail, secrets)
    ), "error")


def mask(text: str, secrets: tuple[str, ...]) -> str:
    for secret in sorted(set(secrets), key=len, reverse=True):
        if secret:
            text = re.sub(rf"(?<!\S){re.escape(secret)}(?!\S)", MASK, text)
    return text


def quote(mail: IncomingMail, secrets: tuple[str, ...]) -> str:
    lines = [f"Subject: {mail.subject}", *([""] + mail.body.splitlines() if mail.body else [])]
    return "Your mail:\n" + "\n".join(f"> {mask(line, secrets)}".rstrip() for line in lines)


def masked_copy(mail: IncomingMail, secrets: tuple[str, ...]) -> bytes | None:
    """What is kept of a processed mail that carried passwords: its headers
    that matter and its text, with every password replaced by a mask; None
    for a mail without any (it is kept as it came)."""
    if not secrets:
        return None
    headers = [
        (name, mail.headers[name.lower()])
        for name in ("From", "Reply-To", "To", "Date", "Message-ID", "In-Reply-To", "References")
        if mail.headers.get(name.lower())
    ]
    headers += [("Subject", mask(mail.subject, secrets)), ("X-Pbmserv-Masked", "passwords removed after processing")]
    return message_bytes(headers, mask(mail.text, secrets) + "\n")
