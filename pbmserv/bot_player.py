"""The bots of `serve`: in a process of their own, so that their thinking
never holds up the worker, they think out the bots' turns, fairly across
the players who wait (`service.bot_queue`), and hand each move in as a
mail (through intake, as the listener does), waking the worker to play it.
The worker wakes them in turn after each batch it processed, since a
player's move may have made a bot's turn due."""

from __future__ import annotations

import threading

from pbmserv.loop import Loop
from pbmserv.pipes import EventLike
from pbmserv.runtime import Runtime
from pbmserv.service.bots.queue import LOOK_SECONDS, BotQueue, Stopped


class BotPlayer(Loop):
    def __init__(self, runtime: Runtime, wake_worker: EventLike, wake: EventLike | None = None):
        super().__init__(runtime)
        assert runtime.catalog is not None, "a Runtime loads its catalog"
        self.wake = wake if wake is not None else threading.Event()
        self.queue = BotQueue(
            runtime.engine, runtime.intake, runtime.catalog, runtime.clock,
            woken=self._woken, stopping=self.stopping.is_set, on_hand_in=wake_worker.set,
        )

    def _woken(self) -> bool:
        if not self.wake.is_set():
            return False
        self.wake.clear()
        return True

    def stop(self) -> None:
        super().stop()
        self.wake.set()

    def pause(self) -> None:
        # however often the worker wakes them, the bots look at most every LOOK_SECONDS
        if not self.stopping.wait(LOOK_SECONDS):
            self.wake.wait(self.runtime.settings.poll_seconds)

    def work_round(self) -> None:
        self.wake.clear()
        try:
            self.queue.run()
        except Stopped:  # the think under way is dropped: the next bots process thinks it anew
            pass
