"""Which function handles which command: a handler names the types of the
commands it handles where it is written (`@handles(Signup)`), and
`dispatch.execute` runs it. A global command's handler takes the context
and the command, a per-game command's the game as well; every handler
returns the replies to send."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from pbmserv.protocol.commands import Command
from pbmserv.service.processing.context import Reply

Handler = TypeVar("Handler", bound=Callable[..., list[Reply]])

#: each command type's handler, bound as the modules of the handlers are imported
HANDLERS: dict[type[Command], Callable[..., list[Reply]]] = {}


def handles(*types: type[Command]) -> Callable[[Handler], Handler]:
    def bind(handler: Handler) -> Handler:
        for command_type in types:
            bound = HANDLERS.setdefault(command_type, handler)
            if bound is not handler:
                raise TypeError(f"{command_type.__name__} is handled by {bound.__qualname__} already")
        return handler

    return bind
