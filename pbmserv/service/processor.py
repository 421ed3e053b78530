"""The transactional heart: an inbound mail is processed in one database
transaction that applies its commands, writes its replies to the outbox and
marks it done — all of it or nothing."""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from functools import cached_property, partial
from typing import Any

from sqlalchemy import Connection, Engine, Row, bindparam, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

from pbmserv.config import Settings
from pbmserv.mail.inbound import IncomingMail, Unreadable, parse_headers, parse_mail
from pbmserv.mail.loops import no_reply_reason
from pbmserv.mail.outbound import compose, message_bytes
from pbmserv.protocol import Line, ParseError, Request, parse_request, probable_passwords
from pbmserv.protocol.commands import MASK, GameCommand
from pbmserv.protocol.errors import EmptyCommand
from pbmserv.protocol.parser import MOST_COMMANDS, is_multiple
from pbmserv.refusal import Refusal
from pbmserv.service import timers
from pbmserv.service.catalog import Catalog
from pbmserv.service.context import Context, Reply
from pbmserv.service.dispatch import execute
from pbmserv.service.passwords import Passwords
from pbmserv.service.rates import MailCaps, RateLog, forget_old_events
from pbmserv.service.views import wrap
from pbmserv.store.database import lost_a_race, savepoint, writing
from pbmserv.store.key import ServerKey, server_key
from pbmserv.store.models import InboundMail, OutboxMail
from pbmserv.store.spool import Arrival, Spool

log = logging.getLogger(__name__)

INBOUND = InboundMail.__table__
OUTBOX = OutboxMail.__table__
_PENDING = (
    select(INBOUND.c.id, INBOUND.c.dedup_key, INBOUND.c.raw, INBOUND.c.sealed, INBOUND.c.envelope_sender)
    .where(INBOUND.c.status == "pending")
    .order_by(INBOUND.c.id)
    .limit(bindparam("most"))
    .with_for_update()
)
_PENDING_ONE = (
    select(INBOUND.c.id, INBOUND.c.raw, INBOUND.c.sealed, INBOUND.c.envelope_sender)
    .where(INBOUND.c.dedup_key == bindparam("dedup_key"), INBOUND.c.status == "pending")
    .with_for_update()
)
_BY_ID = select(INBOUND.c.id, INBOUND.c.raw, INBOUND.c.sealed, INBOUND.c.envelope_sender, INBOUND.c.status).where(
    INBOUND.c.id == bindparam("row_id")
).with_for_update()
_AGAIN = (
    update(INBOUND)
    .where(INBOUND.c.id == bindparam("row_id"), INBOUND.c.status.in_(("failed", "dropped")))
    .values(status="pending", error="", processed_at=None)
)
_MARK = (
    update(INBOUND)
    .where(INBOUND.c.id == bindparam("row_id"))
    .values(status=bindparam("status"), error=bindparam("error"), processed_at=bindparam("processed_at"))
)
#: a processed mail: the sealed original goes, and what is kept of it is written where it changed
_DONE = _MARK.values(sealed=None)
_DONE_KEPT = _DONE.values(raw=bindparam("raw"))
#: a failed mail keeps its sealed original (for `pbmserv-admin inbound retry`) until the timer pass drops it
_FAILED = _MARK.values(raw=bindparam("raw"))
_FORGET_ORIGINALS = (
    update(INBOUND)
    .where(INBOUND.c.status == "failed", INBOUND.c.processed_at < bindparam("before"), INBOUND.c.sealed.is_not(None))
    .values(sealed=None)
)
_QUEUE = insert(OUTBOX)


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
#: the commands of a `multiple` mail left when it has taken this long are not carried out
MAIL_SECONDS = 2.0
#: the header of a copy of a mail whose passwords are masked, saying what was kept
MASKED_HEADER = "X-Pbmserv-Masked"
#: what it says of a mail kept sealed until it is processed
_PENDING_SEALED = "pending; the mail is kept sealed until it is processed"
#: how long the sealed original of a failed mail is kept, for an operator to retry it
FAILED_ORIGINALS_KEPT = timedelta(days=7)
#: how much of a mail an answer quotes
QUOTED_LINES = 40
QUOTED_LINE_CHARS = 200


def utc_now() -> datetime:
    return datetime.now(UTC)


def dedup_key(raw: bytes, envelope_sender: str, message_id: str) -> str:
    """Same Message-ID from the same sender, or the same bytes without one, is the same mail."""
    if message_id:
        basis = f"{envelope_sender.lower()}\0{message_id}".encode()
    else:
        basis = raw
    return hashlib.sha256(basis).hexdigest()


class BatchOutput:
    """What processing writes besides the commands' own changes: the replies
    for the outbox, each mail's outcome and the rate events, kept here and
    written when the batch ends (a statement each for the batch instead of
    for each mail), with the time of writing as the mails' `processed_at`.
    The caps and the rate log count what is kept here too."""

    def __init__(self, connection: Connection, clock: Clock, settings: Settings, *, claimed: bool = False):
        self.connection = connection
        self.clock = clock
        #: the replies are written claimed, for the process they are handed over to
        self.claimed = claimed
        self.caps = MailCaps(connection, settings)
        self.events = RateLog(connection)
        self.replies: list[dict[str, object]] = []
        self.answered: set[int] = set()  # the inbound mails with replies written
        self.outcomes: dict[Any, list[dict[str, object]]] = {_DONE: [], _DONE_KEPT: [], _FAILED: []}
        #: how each mail went, logged once the batch is committed
        self.processed: list[Processed] = []

    def add(self, replies: list[dict[str, object]], outcome: dict[str, object]) -> None:
        self.replies += replies
        statement = _FAILED if outcome["status"] == "failed" else _DONE_KEPT if "raw" in outcome else _DONE
        self.outcomes[statement].append(outcome)

    def write(self) -> None:
        now = self.clock()
        for outcome in (outcome for outcomes in self.outcomes.values() for outcome in outcomes):
            outcome["processed_at"] = now
        if self.claimed:
            for reply in self.replies:
                reply["next_try_at"] = now + timedelta(seconds=CLAIM_SECONDS)
        self.answered.update(reply["inbound_id"] for reply in self.replies if reply["inbound_id"] is not None)  # type: ignore[misc]
        for statement, rows in ((_QUEUE, self.replies), *self.outcomes.items()):
            if rows:
                self.connection.execute(statement, rows)
                rows.clear()
        self.caps.written()
        self.events.write()


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

    @cached_property
    def key(self) -> ServerKey:
        """The server's key, read (or made) on first use: `serve` and `receive` ask for it at start."""
        return server_key(self.settings)

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
        started = time.monotonic()
        identified = [self._arrival(raw, envelope_sender) for raw, envelope_sender in mails]
        stored = self._store_racing(identified)
        for mail, (row_id, duplicate) in zip(identified, stored):
            if duplicate:
                command = self._command_stored(mail.raw)
                Processed(row_id, mail.envelope_sender, command, "duplicate", "", _ms_since(started)).log()
        return stored

    def _command_stored(self, stored: bytes) -> str:
        """The command words of a mail as stored (a sealed mail's Subject is masked, its words are there)."""
        try:
            headers = parse_headers(stored)
        except Unreadable:
            return "-"
        return command_words(parse_request(headers.subject, "", self.catalog.names()))

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
        """The mail as it is stored. One that may hold passwords is stored as
        its headers, its Subject masked, and the mail itself sealed with the
        server's key until it is processed: neither the database nor its
        log ever holds such a mail in clear. Which mails may hold passwords
        is told from the headers alone: a mail of one command only if that
        command takes a password (its body is a comment, in which the same
        passwords are masked when it is passed on); a `multiple` mail, or
        one whose headers cannot be read, anywhere."""
        try:
            headers = parse_headers(raw)
        except Unreadable:
            headers = None
        reply_to, message_id = (headers.sender, headers.message_id) if headers is not None else ("", "")
        sender = envelope_sender if envelope_sender is not None else reply_to
        key = dedup_key(raw, sender, message_id)
        if headers is not None:
            request = parse_request(headers.subject, "", self.catalog.names())
            secrets = request.passwords
            if not secrets and not is_multiple(headers.subject):
                return Arrival(self.clock(), sender, message_id, key, raw)
            kept = masked_copy(headers, secrets, always=True, state=_PENDING_SEALED)
        else:
            kept = _nothing_kept(_PENDING_SEALED)
        return Arrival(self.clock(), sender, message_id, key, kept, self.key.seal(raw))

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
        try:
            return self._process_batch(most, seconds, on_mail, hand_over)
        except (OperationalError, InterfaceError):  # the database: the batch is tried again later
            raise
        except Exception:
            log.exception("a batch of inbound mail failed; its mails are processed one at a time")
        return self._process_oldest_alone(on_mail, hand_over)

    def _process_oldest_alone(
        self, on_mail: Callable[[str], None] | None, hand_over: Callable[[list[int]], None] | None,
    ) -> tuple[int, bool]:
        """After a batch failed for a reason other than the database (a bug
        that each mail's own handling did not catch): the oldest pending
        mail in a batch of its own, and if that fails too, the mail is given
        up. Without this, such a mail would be tried again and again and no
        mail after it would ever be processed."""
        taken: list[str] = []

        def note(key: str) -> None:
            taken.append(key)
            if on_mail is not None:
                on_mail(key)

        try:
            return self._process_batch(1, 0.0, note, hand_over)
        except (OperationalError, InterfaceError):
            raise
        except Exception as error:
            if not taken:
                raise
            log.exception("the inbound mail with dedup key %s fails on its own too; giving it up", taken[0])
            self.give_up(taken[0], f"could not be processed: {type(error).__name__}: {error}")
            return 1, True

    def _process_batch(
        self, most: int, seconds: float, on_mail: Callable[[str], None] | None,
        hand_over: Callable[[list[int]], None] | None,
    ) -> tuple[int, bool]:
        deadline = time.monotonic() + seconds
        durable = self.spool is not None and self.spool.removal_due()
        with writing(self.engine, durable=durable) as connection:
            admitted = self._admit(connection)
            rows = connection.execute(_PENDING, {"most": most}).all()
            output = BatchOutput(connection, self.clock, self.settings, claimed=hand_over is not None)
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
        for processed in output.processed:
            processed.log()
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
        """One mail, and how it went for the log."""
        started = time.monotonic()
        request, outcome, why = self._process_mail(connection, output, row)
        processed = Processed(row.id, row.envelope_sender, command_words(request), outcome, why, _ms_since(started))
        output.processed.append(processed)

    def _process_mail(self, connection: Connection, output: BatchOutput, row: Row) -> tuple[Request | None, str, str]:
        """One mail: its commands in a savepoint, then its replies and its
        outcome for the batch to write. Returns its commands as far as they
        were read, and how it went: done, refused (and what kind of
        refusal), dropped or failed (and why).

        A mail of one command (nearly all of them) runs it in the mail's own
        savepoint, several commands each get a savepoint of their own: a
        command refused (a Refusal) changes nothing and is answered
        with an error mail. A mail that cannot be read (`Unreadable`) or a
        bug (any other exception, at any step) leaves nothing done: the mail
        is marked failed, its copy masked, and answered once if it may be; a
        lost or unusable database connection rolls back the batch, to be
        tried again."""
        now = self.clock()
        mail: IncomingMail | None = None
        request: Request | None = None
        refusal: str | None = None
        status, problem, composed = "done", "", []
        try:
            original = self._original(row)
            mail = parse_mail(original)
            reason = no_reply_reason(mail, row.envelope_sender)
            if reason is not None:
                status, problem = "dropped", reason
            else:
                request = parse_request(mail.subject, mail.body, self.catalog.names())
                composed, refusal = self._run_request(connection, output, row.id, mail, request, now)
        except (OperationalError, InterfaceError):  # the database, not the mail: try the batch again later
            raise
        except Unreadable as error:
            self._fail(output, row, f"unreadable: {error.reason}", now, unreadable_reply(error))
            return None, "failed", f"unreadable: {error.reason}"
        except Exception as error:  # a bug must not lose the mail or half-apply it
            log.exception("inbound %s failed", row.id)
            self._fail(output, row, f"{type(error).__name__}: {error}", now, apology, mail, request)
            return request, "failed", type(error).__name__
        kept = None  # a dropped mail stays as stored: as it came, or, sealed, its headers
        if request is not None and request.passwords:
            kept = masked_copy(mail, request.passwords)
        elif request is not None and row.sealed is not None:  # it held no password after all: as it came
            kept = original
        self._finish(output, row.id, mail.sender, composed, now, status=status, error=problem, masked=kept)
        return (request, "refused", refusal) if refusal is not None else (request, status, problem)

    def _run_request(
        self, connection: Connection, output: BatchOutput, row_id: int, mail: IncomingMail, request: Request,
        now: datetime,
    ) -> tuple[list[tuple[str, list[dict[str, object]]]], str | None]:
        """Run the mail's commands and compose their replies, all in the
        mail's savepoint (a bug in either undoes the commands). The refusal
        of a mail's only command is answered with its error mail; a
        `multiple` mail runs each command in a savepoint of its own, for
        at most MAIL_SECONDS, and answers all it did not carry out in one
        mail. Returns the replies, and None if every command was carried
        out, else what kind of refusal it was, or how many were not."""
        secrets = request.passwords
        comment = mask(request.comment, secrets)  # passed on to others, and kept with a move
        if len(request.lines) == 1 and not request.unread:
            line = request.lines[0]
            try:
                with savepoint(connection, "mail"):
                    replies = self._run_line(connection, output, mail, line, comment, now)
                    return self._compose(row_id, mail, replies, now), None
            except Refusal as error:
                refused = [error_reply(mail, _about(line, error), self.catalog, secrets)]
                return self._compose(row_id, mail, refused, now), refusal_kind(error)
        started = time.monotonic()
        replies, refusals, skipped = [], [], None
        with savepoint(connection, "mail"):
            for number, line in enumerate(request.lines, start=1):
                try:
                    if line.error is not None:
                        raise line.error
                    with savepoint(connection, "line"):
                        replies += self._run_line(connection, output, mail, line, comment, now)
                except Refusal as error:
                    refusals.append((number, line.text, _about(line, error)))
                if number < len(request.lines) and time.monotonic() - started > MAIL_SECONDS:
                    skipped = Skipped(number + 1, f"your mail had taken more than {MAIL_SECONDS:g} s of the server's time")
                    break
            if skipped is None and request.unread:
                skipped = Skipped(len(request.lines) + 1, f"the server carries out at most {MOST_COMMANDS} commands of a mail")
            if not refusals and skipped is None:
                return self._compose(row_id, mail, replies, now), None
            total = len(request.lines) + len(request.unread)
            replies.append(refusals_reply(mail, refusals, skipped, total, self.catalog, secrets))
            return self._compose(row_id, mail, replies, now), f"{_missed(refusals, skipped, total)} of {total} commands"

    def _original(self, row: Row) -> bytes:
        """The mail as it came: unsealed, or as it is stored if it was not
        sealed. Raises Unsealable if this server's key does not open it."""
        return self.key.unseal(row.sealed) if row.sealed is not None else row.raw

    def _readable(self, row: Row) -> tuple[IncomingMail | None, Request | None]:
        """The mail and its commands as far as they can be read (for a mail failed unprocessed)."""
        try:
            mail = parse_mail(self._original(row))
        except Exception:
            return None, None
        try:
            return mail, parse_request(mail.subject, mail.body, self.catalog.names())
        except Exception:
            return mail, None

    def _compose(
        self, row_id: int, mail: IncomingMail, replies: list[Reply], now: datetime,
    ) -> list[tuple[str, list[dict[str, object]]]]:
        """Each reply's kind and its outbox rows."""
        return [(reply.kind, self._outbox_rows(row_id, mail, reply, now)) for reply in replies]

    def _fail(
        self, output: BatchOutput, row: Row, reason: str, now: datetime,
        answer: Callable[[IncomingMail, tuple[str, ...]], Reply] | None,
        mail: IncomingMail | None = None, request: Request | None = None,
    ) -> None:
        """Mark the mail failed with `reason`, keep only a masked copy of
        it, and send `answer` (if any) to its sender if it may be answered.
        Whatever could not be read of the mail before is read here as far as
        it can be; nothing in here raises for what the mail holds."""
        if mail is None:
            mail = read_headers(row.raw)
        composed: list[tuple[str, list[dict[str, object]]]] = []
        if mail is not None and answer is not None and no_reply_reason(mail, row.envelope_sender) is None:
            secrets = request.passwords if request is not None else probable_passwords(mail.subject)
            try:
                composed = self._compose(row.id, mail, [answer(mail, secrets)], now)
            except Exception:
                log.exception("inbound %s: the answer to a failed mail could not be made", row.id)
        sender = mail.sender if mail is not None else ""
        self._finish(output, row.id, sender, composed, now, status="failed", error=reason, masked=failed_copy(mail, request))

    def _finish(
        self, output: BatchOutput, row_id: int, sender: str, composed: list[tuple[str, list[dict[str, object]]]],
        now: datetime, *, status: str = "done", error: str = "", masked: bytes | None = None,
    ) -> None:
        """The replies for the outbox, each only within the hourly caps of
        the address it goes to, and the mail's outcome."""
        rows, held_back = [], Counter[str]()
        for kind, reply_rows in composed:
            for row in reply_rows:
                recipient = str(row["recipient"])
                if output.caps.allows(recipient, kind, now):
                    output.caps.take(recipient, kind)
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
        output.add(rows, outcome)

    def give_up(self, key: str, reason: str) -> bool:
        """Mark the pending mail with this dedup key failed without
        processing it, with the apology a failed mail gets (`serve` does
        this to the mail its worker was stuck on); False if it is no longer
        pending. A worker killed while stuck took the admission of spooled
        mail back with its transaction, so they are admitted here first.
        Should even the apology fail to be written, the mail is marked
        failed without one: only a database outage leaves it pending."""
        try:
            return self._give_up(key, reason, apology)
        except (OperationalError, InterfaceError):
            raise
        except Exception:
            log.exception("the inbound mail with dedup key %s could not be given up with an apology", key)
            return self._give_up(key, reason, None)

    def _give_up(self, key: str, reason: str, answer: Callable[[IncomingMail, tuple[str, ...]], Reply] | None) -> bool:
        now = self.clock()
        with self.engine.begin() as connection:
            admitted = self._admit(connection)
            row = connection.execute(_PENDING_ONE, {"dedup_key": key}).first()
            if row is None:
                return False
            output = BatchOutput(connection, self.clock, self.settings)
            mail, request = self._readable(row)
            self._fail(output, row, reason, now, answer, mail, request)
            output.write()
        self._forget(admitted)
        Processed(row.id, row.envelope_sender, command_words(request), "failed", reason, None).log()
        return True

    def fail(self, row_id: int, reason: str) -> str | None:
        """An operator's decision: the pending mail is marked failed with
        `reason`, unprocessed and unanswered, and only its masked copy is
        kept (and its sealed original, for `retry`). Returns why it was
        not, or None."""
        now = self.clock()
        with self.engine.begin() as connection:
            row = connection.execute(_BY_ID, {"row_id": row_id}).first()
            if row is None or row.status != "pending":
                return f"it is {row.status}, not pending" if row is not None else "no such mail"
            output = BatchOutput(connection, self.clock, self.settings)
            self._fail(output, row, reason, now, None, *self._readable(row))
            output.write()
        log.warning("inbound %s failed by the operator: %s", row_id, reason)
        return None

    def retry(self, row_id: int) -> str | None:
        """An operator's decision: a failed or dropped mail is made pending,
        to be processed again as it came (from its sealed original, if it
        had one). Returns why it was not, or None: a mail whose copy has its
        passwords masked and whose original is gone would only run its
        commands with masks for passwords."""
        with self.engine.begin() as connection:
            row = connection.execute(_BY_ID, {"row_id": row_id}).first()
            if row is None:
                return "no such mail"
            if row.status not in ("failed", "dropped"):
                return f"it is {row.status}, not failed or dropped"
            if row.sealed is None and MASKED_HEADER.encode() in row.raw.partition(b"\r\n\r\n")[0]:
                return "its passwords are masked and its original is no longer kept: ask its sender to send it again"
            connection.execute(_AGAIN, {"row_id": row_id})
        return None

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
            forget_old_events(connection, now)
            connection.execute(_FORGET_ORIGINALS, {"before": now - FAILED_ORIGINALS_KEPT})
        for start in range(0, len(board_ids), TIMER_BOARDS_PER_TRANSACTION):
            group = board_ids[start:start + TIMER_BOARDS_PER_TRANSACTION]
            with self.engine.begin() as connection:
                report += self._timer_step(connection, now, partial(timers.check_boards, board_ids=group))
        return report

    def _timer_step(
        self, connection: Connection, now: datetime, step: Callable[[Context], tuple[list[Reply], list[str]]],
    ) -> list[str]:
        """Run one step of the timer pass and queue the mails it made; returns its report."""
        output = BatchOutput(connection, self.clock, self.settings)
        ctx = Context(connection, self.settings, self.catalog, self.passwords, self.key, output.events, now, "")
        replies, report = step(ctx)
        output.replies += [row for reply in replies for row in self._outbox_rows(None, None, reply, now)]
        output.write()
        return report

    def _run_line(  # type: ignore[no-untyped-def]
        self, connection: Connection, output: BatchOutput, mail: IncomingMail, line, comment: str, now: datetime,
    ) -> list[Reply]:
        """The replies to one command line; raises its Refusal if it is refused."""
        if line.error is not None:
            raise line.error
        return self._execute(connection, output, mail, line.command, comment, now)

    def _execute(  # type: ignore[no-untyped-def]
        self, connection: Connection, output: BatchOutput, mail: IncomingMail, command, comment: str, now: datetime,
    ) -> list[Reply]:
        ctx = Context(connection, self.settings, self.catalog, self.passwords, self.key, output.events, now, mail.sender, comment)
        return execute(ctx, command)

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
        "dedup_key": mail.dedup_key, "raw": mail.raw, "sealed": mail.sealed, "status": "pending", "error": "",
    }


def _about(line: Line, error: Refusal) -> Refusal:
    """The error, naming the game (and board) of the command it refuses if it does not yet."""
    if error.game is None and isinstance(line.command, GameCommand):
        error.game = line.command.game
        error.board = getattr(line.command, "board", None)
    return error


@dataclass(frozen=True)
class Processed:
    """How one inbound mail went, for its log line: its outcome (done,
    refused, dropped, failed or duplicate), why, and the milliseconds its
    processing took (None: it was given up unprocessed)."""

    inbound_id: int
    sender: str
    command: str
    outcome: str
    reason: str
    ms: int | None

    def log(self) -> None:
        outcome = f"{self.outcome} ({self.reason})" if self.reason else self.outcome
        took = f" in {self.ms} ms" if self.ms is not None else ""
        fields: dict[str, object] = {
            "inbound_id": self.inbound_id, "sender": self.sender or "<>", "command": self.command, "outcome": self.outcome,
        }
        if self.reason:
            fields["reason"] = self.reason
        if self.ms is not None:
            fields["ms"] = self.ms
        log.log(
            logging.WARNING if self.outcome == "failed" else logging.INFO,
            "inbound %s from %s: %s: %s%s", self.inbound_id, fields["sender"], self.command, outcome, took, extra=fields,
        )


def command_words(request: Request | None) -> str:
    """What a mail asked for, as its log line names it: the kind of its
    command, told from the command read, never words of its text (where
    passwords stand); `multiple (N commands)`; `-` for none, `?` for a
    command that could not be read (`GAME ?` if its game was)."""
    if request is None:
        return "-"
    total = len(request.lines) + len(request.unread)
    if total > 1:
        return f"multiple ({total} commands)"
    line = request.lines[0]
    if line.command is None:
        if isinstance(line.error, EmptyCommand):
            return "-"
        return f"{line.error.game} ?" if line.error is not None and line.error.game else "?"
    if isinstance(line.command, GameCommand):  # `majorities help`, not `majorities game help`
        return f"{line.command.game} {_words(type(line.command).__name__.removeprefix('Game'))}"
    return _words(type(line.command).__name__)


def refusal_kind(error: Refusal) -> str:
    """`unknown command`, `bad argument`, ... for a command that could not be read; "" for one the service refused."""
    return _words(type(error).__name__) if isinstance(error, ParseError) else ""


def _words(name: str) -> str:
    """`ChangePassword` -> `change password`."""
    return re.sub(r"(?<!^)(?=[A-Z])", " ", name).lower()


def _ms_since(started: float) -> int:
    return round((time.monotonic() - started) * 1000)


@dataclass(frozen=True)
class Skipped:
    """The commands of a mail from number `first` on were not carried out, and why."""

    first: int
    reason: str


def error_subject(error: Refusal, catalog: Catalog) -> str:
    if error.game and error.game in catalog:
        title = catalog.get(error.game).title
        if error.board is not None:
            return f"{title} Board {error.board} Error"
        return f"{title} Error"
    return "pbmserv Error"


def error_reply(mail: IncomingMail, error: Refusal, catalog: Catalog, secrets: tuple[str, ...]) -> Reply:
    return Reply(
        (mail.sender,), error_subject(error, catalog), "\n".join([*_error_text(error, secrets), "", quote(mail, secrets)]),
        "error",
    )


def refusals_reply(
    mail: IncomingMail, refusals: list[tuple[int, str, Refusal]], skipped: Skipped | None,
    total: int, catalog: Catalog, secrets: tuple[str, ...],
) -> Reply:
    """One answer for every command of a `multiple` mail that was not carried out."""
    missed = _missed(refusals, skipped, total)
    parts = [wrap(f"{missed} of the {total} commands of your mail {'was' if missed == 1 else 'were'} not carried out.", hang="")]
    for number, text, error in refusals:
        parts += ["", f"Command {number}: {mask(text, secrets)}", *_error_text(error, secrets)]
    if skipped is not None:
        which = f"Command {total}" if skipped.first == total else f"Commands {skipped.first} to {total}"
        parts += ["", wrap(f"{which}: not carried out: {skipped.reason}; send them again in another mail.", hang="")]
    parts += ["", quote(mail, secrets)]
    subjects = {error_subject(error, catalog) for _, _, error in refusals}
    return Reply((mail.sender,), subjects.pop() if len(subjects) == 1 else "pbmserv Error", "\n".join(parts), "error")


def _missed(refusals: list[tuple[int, str, Refusal]], skipped: Skipped | None, total: int) -> int:
    """How many of a `multiple` mail's commands were not carried out."""
    return len(refusals) + (total - skipped.first + 1 if skipped is not None else 0)


def _error_text(error: Refusal, secrets: tuple[str, ...]) -> list[str]:
    """What was wrong, how to do it right, and the board where a move was refused."""
    parts = [wrap(mask(error.message, secrets), hang="")]
    if error.fix:
        parts.append(wrap(f"How to do it right: {error.fix}"))
    if error.board_text:
        parts += ["", error.board_text.rstrip("\n")]
    return parts


def read_headers(raw: bytes) -> IncomingMail | None:
    """What can be read of a mail that could not be read whole: its
    headers, or None if not even they can be."""
    try:
        return parse_headers(raw)
    except Exception:
        log.exception("a mail's headers could not be read")
        return None


def unreadable_reply(error: Unreadable) -> Callable[[IncomingMail, tuple[str, ...]], Reply]:
    def answer(mail: IncomingMail, secrets: tuple[str, ...]) -> Reply:
        return Reply((mail.sender,), "pbmserv Error", (
            wrap(f"The server could not read your mail: {error.reason}. Nothing in it was carried out.", hang="")
            + "\n" + wrap(
                "How to do it right: send your command as a plain text mail, the command in the Subject "
                "line (or 'multiple' there and one command on each line of the body), without attachments."
            ) + "\n\n" + quote(mail, secrets)
        ), "error")
    return answer


def failed_copy(mail: IncomingMail | None, request: Request | None) -> bytes:
    """What is kept of a failed mail: its masked copy. Where its commands
    could not be read, nothing tells where its passwords stand, so only its
    headers are kept (the Subject masked where a password would stand)."""
    if mail is None:
        return _nothing_kept("not kept: the mail could not be read")
    if request is not None:
        return masked_copy(mail, request.passwords, always=True)
    headers_only = replace(mail, text="", body="")
    return masked_copy(
        headers_only, probable_passwords(mail.subject), always=True, state="passwords removed; its text was not kept",
    )


def _nothing_kept(state: str) -> bytes:
    """A copy of a mail that keeps nothing of it but what `state` says."""
    return message_bytes([(MASKED_HEADER, state)], "")


def apology(mail: IncomingMail, secrets: tuple[str, ...]) -> Reply:
    """The answer to a mail the server failed on: nothing in it was done."""
    return Reply((mail.sender,), "pbmserv Error", (
        "The server failed while handling your mail; nothing in it was carried out.\n"
        "The operator has been told. Please try again later.\n\n" + quote(mail, secrets)
    ), "error")


def mask(text: str, secrets: tuple[str, ...]) -> str:
    """`text` with every password in it masked: wherever it stands as a
    word, also in quotes or brackets or before punctuation marks (as an
    error message quotes a word, or a comment ends a sentence). One pass
    over the words, however many passwords: a mail of 20,000 lines may
    give tens of thousands of words that may be passwords."""
    hidden = frozenset(secret for secret in secrets if secret)
    return _WORD.sub(lambda word: _masked_word(word.group(), hidden), text) if hidden else text


_WORD = re.compile(r"\S+")
_OPENING, _CLOSING = "'\"`(<[", "'\"`)>].,;:!?"


def _masked_word(word: str, hidden: frozenset[str]) -> str:
    """The word, or it with the password it holds within up to three
    quotes, brackets or punctuation marks on either side masked."""
    leading = min(len(word) - len(word.lstrip(_OPENING)), 3)
    trailing = min(len(word) - len(word.rstrip(_CLOSING)), 3)
    for start in range(leading + 1):
        for cut in range(trailing + 1):
            if word[start:len(word) - cut] in hidden:
                return word[:start] + MASK + word[len(word) - cut:]
    return word


def quote(mail: IncomingMail, secrets: tuple[str, ...]) -> str:
    """The sender's mail as an answer quotes it: passwords masked, at most
    QUOTED_LINES lines of at most QUOTED_LINE_CHARS characters (an error
    must not carry a stranger's text to whoever a forged sender names)."""
    lines = [f"Subject: {mask(mail.subject, secrets)}", *([""] + mask(mail.body, secrets).splitlines() if mail.body else [])]
    quoted = [f"> {_cut(line, QUOTED_LINE_CHARS)}".rstrip() for line in lines[:QUOTED_LINES]]
    if len(lines) > QUOTED_LINES:
        quoted.append(f"> [... {len(lines) - QUOTED_LINES} more lines]")
    return "Your mail:\n" + "\n".join(quoted)


def _cut(text: str, most: int) -> str:
    return text if len(text) <= most else text[:most] + " [...]"


def masked_copy(
    mail: IncomingMail, secrets: tuple[str, ...], *, always: bool = False, state: str = "passwords removed after processing",
) -> bytes | None:
    """What is kept of a processed mail that carried passwords: its headers
    that matter and its text, with every password replaced by a mask; None
    for a mail without any (it is kept as it came), unless `always`."""
    if not secrets and not always:
        return None
    headers = [
        (name, mail.headers[name.lower()])
        for name in ("From", "Reply-To", "To", "Date", "Message-ID", "In-Reply-To", "References")
        if mail.headers.get(name.lower())
    ]
    headers += [
        ("Subject", mask(mail.subject, secrets)),
        (MASKED_HEADER, state),
    ]
    return message_bytes(headers, mask(mail.text, secrets) + "\n")
