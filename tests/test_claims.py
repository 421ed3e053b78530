"""Claims that name their holder: `serve`'s worker and deliverer, round by
round here, on SQLite and PostgreSQL. A deliverer or a worker that dies, or
a whole `serve`, leaves no mail waiting for a claim to run out
(tests/test_claims_serve.py does it with real processes)."""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import timedelta

import pytest
from sqlalchemy import select

from pbmserv.deliverer import Deliverer
from pbmserv.mail.backends import MemoryBackend
from pbmserv.pipes import Claims, Handover, OutcomesPipe
from pbmserv.runtime import Runtime
from pbmserv.store import outbox as outbox_sql
from pbmserv.store.database import writing
from pbmserv.store.models import OutboxMail
from pbmserv.worker import Worker

SERVER = "host.example:2525"
CONTEXT = multiprocessing.get_context("spawn")


@dataclass
class Serve:
    """A `serve`'s pipes and claims, with a worker and a deliverer each on a runtime of its own, as in their processes."""

    runtime: Runtime
    claims: Claims = field(default_factory=lambda: Claims(CONTEXT, SERVER))
    handover: Handover = field(default_factory=lambda: Handover(CONTEXT))
    outcomes: OutcomesPipe = field(default_factory=lambda: OutcomesPipe(CONTEXT))
    runtimes: list[Runtime] = field(default_factory=list)

    def _own_runtime(self) -> Runtime:
        own = Runtime(self.runtime.settings, self.runtime.catalog, self.runtime.clock, self.runtime.backend)
        self.runtimes.append(own)
        return own

    def worker(self) -> Worker:
        return Worker(self._own_runtime(), deliver=self.handover, outcomes=self.outcomes, claims=self.claims)

    def deliverer(self) -> Deliverer:
        self.claims.renew()  # as `serve` does before it starts one
        return Deliverer(self._own_runtime(), self.handover, self.outcomes, claim=self.claims.current())


@pytest.fixture
def serve(runtime: Runtime) -> Iterator[Serve]:
    made = Serve(runtime)
    yield made
    for own in made.runtimes:
        own.close()


def store_help_mail(runtime: Runtime, number: int) -> None:
    runtime.intake.store(f"From: p{number}@example.org\r\nSubject: help\r\nMessage-ID: <c{number}@x>\r\n\r\n\r\n".encode())


def sent_to(runtime: Runtime) -> list[str]:
    assert isinstance(runtime.backend, MemoryBackend)
    return sorted(recipient for recipient, _ in runtime.backend.sent)


def outbox(runtime: Runtime) -> list[tuple[str, int, str]]:
    with runtime.sessions() as session:
        rows = session.scalars(select(OutboxMail).order_by(OutboxMail.id))
        return [(row.status, row.attempts, row.claim_token) for row in rows]


def test_the_replies_a_killed_deliverer_had_taken_are_sent_by_the_next_at_once(serve: Serve) -> None:
    worker, deliverer = serve.worker(), serve.deliverer()
    store_help_mail(serve.runtime, 0)
    worker.work_round()  # the reply, claimed for the deliverer and handed over
    assert serve.handover.take() != ([], []), "taken by a deliverer that is killed before it sends"
    deliverer = serve.deliverer()
    deliverer.work_round()
    assert sent_to(serve.runtime) == []
    worker.work_round()  # finds the new deliverer: releases the old one's claims and claims them for it
    deliverer.work_round()
    worker.work_round()
    assert sent_to(serve.runtime) == ["p0@example.org"], "no claim ran out: the clock stood still"
    assert outbox(serve.runtime) == [("sent", 1, "")]


def test_a_deliverer_killed_between_sending_and_handing_back_makes_the_one_duplicate(serve: Serve) -> None:
    """What a deliverer sent but could not hand back before it died is
    sent again by the next: delivery is at least once."""
    worker, deliverer = serve.worker(), serve.deliverer()
    store_help_mail(serve.runtime, 0)
    worker.work_round()
    deliverer.runtime.delivery.hand_back = lambda outcomes: []  # it dies right after handing nothing back
    deliverer.work_round()
    deliverer = serve.deliverer()
    worker.work_round()
    deliverer.work_round()
    worker.work_round()
    assert sent_to(serve.runtime) == ["p0@example.org"] * 2
    assert outbox(serve.runtime) == [("sent", 1, "")]


def test_a_new_worker_has_the_outcomes_its_killed_predecessor_took_handed_back_again(serve: Serve) -> None:
    worker, deliverer = serve.worker(), serve.deliverer()
    store_help_mail(serve.runtime, 0)
    worker.work_round()
    deliverer.work_round()
    assert len(serve.outcomes.take()) == 1, "taken by a worker that is killed before it writes them"
    worker = serve.worker()
    worker.work_round()  # hands over again what is claimed for the deliverer
    deliverer.work_round()  # which remembers it sent that, and hands back how it went instead of sending it again
    worker.work_round()
    assert sent_to(serve.runtime) == ["p0@example.org"], "sent once"
    assert outbox(serve.runtime) == [("sent", 1, "")]


def test_a_restarted_serve_releases_its_own_claims_and_nobody_elses(serve: Serve) -> None:
    worker, _ = serve.worker(), serve.deliverer()
    store_help_mail(serve.runtime, 0)
    worker.work_round()  # then serve is killed, with its worker and deliverer
    for number in (1, 2):
        store_help_mail(serve.runtime, number)
    serve.runtime.processor.process_pending()  # replies of `receive`: claimed by nobody
    now = serve.runtime.clock()
    with writing(serve.runtime.engine) as connection:
        others = [row.id for row in outbox_sql.claim_due(connection, now, now + timedelta(minutes=10), 1, "other:25", "t")]
        outbox_sql.claim_due(connection, now, now + timedelta(minutes=10), 1)  # `pbmserv deliver`'s claim
    assert len(others) == 1
    restarted = replace(serve, claims=Claims(CONTEXT, SERVER), handover=Handover(CONTEXT), outcomes=OutcomesPipe(CONTEXT))
    worker, deliverer = restarted.worker(), restarted.deliverer()
    worker.work_round()
    deliverer.work_round()
    worker.work_round()
    assert sent_to(serve.runtime) == ["p0@example.org"], "only its own claim is released before it runs out"
    assert [status for status, _, _ in outbox(serve.runtime)] == ["sent", "pending", "pending"]
