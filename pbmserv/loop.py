"""The loop a role of `serve` runs in its process (or, in tests, in a
thread): a round of work, a pause, until it is asked to stop or the
serving process is gone."""

from __future__ import annotations

import logging
import os
import threading

from pbmserv.runtime import Runtime

log = logging.getLogger(__name__)


class Loop:
    """A round (`work_round`) then a `pause`, until `stop`; `leave` on the way out."""

    def __init__(self, runtime: Runtime):
        self.runtime = runtime
        self.stopping = threading.Event()

    def run(self, parent_pid: int | None = None) -> None:
        while not self.stopping.is_set():
            if parent_pid is not None and os.getppid() != parent_pid:
                log.warning("the serving process is gone; %s stops", type(self).__name__.lower())
                return
            try:
                self.work_round()
            except Exception:
                log.exception("%s round failed; retrying", type(self).__name__.lower())
            self.pause()
        self.leave()

    def stop(self) -> None:
        self.stopping.set()

    def work_round(self) -> None:
        raise NotImplementedError

    def pause(self) -> None:
        raise NotImplementedError

    def leave(self) -> None:
        """What is left to do once stopped: nothing unless a role says so."""
