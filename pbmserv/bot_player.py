"""The bots of `serve`: in a process of their own, so that their thinking
never holds up the worker, they think out the bots' turns and hand each
move in as a mail (through intake, as the listener does), waking the
worker to play it."""

from __future__ import annotations

from pbmserv.loop import Loop
from pbmserv.pipes import EventLike
from pbmserv.runtime import Runtime
from pbmserv.service.bot_turns import play_due_turns


class BotPlayer(Loop):
    def __init__(self, runtime: Runtime, wake_worker: EventLike):
        super().__init__(runtime)
        self.wake_worker = wake_worker
        #: the turns and answers this process has handed in (their keys), not to be thought out again while the worker plays them
        self.handed_in: set[str] = set()

    def pause(self) -> None:
        self.stopping.wait(self.runtime.settings.poll_seconds)

    def work_round(self) -> None:
        assert self.runtime.catalog is not None, "a Runtime loads its catalog"
        if play_due_turns(self.runtime.engine, self.runtime.intake, self.runtime.catalog, self.runtime.clock, skip=self.handed_in):
            self.wake_worker.set()
