"""The worker's heart: pending inbound mail processed in batches, each
mail in one transaction's savepoint that applies its commands, writes its
replies to the outbox and marks it done — all of it or nothing; the timer
pass; the operator's `fail`."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any

from pbmserv.config import Settings
from pbmserv.mail.inbound import IncomingMail, parse_mail
from pbmserv.mail.loops import no_reply_reason
from pbmserv.mail.mime import Unreadable
from pbmserv.protocol import Line, Request, probable_passwords
from pbmserv.protocol.request import MOST_COMMANDS
from pbmserv.refusal import Refusal
from pbmserv.service.commands import open_challenges, seeking
from pbmserv.service.commands.dispatch import execute
from pbmserv.service.intake.arrival import Clock, utc_now, vouched_for
from pbmserv.service.intake.masking import mask, masked_copy
from pbmserv.service.play.reply_addresses import holds_reply_address, mask_addresses
from pbmserv.service.processing import deadline
from pbmserv.service.processing.answers import (
    Skipped,
    apology,
    commands_missed,
    error_reply,
    failed_copy,
    read_headers,
    refusals_reply,
    unreadable_reply,
)
from pbmserv.service.processing.batches import BatchDone, Begun, DeliveryOrder, Watch
from pbmserv.service.processing.catalog import Catalog
from pbmserv.service.processing.context import Context, Proof, Reply
from pbmserv.service.processing.errors import WaitsItsTurn, wait_if_ahead
from pbmserv.service.processing.output import ANSWERING, BatchOutput, Composed, compose_replies, outbox_rows
from pbmserv.service.processing.passwords import Passwords
from pbmserv.service.processing.processed import Processed, command_words, ms_since, refusal_kind
from pbmserv.service.processing.rates import forget_old_events
from pbmserv.service.processing.requests import StaleReplyAddress, naming_the_game, read_request, readable
from pbmserv.service.timers import digests, retention
from pbmserv.service.timers import timer_pass as timers
from pbmserv.store import inbound
from pbmserv.store.database import reading, savepoint, synced, writing
from pbmserv.store.inbound import CONNECTION_ERRORS
from pbmserv.store.key import ServerKey, server_key
from pbmserv.store.spool import Arrival, Spool
from pbmserv.store.states import Inbound

if TYPE_CHECKING:
    from pbmserv.store.handles import Connection, Engine

log = logging.getLogger(__name__)

#: running boards the timer pass checks in one transaction
TIMER_BOARDS_PER_TRANSACTION = 50

#: spooled mails a batch moves into the database at most
ADMITTED_PER_BATCH = 200

#: the commands of a `multiple` mail left when it has taken this long are not carried out,
#: and a command's long loops refuse it (`deadline`)
MAIL_SECONDS = 2.0

#: how long the sealed original of a failed mail is kept, for an operator to retry it
FAILED_ORIGINALS_KEPT = timedelta(days=7)


@dataclass
class Processor:
    engine: Engine
    settings: Settings
    catalog: Catalog
    clock: Clock = utc_now
    #: where SMTP intake keeps mail on SQLite (see `pbmserv.store.spool`), for the worker to admit
    spool: Spool | None = None

    def __post_init__(self) -> None:
        self.passwords = Passwords(self.settings)

    @cached_property
    def key(self) -> ServerKey:
        """The server's key, read on first use, to open sealed mail."""
        return server_key(self.settings)

    # -- processing ----------------------------------------------------------
    def process_pending(self) -> int:
        """Process every pending inbound mail in arrival order; returns how many."""
        count, more = 0, True
        while more:
            done = self.process_batch()
            count, more = count + done.processed, done.more
        self.empty_the_spool()
        return count

    def empty_the_spool(self) -> None:
        """With no mail left to process: remove the admitted mails that are
        still in the spool once the database is on the disk. A batch makes
        its commit durable at most once a second, and the last batch before
        a pause may not have been one; without this, what it admitted would
        stay in the spool, room and all, until mail came again."""
        if self.spool is not None and self.spool.holds_admitted() and synced(self.engine):
            self.spool.admitted(0, synced=True)

    def has_pending(self) -> bool:
        """Whether any mail waits: pending in the database, or in the spool and not admitted by this process."""
        with reading(self.engine) as connection:
            return bool(self.spool is not None and self.spool.waiting(1)) or inbound.any_pending(connection)

    def process_batch(
        self, most: int = 50, seconds: float = 0.025, order: DeliveryOrder | None = None, watch: Watch | None = None,
    ) -> BatchDone:
        """Process the oldest pending mails, one after another in one
        transaction (a commit costs more than a move), each mail all or
        nothing in a savepoint; returns how many, whether pending mail may
        be left, and what to hand `serve`'s deliverer (`BatchDone`). It
        stops after `most` mails or once `seconds` have passed, so that
        other writers (a drainer, SMTP intake) never wait long.

        Mails are processed in arrival order, also across processes: a later
        mail (a move) may depend on an earlier one (the challenge); mail that
        proves whose it is goes first (`inbound.next_pending`), and one taken
        ahead that names an account not known or confirmed yet waits its
        turn (`WaitsItsTurn`). A process that finds
        the oldest mails locked waits for them, then finds them done and
        takes the next. `watch` is told each mail's dedup key as its
        processing begins. With an `order` (`serve`'s worker), the replies
        are written claimed for its deliverer, and what it orders for the
        deliverer is written at the transaction's start: again for a batch
        tried after a failed one."""
        try:
            return self._process_batch(most, seconds, order, watch)
        except CONNECTION_ERRORS:  # the database: the batch is tried again later
            raise
        except Exception:
            log.exception("a batch of inbound mail failed; its mails are processed one at a time")
        return self._process_oldest_alone(order, watch)

    def _process_oldest_alone(self, order: DeliveryOrder | None, watch: Watch | None) -> BatchDone:
        """After a batch failed for a reason other than the database (a bug
        that each mail's own handling did not catch): the oldest pending
        mail in a batch of its own, and if that fails too, the mail is given
        up. Without this, such a mail would be tried again and again and no
        mail after it would ever be processed."""
        begun = Begun(watch)
        try:
            return self._process_batch(1, 0.0, order, begun)
        except CONNECTION_ERRORS:
            raise
        except Exception as error:
            if not begun.keys:
                raise
            log.exception("the inbound mail with dedup key %s fails on its own too; giving it up", begun.keys[0])
            self.give_up(begun.keys[0], f"could not be processed: {type(error).__name__}: {error}")
            return BatchDone(1, True)

    def _process_batch(self, most: int, seconds: float, order: DeliveryOrder | None, watch: Watch | None) -> BatchDone:
        batch_ends = time.monotonic() + seconds
        durable = self.spool is not None and self.spool.removal_due()
        with writing(self.engine, durable=durable) as connection:
            admitted = self._admit(connection)
            claimed = order.carry_out(connection, self.clock) if order is not None else []
            taken, ahead = inbound.next_pending(connection, most)
            output = BatchOutput(connection, self.clock, self.settings, self.key, claim=order.claim if order is not None else None)
            done = 0
            for row_id in taken:
                row = inbound.pending_mail(connection, row_id)
                if watch is not None:
                    watch.begin(row.dedup_key)
                self._process(connection, output, row, row_id in ahead)
                done += 1
                if time.monotonic() >= batch_ends and done < len(taken):
                    break
            output.write()
        self._forget(admitted, synced=durable and done > 0)  # each mail done wrote its outcome
        for processed in output.processed:
            processed.log()
        more = done < len(taken) or len(taken) == most or len(admitted) == ADMITTED_PER_BATCH
        answered = tuple(sorted(output.answered)) if order is not None else ()  # nothing to hand over without a deliverer
        return BatchDone(done, more, answered, tuple(claimed))

    def _forget(self, admitted: list[Arrival], synced: bool = False) -> None:
        """Tell the spool which of its mails are in the database now (committed),
        and whether that commit was durable (`synced`: all admitted so far is on the disk)."""
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
        inbound.admit(connection, arrivals)
        return arrivals

    def _process(self, connection: Connection, output: BatchOutput, row: Any, ahead: bool) -> None:
        """One mail, and how it went for the log."""
        started = time.monotonic()
        request, outcome, why = self._process_mail(connection, output, row, ahead)
        output.processed.append(Processed(row.id, row.envelope_sender, command_words(request), outcome, why, ms_since(started)))

    def _process_mail(self, connection: Connection, output: BatchOutput, row: Any, ahead: bool) -> tuple[Request | None, str, str]:
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
        status, problem = Inbound.DONE, ""
        composed: list[Composed] = []
        try:
            original = self._original(row)
            mail = parse_mail(original)
            reason = no_reply_reason(mail, row.envelope_sender)
            if reason is not None:
                status, problem = Inbound.DROPPED, reason
            else:
                request, vouched = read_request(connection, self.key, self.catalog.names(), mail, row.reply_token, self.settings.address)
                trusted_from = mail.author == mail.sender and vouched_for(mail, self.settings.trusted_authserv_id)
                proof = Proof(vouched, trusted_from, row.envelope_sender)
                with deadline.within(MAIL_SECONDS):  # seen inside a command's long loops too
                    composed, refusal = self._run_request(connection, output, row.id, mail, request, proof, now, ahead)
        except CONNECTION_ERRORS:  # the database, not the mail: try the batch again later
            raise
        except WaitsItsTurn:
            output.wait_turn(row.id)
            return request, "waits", "names an account not known yet; older mail first"
        except StaleReplyAddress as error:
            assert mail is not None, "a mail is read before its request"
            stale = [error_reply(mail, error, self.catalog, ())]
            composed, refusal = self._compose(connection, row.id, mail, stale, now), "stale reply address"
        except Unreadable as error:
            self._fail(output, row, f"unreadable: {error.reason}", now, unreadable_reply(error))
            return None, Inbound.FAILED, f"unreadable: {error.reason}"
        except Exception as error:  # a bug must not lose the mail or half-apply it
            log.exception("inbound %s failed", row.id)
            self._fail(output, row, f"{type(error).__name__}: {error}", now, apology, mail, request)
            return request, Inbound.FAILED, type(error).__name__
        kept = None  # a dropped mail stays as stored: as it came, or, sealed, its headers
        if request is not None and (request.passwords or holds_reply_address(original.decode("latin-1"))):
            kept = masked_copy(mail, request.passwords)
        elif request is not None and row.sealed is not None:  # it held no password after all: as it came
            kept = original
        output.finish(row.id, composed, now, status=status, error=problem, masked=kept)
        return (request, "refused", refusal) if refusal is not None else (request, status, problem)

    def _run_request(
        self, connection: Connection, output: BatchOutput, row_id: int, mail: IncomingMail, request: Request,
        proof: Proof, now: datetime, ahead: bool = False,
    ) -> tuple[list[Composed], str | None]:
        """Run the mail's commands and compose their replies, all in the
        mail's savepoint (a bug in either undoes the commands). The refusal
        of a mail's only command is answered with its error mail; a
        `multiple` mail runs each command in a savepoint of its own, for
        at most MAIL_SECONDS, and answers all it did not carry out in one
        mail. Returns the replies, and None if every command was carried
        out, else what kind of refusal it was, or how many were not."""
        secrets = request.passwords
        comment = mask_addresses(mask(request.comment, secrets))  # passed on to others, and kept with a move
        if len(request.lines) == 1 and not request.unread:
            line = request.lines[0]
            try:
                with savepoint(connection, "mail"):
                    replies = self._run_line(connection, output, mail, line, comment, now, proof)
                    return self._compose(connection, row_id, mail, replies, now, proof), None
            except Refusal as error:
                wait_if_ahead(error, ahead)
                refused = [error_reply(mail, naming_the_game(line, error), self.catalog, secrets)]
                return self._compose(connection, row_id, mail, refused, now, proof), refusal_kind(error)
        started = time.monotonic()
        replies, refusals, skipped = [], [], None
        with savepoint(connection, "mail"):
            for number, line in enumerate(request.lines, start=1):
                try:
                    if line.error is not None:
                        raise line.error
                    with savepoint(connection, "line"):
                        replies += self._run_line(connection, output, mail, line, comment, now, proof)
                except Refusal as error:
                    wait_if_ahead(error, ahead)
                    refusals.append((number, line.text, naming_the_game(line, error)))
                if number < len(request.lines) and time.monotonic() - started > MAIL_SECONDS:
                    skipped = Skipped(number + 1, f"your mail had taken more than {MAIL_SECONDS:g} s of the server's time")
                    break
            if skipped is None and request.unread:
                skipped = Skipped(len(request.lines) + 1, f"the server carries out at most {MOST_COMMANDS} commands of a mail")
            if not refusals and skipped is None:
                return self._compose(connection, row_id, mail, replies, now, proof), None
            total = len(request.lines) + len(request.unread)
            replies.append(refusals_reply(mail, refusals, skipped, total, self.catalog, secrets))
            missed = f"{commands_missed(refusals, skipped, total)} of {total} commands"
            return self._compose(connection, row_id, mail, replies, now, proof), missed

    def _original(self, row: Any) -> bytes:
        """The mail as it came: unsealed, or as it is stored if it was not
        sealed. Raises Unsealable if this server's key does not open it."""
        return self.key.unseal(row.sealed) if row.sealed is not None else row.raw

    def _compose(
        self, connection: Connection, row_id: int, mail: IncomingMail, replies: list[Reply], now: datetime, proof: Proof | None = None,
    ) -> list[Composed]:
        """Each reply with its outbox rows; an answer to an address the mail proves its writer owns is asked."""
        answers = proof is not None and any(reply.kind in ANSWERING for reply in replies)  # most moves: board mails alone
        owned = proof.owned(connection, mail.sender) if proof is not None and answers else frozenset[str]()
        return compose_replies(self.settings.address, self.key, row_id, mail, replies, now, owned)

    def _fail(
        self, output: BatchOutput, row: Any, reason: str, now: datetime,
        answer: Callable[[IncomingMail, tuple[str, ...]], Reply] | None,
        mail: IncomingMail | None = None, request: Request | None = None,
    ) -> None:
        """Mark the mail failed with `reason`, keep only a masked copy of
        it, and send `answer` (if any) to its sender if it may be answered.
        Whatever could not be read of the mail before is read here as far as
        it can be; nothing in here raises for what the mail holds."""
        if mail is None:
            mail = read_headers(row.raw)
        composed: list[Composed] = []
        if mail is not None and answer is not None and no_reply_reason(mail, row.envelope_sender) is None:
            secrets = request.passwords if request is not None else probable_passwords(mail.subject)
            try:
                composed = self._compose(output.connection, row.id, mail, [answer(mail, secrets)], now)
            except Exception:
                log.exception("inbound %s: the answer to a failed mail could not be made", row.id)
        output.finish(row.id, composed, now, status=Inbound.FAILED, error=reason, masked=failed_copy(mail, request))

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
        except CONNECTION_ERRORS:
            raise
        except Exception:
            log.exception("the inbound mail with dedup key %s could not be given up with an apology", key)
            return self._give_up(key, reason, None)

    def _give_up(self, key: str, reason: str, answer: Callable[[IncomingMail, tuple[str, ...]], Reply] | None) -> bool:
        now = self.clock()
        with self.engine.begin() as connection:
            admitted = self._admit(connection)
            row = inbound.pending_by_key(connection, key)
            if row is None:
                return False
            output = BatchOutput(connection, self.clock, self.settings, self.key)
            mail, request = readable(self._original(row), self.catalog.names())
            self._fail(output, row, reason, now, answer, mail, request)
            output.write()
        self._forget(admitted)
        Processed(row.id, row.envelope_sender, command_words(request), Inbound.FAILED, reason, None).log()
        return True

    def fail(self, row_id: int, reason: str) -> str | None:
        """An operator's decision: the pending mail is marked failed with
        `reason`, unprocessed and unanswered, and only its masked copy is
        kept (and its sealed original, for `retry`). Returns why it was
        not, or None."""
        now = self.clock()
        with self.engine.begin() as connection:
            row = inbound.by_id(connection, row_id)
            if row is None or row.status != Inbound.PENDING:
                return f"it is {row.status}, not pending" if row is not None else "no such mail"
            output = BatchOutput(connection, self.clock, self.settings, self.key)
            self._fail(output, row, reason, now, None, *readable(self._original(row), self.catalog.names()))
            output.write()
        log.warning("inbound %s failed by the operator: %s", row_id, reason)
        return None

    def run_timers(self) -> list[str]:
        """One pass of vacations that ran out, the bot for seekers who waited (`seeking`), open challenges that
        expired, reminders and forfeits, the daily digests due, then old mail deleted (`retention`); a line for
        each thing done to a board. The boards are taken a few at a time, each group in a transaction with its
        mails: a pass over many boards never holds the database (on SQLite, all of it) for long."""
        now = self.clock()
        report: list[str] = []
        with self.engine.begin() as connection:
            report += self._timer_step(connection, now, timers.end_used_up_vacations)
            report += self._timer_step(connection, now, seeking.bots_due)
            report += self._timer_step(connection, now, open_challenges.expire)
            board_ids = timers.running_boards(connection)
            forget_old_events(connection, now)
            inbound.forget_failed_originals(connection, now - FAILED_ORIGINALS_KEPT)
        for start in range(0, len(board_ids), TIMER_BOARDS_PER_TRANSACTION):
            group = board_ids[start:start + TIMER_BOARDS_PER_TRANSACTION]
            with self.engine.begin() as connection:
                report += self._timer_step(connection, now, partial(timers.check_boards, board_ids=group))
        with self.engine.begin() as connection:
            report += self._timer_step(connection, now, digests.send_digests)
        retention.forget_old_mail(self.engine, self.settings, now)
        return report

    def _timer_step(
        self, connection: Connection, now: datetime, step: Callable[[Context], tuple[list[Reply], list[str]]],
    ) -> list[str]:
        """Run one step of the timer pass and queue the mails it made; returns its report."""
        output = BatchOutput(connection, self.clock, self.settings, self.key)
        ctx = Context(connection, self.settings, self.catalog, self.passwords, self.key, output.events, now, "")
        replies, report = step(ctx)
        output.replies += [row for reply in replies for row in outbox_rows(self.settings.address, self.key, None, None, reply, now)]
        output.write()
        return report

    def _run_line(
        self, connection: Connection, output: BatchOutput, mail: IncomingMail, line: Line, comment: str, now: datetime,
        proof: Proof,
    ) -> list[Reply]:
        """The replies to one command line; raises its Refusal if it is refused."""
        if line.error is not None:
            raise line.error
        assert line.command is not None, "a line is read into a command or an error"
        ctx = Context(
            connection, self.settings, self.catalog, self.passwords, self.key, output.events, now, mail.sender, comment,
            proof,
        )
        return execute(ctx, line.command)
