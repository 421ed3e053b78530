"""Log lines on standard error: human text, or one JSON object a line for
log shippers. Fields given as `extra=` (inbound_id, outcome, ms, ...) are
keys of their own in JSON; the text line says them in its message.

No line holds a password or a reply address's code, at any verbosity:
aiosmtpd's own records never carry what a client sent (`WithoutClientText`),
and every line has the code of any reply address in it masked as it is
written out (`MaskingFormatter`, `JsonFormatter`)."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

#: the attributes every LogRecord has: what is not among them came as `extra=`
_RECORD_ATTRIBUTES = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime"}
#: aiosmtpd's loggers: at INFO they log every command line a client sends
#: (RCPT TO a reply address), at DEBUG every line of a mail's data (a Subject
#: with a password)
AIOSMTPD_LOGGERS = ("mail.log", "mail.debug")


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
    for name in AIOSMTPD_LOGGERS:
        logger = logging.getLogger(name)
        logger.addFilter(_WITHOUT_CLIENT_TEXT)  # once: a filter is added only if it is not there yet
        logger.setLevel(logging.NOTSET if setup.verbose else logging.WARNING)  # its sessions' comings and goings
    _in_force = setup


def in_force() -> LogSetup:
    """The setup of this process's last `configure`."""
    return _in_force


class WithoutClientText(logging.Filter):
    """aiosmtpd's records without what a client sent: a record whose
    arguments hold text or bytes (a command line, a line of a mail, an
    address) is dropped below WARNING and has those arguments replaced by
    `[...]` at WARNING and above; the client's address (a tuple) is kept."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        values = list(args.values()) if isinstance(args, Mapping) else list(args or ())
        if not any(isinstance(value, (str, bytes, bytearray)) for value in values):
            return True
        if record.levelno < logging.WARNING:
            return False
        record.args = tuple("[...]" if isinstance(value, (str, bytes, bytearray)) else value for value in values)
        return True


_WITHOUT_CLIENT_TEXT = WithoutClientText()


def masked_codes(line: str) -> str:
    """The log line with the code of every reply address in it masked."""
    from pbmserv.service.play.reply_addresses import mask_addresses  # only once a line is written: `pbmserv --help` needs none of it

    return mask_addresses(line)


class MaskingFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return masked_codes(super().format(record))


def text_formatter(role: str) -> logging.Formatter:
    """`2026-11-24T02:06:03+0000 INFO pbmserv.service.processing.processor[worker]: inbound 12 ...`"""
    name = f"%(name)s[{role}]" if role else "%(name)s"
    return MaskingFormatter(f"%(asctime)s %(levelname)s {name}: %(message)s", datefmt="%Y-%m-%dT%H:%M:%S%z")


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
        # each value masked before JSON escapes what is not ASCII (a fullwidth address would hide in `\uff20`)
        return json.dumps({name: masked_codes(str(value)) if isinstance(value, str) else value
                           for name, value in entry.items()}, default=lambda value: masked_codes(str(value)))
