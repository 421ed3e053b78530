"""The deliverer of `serve`: in a process of its own, it sends what the
worker hands over and hands back how each mail went; it writes nothing
to the database."""

from __future__ import annotations

from pbmserv.loop import Loop
from pbmserv.pipes import EventLike, Handover, OutcomesPipe
from pbmserv.runtime import Runtime
from pbmserv.service.delivery.claims import UNOWNED, Claim


class Deliverer(Loop):
    """Sends what the worker hands over (`handed_over`) as soon as it comes,
    and hands back how each mail went (`outcomes`), waking the worker
    (`wake_worker`) to write it. It sends only mail claimed for it (`claim`)."""

    def __init__(
        self, runtime: Runtime, handed_over: Handover, outcomes: OutcomesPipe, wake_worker: EventLike | None = None,
        claim: Claim = UNOWNED,
    ):
        super().__init__(runtime)
        self.handed_over = handed_over
        self.wake_worker = wake_worker
        self.claim = claim
        runtime.delivery.hand_back = outcomes.send

    def pause(self) -> None:
        if not self.runtime.delivery.has_queued:
            self.handed_over.wait(self.runtime.settings.poll_seconds)

    def work_round(self) -> None:
        # every round, also without new ids: what a round before could
        # neither hand back nor read is done first
        sent = self.runtime.delivery.deliver_handed_over(*self.handed_over.take(), claim=self.claim)
        if sent and self.wake_worker is not None:
            self.wake_worker.set()
