"""The log line of each inbound mail: how it went, and what it asked for."""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass

from pbmserv.protocol import ParseError, Request
from pbmserv.protocol.commands import GameCommand
from pbmserv.protocol.errors import EmptyCommand
from pbmserv.refusal import Refusal
from pbmserv.store.states import Inbound

log = logging.getLogger("pbmserv.service.processing.processor")  # the name operators filter on


@dataclass(frozen=True)
class Processed:
    """How one inbound mail went, for its log line: its outcome (done,
    refused, dropped, failed or duplicate), why, and the milliseconds its
    processing took (None: it was given up unprocessed)."""

    inbound_id: int
    sender: str
    command: str
    outcome: str
    reason: str
    ms: int | None

    def log(self) -> None:
        outcome = f"{self.outcome} ({self.reason})" if self.reason else self.outcome
        took = f" in {self.ms} ms" if self.ms is not None else ""
        fields: dict[str, object] = {
            "inbound_id": self.inbound_id, "sender": self.sender or "<>", "command": self.command, "outcome": self.outcome,
        }
        if self.reason:
            fields["reason"] = self.reason
        if self.ms is not None:
            fields["ms"] = self.ms
        log.log(
            logging.WARNING if self.outcome == Inbound.FAILED else logging.INFO,
            "inbound %s from %s: %s: %s%s", self.inbound_id, fields["sender"], self.command, outcome, took, extra=fields,
        )



def command_words(request: Request | None) -> str:
    """What a mail asked for, as its log line names it: the kind of its
    command, told from the command read, never words of its text (where
    passwords stand); `multiple (N commands)`; `-` for none, `?` for a
    command that could not be read (`GAME ?` if its game was)."""
    if request is None:
        return "-"
    total = len(request.lines) + len(request.unread)
    if total > 1:
        return f"multiple ({total} commands)"
    line = request.lines[0]
    if line.command is None:
        if isinstance(line.error, EmptyCommand):
            return "-"
        return f"{line.error.game} ?" if line.error is not None and line.error.game else "?"
    if isinstance(line.command, GameCommand):  # `majorities help`, not `majorities game help`
        return f"{line.command.game} {_words(type(line.command).__name__.removeprefix('Game'))}"
    return _words(type(line.command).__name__)



def refusal_kind(error: Refusal) -> str:
    """`unknown command`, `bad argument`, ... for a command that could not be read; "" for one the service refused."""
    return _words(type(error).__name__) if isinstance(error, ParseError) else ""



def _words(name: str) -> str:
    """`ChangePassword` -> `change password`."""
    return re.sub(r"(?<!^)(?=[A-Z])", " ", name).lower()



def ms_since(started: float) -> int:
    return round((time.monotonic() - started) * 1000)
