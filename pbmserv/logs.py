"""Log lines on standard error: human text, or one JSON object a line for
log shippers. Fields given as `extra=` (inbound_id, outcome, ms, ...) are
keys of their own in JSON; the text line says them in its message."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import datetime

#: the attributes every LogRecord has: what is not among them came as `extra=`
_RECORD_ATTRIBUTES = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


@dataclass(frozen=True)
class LogSetup:
    """How a process logs; `serve` gives its own to its child processes."""

    format: str = "text"
    verbose: bool = False


_in_force = LogSetup()


def configure(setup: LogSetup, role: str = "") -> None:
    """Log to standard error as `setup` says, at INFO (DEBUG if verbose);
    `role` names a child process of `serve` in each line (`worker`)."""
    global _in_force
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter(role) if setup.format == "json" else text_formatter(role))
    logging.basicConfig(level=logging.DEBUG if setup.verbose else logging.INFO, handlers=[handler], force=True)
    if not setup.verbose:  # aiosmtpd logs every SMTP line at INFO
        logging.getLogger("mail.log").setLevel(logging.WARNING)
    _in_force = setup


def in_force() -> LogSetup:
    """The setup of this process's last `configure`."""
    return _in_force


def text_formatter(role: str) -> logging.Formatter:
    """`2026-11-24T02:06:03+0000 INFO pbmserv.service.processor[worker]: inbound 12 ...`"""
    name = f"%(name)s[{role}]" if role else "%(name)s"
    return logging.Formatter(f"%(asctime)s %(levelname)s {name}: %(message)s", datefmt="%Y-%m-%dT%H:%M:%S%z")


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time (ISO 8601, local time with its offset),
    level, logger, message, role (in `serve`'s child processes), the
    record's `extra=` fields, and the traceback as `exception`."""

    def __init__(self, role: str = ""):
        super().__init__()
        self.role = role

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created).astimezone().isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if self.role:
            entry["role"] = self.role
        entry.update((name, value) for name, value in vars(record).items() if name not in _RECORD_ATTRIBUTES)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, default=str)
