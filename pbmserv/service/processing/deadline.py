"""How long a mail's commands may work, seen inside the long loops of a
command as well as between commands.

`Processor` runs each mail's commands `within` its time (MAIL_SECONDS);
a loop whose length a mail decides (replaying a board's moves) asks
`passed()` every few steps and refuses the command once the time is up,
so that one command cannot run past the bound the processor checks only
between commands. Outside a mail (the timer pass, the bots' process)
no time is set and `passed()` is always False.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_DEADLINE: ContextVar[float] = ContextVar("pbmserv_deadline", default=math.inf)
_SECONDS: ContextVar[float] = ContextVar("pbmserv_deadline_seconds", default=math.inf)


@contextmanager
def within(seconds: float) -> Iterator[None]:
    """The work inside may take `seconds` from now."""
    deadline, limit = _DEADLINE.set(time.monotonic() + seconds), _SECONDS.set(seconds)
    try:
        yield
    finally:
        _DEADLINE.reset(deadline)
        _SECONDS.reset(limit)


def passed() -> bool:
    """Whether the time the work under way may take is up."""
    return time.monotonic() >= _DEADLINE.get()


def seconds() -> float:
    """The time the work under way may take in all (for a refusal to name)."""
    return _SECONDS.get()
