"""What the worker and the processor hand each other for a batch
(`Processor.process_batch`): values, not callbacks. The worker says what
the batch writes for `serve`'s deliverer (`DeliveryOrder`); the batch
says what it did (`BatchDone`), and the worker hands the deliverer the
ids after the commit. The one thing told while the batch runs is which
mail it begins (`Watch`), for the watchdog that recognises a stuck worker."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from pbmserv.service.delivery import sending as delivery
from pbmserv.service.delivery.claims import UNOWNED, Claim
from pbmserv.service.intake.arrival import Clock
from pbmserv.store import outbox

if TYPE_CHECKING:
    from pbmserv.store.handles import Connection


@dataclass(frozen=True)
class DeliveryOrder:
    """What a batch writes for `serve`'s deliverer in its transaction (and
    again in the batch of one mail tried after it if it fails): its replies
    claimed for the deliverer `claim` names; the outcomes the deliverer
    handed back; with `take_over`, this server's claims for every other
    deliverer released (`delivery.take_over`); and up to `due_to_claim`
    mails that have come due claimed for it (0: none)."""

    claim: Claim = UNOWNED
    outcomes: tuple[dict[str, Any], ...] = ()
    take_over: bool = False
    due_to_claim: int = 0

    def carry_out(self, connection: Connection, clock: Clock) -> list[int]:
        """In the batch's transaction, before its mails; the ids of the
        outbox mails claimed for the deliverer (still held for it, then due)."""
        outbox.write_outcomes(connection, list(self.outcomes))
        claimed = delivery.take_over(connection, self.claim, clock()) if self.take_over else []
        if self.due_to_claim:
            claimed += delivery.claim_due(connection, self.claim, clock(), self.due_to_claim)
        return claimed


@dataclass(frozen=True)
class BatchDone:
    """What a batch did: how many mails it processed, whether pending mail
    may be left; and, given a `DeliveryOrder`, what the worker hands its
    deliverer after the commit: the inbound mails whose replies the batch
    wrote claimed for it, and the outbox mails the order claimed for it."""

    processed: int
    more: bool
    answered: tuple[int, ...] = ()
    claimed: tuple[int, ...] = ()


class Watch(Protocol):
    """Told the dedup key of each mail as the batch begins to process it:
    `serve`'s watchdog (`pipes.Progress`) so recognises a worker stuck on
    one mail, while the batch still runs. It is told nothing else."""

    def begin(self, key: str) -> None: ...


@dataclass
class Begun:
    """A `Watch` that keeps the keys it is told, passing each on: the mail
    a batch of one was processing when it failed."""

    watch: Watch | None
    keys: list[str] = field(default_factory=list)

    def begin(self, key: str) -> None:
        self.keys.append(key)
        if self.watch is not None:
            self.watch.begin(key)
