"""The worker, which processes inbound mail in batches and runs the timer
pass; in `serve` the database's one writer, in a process of its own (in
a thread in tests). The deliverer it hands mail to is `deliverer.py`."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from pbmserv.loop import Loop
from pbmserv.pipes import Claims, EventLike, Handover, OutcomesPipe, Progress
from pbmserv.runtime import Runtime
from pbmserv.service.delivery.claims import UNOWNED
from pbmserv.service.processing.batches import DeliveryOrder
from pbmserv.store import outbox
from pbmserv.store.database import writing

log = logging.getLogger(__name__)

#: due outbox mails the worker claims for the deliverer in one batch at most
CLAIMED_PER_BATCH = 200


class Worker(Loop):
    """Processes inbound mail in arrival order and, every `timer_seconds`,
    sends reminders and forfeits late games; woken by `wake` (set on new
    mail) or every `poll_seconds`, until `stop` is set. After a batch that
    processed mail it wakes the bots (`wake_bots`): a player's move may
    have made a bot's turn due. In `serve` it writes for the deliverer
    too, in the batch's transaction (a `DeliveryOrder`): what the deliverer
    handed back through `outcomes`, and, every `poll_seconds`, claims for it
    the mail that has come due; after the commit it hands the deliverer
    those and the replies the batch wrote through `deliver`, claimed for the
    deliverer running now (`claims`). Without a deliverer it delivers itself."""

    def __init__(
        self, runtime: Runtime, wake: EventLike | None = None, deliver: Handover | None = None,
        outcomes: OutcomesPipe | None = None, progress: Progress | None = None, claims: Claims | None = None,
        wake_bots: EventLike | None = None,
    ):
        super().__init__(runtime)
        self.wake = wake if wake is not None else threading.Event()
        self.wake_bots = wake_bots
        self.deliver = deliver
        self.outcomes = outcomes
        self.progress = progress
        self.claims = claims
        #: the deliverer token whose predecessors' claims this worker has released (`delivery.take_over`)
        self._taken_over: str | None = None
        self._thread: threading.Thread | None = None
        self._timers_due = time.monotonic()
        self._claims_due = time.monotonic()
        #: outcomes handed back and taken from the pipe, until a batch that writes them commits
        self._unwritten: list[dict[str, Any]] = []

    def start(self) -> None:
        """Run in a thread of this process (tests, `receive`-style use)."""
        self._thread = threading.Thread(target=self.run, name="pbmserv-worker", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.stopping.set()
        self.wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def pause(self) -> None:
        self.wake.wait(self.runtime.settings.poll_seconds)
        self.wake.clear()

    def leave(self) -> None:
        """What the deliverer handed back last is written before the worker goes."""
        if self.outcomes is None:
            return
        self._unwritten += self.outcomes.take()
        if self._unwritten:
            with writing(self.runtime.engine) as connection:
                outbox.write_outcomes(connection, self._unwritten)
            self._unwritten = []

    def work_round(self) -> None:
        more = True
        while more and not self.stopping.is_set():  # mail stored meanwhile wakes the worker again
            more = self._batch()
        self.runtime.processor.empty_the_spool()
        if time.monotonic() >= self._timers_due:
            self._timers_due = time.monotonic() + self.runtime.settings.timer_seconds
            for line in self.runtime.processor.run_timers():
                log.info("timers: %s", line)
        if self.deliver is None:  # in a thread: deliver here, retries that came due too
            self.runtime.delivery.deliver_due()

    def _batch(self) -> bool:
        """One batch; whether pending mail may be left."""
        # before the outcomes are taken: a deliverer is renewed only once the old one is dead, its outcomes all sent
        claim = self.claims.current() if self.claims is not None else UNOWNED
        taking_over = self.claims is not None and claim.token != self._taken_over
        claims_due = self.deliver is not None and (taking_over or time.monotonic() >= self._claims_due)
        if self.outcomes is not None:
            self._unwritten += self.outcomes.take()
        order = None
        if self.deliver is not None:
            order = DeliveryOrder(claim, tuple(self._unwritten), taking_over, CLAIMED_PER_BATCH if claims_due else 0)
            if claims_due and self.runtime.delivery.claim_owner is not None:
                self.runtime.delivery.claim_owner.keep()
        try:
            done = self.runtime.processor.process_batch(order=order, watch=self.progress)
        finally:
            if self.progress is not None:
                self.progress.end()
        self._unwritten = []
        if done.processed and self.wake_bots is not None:
            self.wake_bots.set()
        if taking_over:
            self._taken_over = claim.token
        if self.deliver is not None:
            self.deliver.send(done.answered, done.claimed)
            if claims_due and len(done.claimed) < CLAIMED_PER_BATCH:  # else more is due at once
                self._claims_due = time.monotonic() + self.runtime.settings.poll_seconds
        return done.more
