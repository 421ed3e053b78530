"""Settings: defaults, then a TOML file, then PBMSERV_* environment variables."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Settings:
    # [database]
    database_url: str = "sqlite:///pbmserv.db"
    #: how long a writer waits for another's transaction before it gives up (SMTP then answers 451)
    database_busy_seconds: float = 10.0
    #: the file of the server's secret key ("": beside a SQLite database; required with PostgreSQL)
    key_file: str = ""
    # [mail]
    address: str = "pbmserv@localhost"
    mail_backend: str = "maildir"
    maildir: str = "./mail/outbox"
    relay: str = ""
    # [smtp]
    listen: str = "127.0.0.1:2525"
    hostname: str = "localhost"
    max_message_bytes: int = 256 * 1024
    #: seconds an SMTP session may last in all, and may wait for the client's next command (or its mail data)
    session_seconds: float = 600.0
    command_seconds: float = 120.0
    #: SMTP sessions open at once, in all and from one client address; more are answered 421 at once
    max_sessions: int = 200
    max_sessions_per_client: int = 30
    #: seconds between rounds of the processing and delivery worker in `serve`
    poll_seconds: float = 1.0
    #: seconds one mail may take in `serve`'s worker before the worker is
    #: restarted and that mail given up (marked failed, with an apology)
    stuck_seconds: float = 300.0
    # [passwords] argon2id cost: about 25 ms per check on the reference machine
    password_time_cost: int = 2
    password_memory_kib: int = 19456
    password_parallelism: int = 1
    # [limits] what one address is sent per hour, by kind of mail (see docs/decisions.md)
    replies_per_hour: int = 30
    error_replies_per_hour: int = 10
    relays_per_hour: int = 30
    #: chat, message and broadcast commands one account may send per hour
    messages_per_hour: int = 20
    #: new boards that may name one player per hour
    challenges_per_hour: int = 10
    # [delivery]
    delivery_max_attempts: int = 8
    delivery_first_retry_seconds: float = 60.0
    # [games]
    recent_moves: int = 12
    #: games outside the entry points, as "module:Class" (a local game, a test game)
    extra_games: tuple[str, ...] = field(default_factory=tuple)
    #: userids that may `broadcast` to every user
    admins: tuple[str, ...] = field(default_factory=tuple)
    #: days a board waits for a move before a reminder, and before a forfeit, unless the challenge says otherwise
    nagtime: int = 7
    forfeittime: int = 21
    #: vacation days each player may take per calendar year
    vacation_days: int = 30
    #: seconds between two passes of reminders and forfeits in `serve`
    timer_seconds: float = 3600.0
    # [log] "text", or "json": one JSON object a line
    log_format: str = "text"


#: TOML section and key for each setting, and the environment variable that overrides it
_SOURCES: dict[str, tuple[str, str, str]] = {
    "database_url": ("database", "url", "PBMSERV_DATABASE_URL"),
    "database_busy_seconds": ("database", "busy_seconds", "PBMSERV_DATABASE_BUSY_SECONDS"),
    "key_file": ("database", "key_file", "PBMSERV_KEY_FILE"),
    "address": ("mail", "address", "PBMSERV_ADDRESS"),
    "mail_backend": ("mail", "backend", "PBMSERV_MAIL_BACKEND"),
    "maildir": ("mail", "maildir", "PBMSERV_MAILDIR"),
    "relay": ("mail", "relay", "PBMSERV_RELAY"),
    "listen": ("smtp", "listen", "PBMSERV_LISTEN"),
    "hostname": ("smtp", "hostname", "PBMSERV_HOSTNAME"),
    "max_message_bytes": ("smtp", "max_message_bytes", "PBMSERV_MAX_MESSAGE_BYTES"),
    "session_seconds": ("smtp", "session_seconds", "PBMSERV_SESSION_SECONDS"),
    "command_seconds": ("smtp", "command_seconds", "PBMSERV_COMMAND_SECONDS"),
    "max_sessions": ("smtp", "max_sessions", "PBMSERV_MAX_SESSIONS"),
    "max_sessions_per_client": ("smtp", "max_sessions_per_client", "PBMSERV_MAX_SESSIONS_PER_CLIENT"),
    "poll_seconds": ("smtp", "poll_seconds", "PBMSERV_POLL_SECONDS"),
    "stuck_seconds": ("smtp", "stuck_seconds", "PBMSERV_STUCK_SECONDS"),
    "password_time_cost": ("passwords", "time_cost", "PBMSERV_PASSWORD_TIME_COST"),
    "password_memory_kib": ("passwords", "memory_kib", "PBMSERV_PASSWORD_MEMORY_KIB"),
    "password_parallelism": ("passwords", "parallelism", "PBMSERV_PASSWORD_PARALLELISM"),
    "replies_per_hour": ("limits", "replies_per_hour", "PBMSERV_REPLIES_PER_HOUR"),
    "error_replies_per_hour": ("limits", "error_replies_per_hour", "PBMSERV_ERROR_REPLIES_PER_HOUR"),
    "relays_per_hour": ("limits", "relays_per_hour", "PBMSERV_RELAYS_PER_HOUR"),
    "messages_per_hour": ("limits", "messages_per_hour", "PBMSERV_MESSAGES_PER_HOUR"),
    "challenges_per_hour": ("limits", "challenges_per_hour", "PBMSERV_CHALLENGES_PER_HOUR"),
    "delivery_max_attempts": ("delivery", "max_attempts", "PBMSERV_DELIVERY_MAX_ATTEMPTS"),
    "delivery_first_retry_seconds": ("delivery", "first_retry_seconds", "PBMSERV_DELIVERY_FIRST_RETRY_SECONDS"),
    "recent_moves": ("games", "recent_moves", "PBMSERV_RECENT_MOVES"),
    "extra_games": ("games", "extra", "PBMSERV_EXTRA_GAMES"),
    "admins": ("games", "admins", "PBMSERV_ADMINS"),
    "nagtime": ("games", "nagtime", "PBMSERV_NAGTIME"),
    "forfeittime": ("games", "forfeittime", "PBMSERV_FORFEITTIME"),
    "vacation_days": ("games", "vacation_days", "PBMSERV_VACATION_DAYS"),
    "timer_seconds": ("games", "timer_seconds", "PBMSERV_TIMER_SECONDS"),
    "log_format": ("log", "format", "PBMSERV_LOG_FORMAT"),
}

MAIL_BACKENDS = ("smtp", "maildir", "console", "memory")


class ConfigError(ValueError):
    pass


def load_settings(path: str | Path | None = None, environ: dict[str, str] | None = None) -> Settings:
    """Settings from `path` (or $PBMSERV_CONFIG) and the environment."""
    environ = dict(os.environ if environ is None else environ)
    path = path or environ.get("PBMSERV_CONFIG")
    values: dict[str, Any] = {}
    if path:
        try:
            with open(path, "rb") as handle:
                document = tomllib.load(handle)
        except (OSError, tomllib.TOMLDecodeError) as error:
            raise ConfigError(f"cannot read config file {path}: {error}") from error
        for name, (section, key, _) in _SOURCES.items():
            if key in document.get(section, {}):
                values[name] = document[section][key]
    for name, (_, _, variable) in _SOURCES.items():
        if variable in environ:
            values[name] = environ[variable]
    settings = replace(Settings(), **{k: _coerce(k, v) for k, v in values.items()})
    if settings.mail_backend not in MAIL_BACKENDS:
        raise ConfigError(f"mail backend must be one of {', '.join(MAIL_BACKENDS)}")
    return settings


def _coerce(name: str, value: Any) -> Any:
    kind = {f.name: f.type for f in fields(Settings)}[name]
    try:
        if kind == "int":
            return int(value)
        if kind == "float":
            return float(value)
        if kind.startswith("tuple"):
            items = value.split(",") if isinstance(value, str) else value
            return tuple(str(item).strip() for item in items if str(item).strip())
        return str(value)
    except (TypeError, ValueError) as error:
        raise ConfigError(f"setting {name}: {error}") from error
