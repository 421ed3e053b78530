"""Settings: defaults, then a TOML file, then PBMSERV_* environment variables."""

from __future__ import annotations

import difflib
import errno
import ipaddress
import math
import os
import re
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from pbmserv.store.urls import backend_name


@dataclass(frozen=True)
class Settings:
    # [database]
    database_url: str = "sqlite:///pbmserv.db"
    #: how long a writer waits for another's transaction before it gives up (SMTP then answers 451)
    database_busy_seconds: float = 10.0
    #: false: every statement goes through SQLAlchemy's Connection.execute, where echo sees it (store/prepared.py)
    database_prepared: bool = True
    #: the file of the server's secret key ("": beside a SQLite database; required with PostgreSQL)
    key_file: str = ""
    # [mail]
    address: str = "pbmserv@localhost"
    mail_backend: str = "maildir"
    maildir: str = "./mail/outbox"
    relay: str = ""
    #: sessions with the relay at once, each sending a share of a batch (a recipient's mails stay in one, in order)
    relay_sessions: int = 4
    #: the authserv-id of the mail server in front of pbmserv whose Authentication-Results headers
    #: are trusted to vouch for a mail's From ("": none is; see mail/authentication.py)
    trusted_authserv_id: str = ""
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
    #: networks of the relays in front of the listener: exempt from the intake rates per client (all mail comes from them)
    trusted_clients: tuple[str, ...] = ("127.0.0.0/8", "::1/128")
    #: what one client address, and one envelope sender, may send: a burst of so much, then so much an hour (0: no limit)
    client_mails_per_hour: int = 500
    client_mib_per_hour: int = 50
    sender_mails_per_hour: int = 120
    sender_mib_per_hour: int = 10
    #: seconds between rounds of the processing and delivery worker in `serve`
    poll_seconds: float = 1.0
    #: seconds one mail may take in `serve`'s worker before the worker is
    #: restarted and that mail given up (marked failed, with an apology)
    stuck_seconds: float = 300.0
    # [web]
    #: where `pbmserv serve` (and `pbmserv web`) serves the read-only web site ("": no web site)
    web_listen: str = "127.0.0.1:8080"
    #: the site's address as players reach it, for the board page's link in board mails
    #: ("": http:// and `web_listen`; no link when both are empty)
    web_base_url: str = ""
    # [passwords] argon2id cost: about 25 ms per check on the reference machine
    password_time_cost: int = 2
    password_memory_kib: int = 19456
    password_parallelism: int = 1
    # [limits] what one address is sent per hour, by kind of mail, in mails and in bytes
    # (see docs/decisions/0046-hourly-caps.md and 0121-byte-budgets.md)
    replies_per_hour: int = 30
    reply_bytes_per_hour: int = 250_000
    error_replies_per_hour: int = 10
    error_reply_bytes_per_hour: int = 100_000
    relays_per_hour: int = 30
    relay_bytes_per_hour: int = 250_000
    board_mails_per_hour: int = 1000
    board_bytes_per_hour: int = 10_000_000
    #: answers and errors to mail that proved its writer (a reply address, a password, the trusted mail server's word)
    asked_replies_per_hour: int = 600
    asked_reply_bytes_per_hour: int = 10_000_000
    #: chat mails on the boards one plays or follows
    chats_per_hour: int = 600
    chat_bytes_per_hour: int = 5_000_000
    #: message and broadcast commands one account may send per hour
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
    # [storage]
    #: days processed inbound mail, and sent or given-up outbox mail, is kept (then the timer pass deletes it)
    inbound_days: int = 14
    outbox_days: int = 14
    #: intake refuses mail (452, `receive` exits 75) once the database's files reach this size (0: no limit),
    #: or the free space on their disk falls under `min_free_mib` (0: no floor)
    max_database_mib: int = 0
    min_free_mib: int = 512
    # [log] "text", or "json": one JSON object a line
    log_format: str = "text"
    # [bots] running boards one player may have against the bot of each strength at once (0: not offered)
    bot_easy_boards: int = 20
    bot_normal_boards: int = 10
    bot_strong_boards: int = 3


#: TOML section and key for each setting, and the environment variable that overrides it
_SOURCES: dict[str, tuple[str, str, str]] = {
    "database_url": ("database", "url", "PBMSERV_DATABASE_URL"),
    "database_busy_seconds": ("database", "busy_seconds", "PBMSERV_DATABASE_BUSY_SECONDS"),
    "database_prepared": ("database", "prepared", "PBMSERV_DATABASE_PREPARED"),
    "key_file": ("database", "key_file", "PBMSERV_KEY_FILE"),
    "address": ("mail", "address", "PBMSERV_ADDRESS"),
    "mail_backend": ("mail", "backend", "PBMSERV_MAIL_BACKEND"),
    "maildir": ("mail", "maildir", "PBMSERV_MAILDIR"),
    "relay": ("mail", "relay", "PBMSERV_RELAY"),
    "relay_sessions": ("mail", "relay_sessions", "PBMSERV_RELAY_SESSIONS"),
    "trusted_authserv_id": ("mail", "trusted_authserv_id", "PBMSERV_TRUSTED_AUTHSERV_ID"),
    "listen": ("smtp", "listen", "PBMSERV_LISTEN"),
    "hostname": ("smtp", "hostname", "PBMSERV_HOSTNAME"),
    "max_message_bytes": ("smtp", "max_message_bytes", "PBMSERV_MAX_MESSAGE_BYTES"),
    "session_seconds": ("smtp", "session_seconds", "PBMSERV_SESSION_SECONDS"),
    "command_seconds": ("smtp", "command_seconds", "PBMSERV_COMMAND_SECONDS"),
    "max_sessions": ("smtp", "max_sessions", "PBMSERV_MAX_SESSIONS"),
    "max_sessions_per_client": ("smtp", "max_sessions_per_client", "PBMSERV_MAX_SESSIONS_PER_CLIENT"),
    "trusted_clients": ("smtp", "trusted_clients", "PBMSERV_TRUSTED_CLIENTS"),
    "client_mails_per_hour": ("smtp", "client_mails_per_hour", "PBMSERV_CLIENT_MAILS_PER_HOUR"),
    "client_mib_per_hour": ("smtp", "client_mib_per_hour", "PBMSERV_CLIENT_MIB_PER_HOUR"),
    "sender_mails_per_hour": ("smtp", "sender_mails_per_hour", "PBMSERV_SENDER_MAILS_PER_HOUR"),
    "sender_mib_per_hour": ("smtp", "sender_mib_per_hour", "PBMSERV_SENDER_MIB_PER_HOUR"),
    "poll_seconds": ("smtp", "poll_seconds", "PBMSERV_POLL_SECONDS"),
    "stuck_seconds": ("smtp", "stuck_seconds", "PBMSERV_STUCK_SECONDS"),
    "web_listen": ("web", "listen", "PBMSERV_WEB_LISTEN"),
    "web_base_url": ("web", "base_url", "PBMSERV_WEB_BASE_URL"),
    "password_time_cost": ("passwords", "time_cost", "PBMSERV_PASSWORD_TIME_COST"),
    "password_memory_kib": ("passwords", "memory_kib", "PBMSERV_PASSWORD_MEMORY_KIB"),
    "password_parallelism": ("passwords", "parallelism", "PBMSERV_PASSWORD_PARALLELISM"),
    "replies_per_hour": ("limits", "replies_per_hour", "PBMSERV_REPLIES_PER_HOUR"),
    "error_replies_per_hour": ("limits", "error_replies_per_hour", "PBMSERV_ERROR_REPLIES_PER_HOUR"),
    "reply_bytes_per_hour": ("limits", "reply_bytes_per_hour", "PBMSERV_REPLY_BYTES_PER_HOUR"),
    "error_reply_bytes_per_hour": ("limits", "error_reply_bytes_per_hour", "PBMSERV_ERROR_REPLY_BYTES_PER_HOUR"),
    "relays_per_hour": ("limits", "relays_per_hour", "PBMSERV_RELAYS_PER_HOUR"),
    "relay_bytes_per_hour": ("limits", "relay_bytes_per_hour", "PBMSERV_RELAY_BYTES_PER_HOUR"),
    "board_mails_per_hour": ("limits", "board_mails_per_hour", "PBMSERV_BOARD_MAILS_PER_HOUR"),
    "board_bytes_per_hour": ("limits", "board_bytes_per_hour", "PBMSERV_BOARD_BYTES_PER_HOUR"),
    "asked_replies_per_hour": ("limits", "asked_replies_per_hour", "PBMSERV_ASKED_REPLIES_PER_HOUR"),
    "asked_reply_bytes_per_hour": ("limits", "asked_reply_bytes_per_hour", "PBMSERV_ASKED_REPLY_BYTES_PER_HOUR"),
    "chats_per_hour": ("limits", "chats_per_hour", "PBMSERV_CHATS_PER_HOUR"),
    "chat_bytes_per_hour": ("limits", "chat_bytes_per_hour", "PBMSERV_CHAT_BYTES_PER_HOUR"),
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
    "inbound_days": ("storage", "inbound_days", "PBMSERV_INBOUND_DAYS"),
    "outbox_days": ("storage", "outbox_days", "PBMSERV_OUTBOX_DAYS"),
    "max_database_mib": ("storage", "max_database_mib", "PBMSERV_MAX_DATABASE_MIB"),
    "min_free_mib": ("storage", "min_free_mib", "PBMSERV_MIN_FREE_MIB"),
    "log_format": ("log", "format", "PBMSERV_LOG_FORMAT"),
    "bot_easy_boards": ("bots", "easy_boards", "PBMSERV_BOT_EASY_BOARDS"),
    "bot_normal_boards": ("bots", "normal_boards", "PBMSERV_BOT_NORMAL_BOARDS"),
    "bot_strong_boards": ("bots", "strong_boards", "PBMSERV_BOT_STRONG_BOARDS"),
}

#: how an environment variable spells a setting that is true or false
BOOLEAN_WORDS = {"true": True, "false": False, "1": True, "0": False}

#: the hourly caps on what one address is sent: each lets at least one mail through
CAP_SETTINGS = (
    "replies_per_hour", "reply_bytes_per_hour", "error_replies_per_hour", "error_reply_bytes_per_hour",
    "relays_per_hour", "relay_bytes_per_hour", "board_mails_per_hour", "board_bytes_per_hour",
    "asked_replies_per_hour", "asked_reply_bytes_per_hour", "chats_per_hour", "chat_bytes_per_hour",
)

MAIL_BACKENDS = ("smtp", "maildir", "console", "memory")
#: an authserv-id as mail servers write it: a host name (RFC 8601 allows any token; these are what is used)
_AUTHSERV_ID = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,252})")
LOG_FORMATS = ("text", "json")

#: PBMSERV_* environment variables that are not settings: the config file's
#: name, and the test suite's own (PBMSERV_TEST_*, PBMSERV_REQUIRE_*,
#: PBMSERV_REGENERATE); any other is refused as a mistyped setting
NOT_SETTINGS = ("PBMSERV_CONFIG", "PBMSERV_REGENERATE")
NOT_SETTINGS_PREFIXES = ("PBMSERV_TEST_", "PBMSERV_REQUIRE_")


#: bytes in a MiB, the unit of the storage settings and the intake rates' bytes
MIB = 1024 * 1024
#: the shortest retention of processed inbound mail: a failed mail's sealed original is kept a week for
#: `pbmserv-admin inbound retry` (`processor.FAILED_ORIGINALS_KEPT`), and an MTA that never saw the 250 of a
#: mail it sent retries it for up to five days, which its dedup key must still recognise
MIN_INBOUND_DAYS = 7
#: the shortest retention of sent outbox mail: the caps on what an address is sent count the outbox's rows
#: of the last hour and day (`service.rates.CAPS`), with a day's margin
MIN_OUTBOX_DAYS = 2


#: the least and most each number setting may be, and what the bounds mean where that is not plain; the
#: caps (`CAP_SETTINGS`), the limits where 0 means none and the retention days are checked on their own
RANGES: dict[str, tuple[float, float, str]] = {
    "database_busy_seconds": (0.1, 600, ""), "poll_seconds": (0.01, 3600, ""), "timer_seconds": (1, 86400, ""),
    "session_seconds": (1, 86400, ""), "command_seconds": (1, 3600, ""), "stuck_seconds": (1, 86400, ""),
    "delivery_first_retry_seconds": (1, 86400, ""), "delivery_max_attempts": (1, 100, ""),
    "relay_sessions": (1, 50, ""), "max_sessions": (1, 100_000, ""), "max_sessions_per_client": (1, 100_000, ""),
    "max_message_bytes": (1000, 100 * 1024 * 1024, ""), "recent_moves": (1, 200, ""),
    "password_time_cost": (1, 100, ""), "password_memory_kib": (64, 4 * 1024 * 1024, " KiB"),
    "password_parallelism": (1, 64, ""),
    "messages_per_hour": (1, 1_000_000, ""), "challenges_per_hour": (1, 1_000_000, ""),
    "nagtime": (1, 365, " days"), "forfeittime": (1, 365, " days"),  # as a challenge's --nagtime and --forfeittime
    "vacation_days": (0, 366, " days a year"),
}


class ConfigError(ValueError):
    pass


class TryAgainLater(Exception):
    """Something pbmserv needs is not to be had now, such as the port to
    listen on: the same command may work later."""


def cannot_listen(error: OSError, address: str, setting: str, *, purpose: str = "", holder: str = "pbmserv", other: str = "") -> Exception:
    """What to raise when a listening socket on `address` cannot be had: an
    address in use is worth trying again (an earlier server may be
    stopping); one this machine cannot have is a setting to change."""
    if error.errno == errno.EADDRINUSE:
        return TryAgainLater(
            f"cannot listen on {address}{purpose}: the address is in use (by another {holder}?); "
            f"stop that, or set {setting} to another port{other}"
        )
    reason = os.strerror(error.errno) if error.errno and error.errno > 0 else error.strerror  # gaierror's are < 0
    return ConfigError(f"cannot listen on {address}{purpose} ({setting}): {reason}")


def load_settings(path: str | Path | None = None, environ: dict[str, str] | None = None) -> Settings:
    """Settings from `path` (or $PBMSERV_CONFIG) and the environment. A
    setting, section or PBMSERV_* variable that pbmserv does not know, or a
    value it cannot use, is a ConfigError that names it."""
    environ = dict(os.environ if environ is None else environ)
    path = path or environ.get("PBMSERV_CONFIG")
    #: each setting's value, and where it was set (for the error that names it)
    values: dict[str, tuple[Any, str]] = {}
    if path:
        try:
            with open(path, "rb") as handle:
                document = tomllib.load(handle)
        except (OSError, tomllib.TOMLDecodeError) as error:
            raise ConfigError(f"cannot read config file {path}: {error}") from error
        values.update(_from_file(document, f"config file {path}"))
    values.update(_from_environment(environ))
    settings = replace(Settings(), **{name: value for name, (value, _) in values.items()})
    _check(settings, {name: where for name, (_, where) in values.items()})
    return settings


def _from_file(document: dict[str, Any], path: str) -> dict[str, tuple[Any, str]]:
    names = {(section, key): name for name, (section, key, _) in _SOURCES.items()}
    sections = sorted({section for section, _ in names})
    values = {}
    for section, table in document.items():
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: unknown setting {section} outside any section{_did_you_mean(section, names)}")
        if section not in sections:
            close = difflib.get_close_matches(section, sections, n=1)
            hint = f"did you mean [{close[0]}]?" if close else f"the sections are {', '.join(f'[{s}]' for s in sections)}"
            raise ConfigError(f"{path}: unknown section [{section}] ({hint})")
        for key, value in table.items():
            if (section, key) not in names:
                raise ConfigError(f"{path}: unknown setting [{section}] {key}{_did_you_mean(key, names, section)}")
            where = f"{path}: [{section}] {key}"
            values[names[section, key]] = (_typed(names[section, key], value, where), where)
    return values


def _did_you_mean(key: str, names: dict[tuple[str, str], str], section: str | None = None) -> str:
    """A hint at the setting meant: a close key in the same section, else the closest key in any."""
    in_section = difflib.get_close_matches(key, [k for s, k in names if s == section], n=1)
    if in_section:
        return f" (did you mean {in_section[0]}?)"
    anywhere = difflib.get_close_matches(key, [k for _, k in names], n=1)
    return next((f" (did you mean [{s}] {k}?)" for s, k in names if [k] == anywhere), "")


def _from_environment(environ: dict[str, str]) -> dict[str, tuple[Any, str]]:
    names = {variable: name for name, (_, _, variable) in _SOURCES.items()}
    values = {}
    for variable in sorted(environ):
        if variable in names:
            values[names[variable]] = (_parsed(names[variable], environ[variable], variable), variable)
        elif variable.startswith("PBMSERV_") and variable not in NOT_SETTINGS and not variable.startswith(NOT_SETTINGS_PREFIXES):
            close = difflib.get_close_matches(variable, list(names), n=1)
            hint = f"did you mean {close[0]}? " if close else ""
            raise ConfigError(f"unknown environment variable {variable}: not a pbmserv setting ({hint}see config.example.toml)")
    return values


def _kind(name: str) -> str:
    kind = {f.name: f.type for f in fields(Settings)}[name]
    assert isinstance(kind, str), "annotations are strings here (from __future__ import annotations)"
    return kind


def _parsed(name: str, text: str, variable: str) -> Any:
    """A setting's value from the text of an environment variable (lists comma-separated)."""
    kind = _kind(name)
    try:
        if kind == "int":
            return int(text)
        if kind == "float":
            return _typed(name, float(text), variable)
    except ValueError:
        return _typed(name, text, variable)  # refused, in the same words as in the file
    if kind.startswith("tuple"):
        return tuple(item.strip() for item in text.split(",") if item.strip())
    if kind == "bool":
        return _typed(name, BOOLEAN_WORDS.get(text.strip().lower(), text), variable)
    return text


def _typed(name: str, value: Any, where: str) -> Any:
    """A TOML value, which must already have the setting's type (a number is not quoted)."""
    kind = _kind(name)
    if kind == "int" and isinstance(value, int) and not isinstance(value, bool):
        return value
    if kind == "float" and isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    if kind.startswith("tuple") and isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(item.strip() for item in value if item.strip())
    if kind == "str" and isinstance(value, str):
        return value
    if kind == "bool" and isinstance(value, bool):
        return value
    wanted = {"int": "a whole number", "float": "a number", "str": "a string", "bool": "true or false"}.get(
        kind, 'a list of strings, like ["a", "b"]',
    )
    raise ConfigError(f"{where} must be {wanted}, not {value!r}")


def _check(settings: Settings, where: dict[str, str]) -> None:
    """Refuse values that every command would trip over later."""

    def named(name: str) -> str:
        section, key, variable = _SOURCES[name]
        return where.get(name, f"[{section}] {key} (or {variable})")

    if settings.mail_backend not in MAIL_BACKENDS:
        raise ConfigError(f"{named('mail_backend')} must be one of {', '.join(MAIL_BACKENDS)}, not {settings.mail_backend!r}")
    if settings.log_format not in LOG_FORMATS:
        raise ConfigError(f"{named('log_format')} must be one of {', '.join(LOG_FORMATS)}, not {settings.log_format!r}")
    if settings.mail_backend == "smtp" and not settings.relay:
        raise ConfigError(f"the smtp mail backend sends through a relay: set {named('relay')} to its host:port, e.g. 127.0.0.1:25")
    if settings.relay and not _is_host_port(settings.relay, need_host=True):
        raise ConfigError(f"{named('relay')} must be host:port, e.g. 127.0.0.1:25, not {settings.relay!r}")
    for name, (least, most, unit) in RANGES.items():
        value = getattr(settings, name)
        if not least <= value <= most:
            raise ConfigError(f"{named(name)} must be {_number(least)} to {_number(most)}{unit}, not {_number(value)}")
    if settings.password_memory_kib < 8 * settings.password_parallelism:
        raise ConfigError(
            f"{named('password_memory_kib')} must be at least 8 KiB for each of the {named('password_parallelism')} "
            f"lanes ({8 * settings.password_parallelism}), not {settings.password_memory_kib}"
        )
    for name in CAP_SETTINGS:
        if getattr(settings, name) < 1:
            raise ConfigError(f"{named(name)} must be at least 1, not {getattr(settings, name)}")
    if settings.trusted_authserv_id and not _AUTHSERV_ID.fullmatch(settings.trusted_authserv_id):
        raise ConfigError(
            f"{named('trusted_authserv_id')} must be the name the mail server writes first in its "
            f"Authentication-Results headers (usually its host name, e.g. mx.example.org), not {settings.trusted_authserv_id!r}"
        )
    if not _is_host_port(settings.listen, need_host=False):
        raise ConfigError(f"{named('listen')} must be host:port, e.g. 127.0.0.1:2525, not {settings.listen!r}")
    if settings.web_listen and not _is_host_port(settings.web_listen, need_host=True):
        raise ConfigError(f"{named('web_listen')} must be host:port, e.g. 127.0.0.1:8080, or empty for no web site, not {settings.web_listen!r}")
    if settings.web_base_url and not settings.web_base_url.startswith(("http://", "https://")):
        raise ConfigError(
            f"{named('web_base_url')} must be an http:// or https:// address, e.g. https://games.example.org/, not {settings.web_base_url!r}"
        )
    for name in ("bot_easy_boards", "bot_normal_boards", "bot_strong_boards"):
        if getattr(settings, name) < 0:
            raise ConfigError(f"{named(name)} must be 0 (that bot is not offered) or more, not {getattr(settings, name)}")
    if settings.inbound_days < MIN_INBOUND_DAYS:
        raise ConfigError(
            f"{named('inbound_days')} must be at least {MIN_INBOUND_DAYS} (a failed mail is kept a week for retry), "
            f"not {settings.inbound_days}"
        )
    if settings.outbox_days < MIN_OUTBOX_DAYS:
        raise ConfigError(
            f"{named('outbox_days')} must be at least {MIN_OUTBOX_DAYS} (the caps on what an address is sent count "
            f"the last day's mail), not {settings.outbox_days}"
        )
    for name in ("client_mails_per_hour", "sender_mails_per_hour", "max_database_mib", "min_free_mib"):
        if getattr(settings, name) < 0:
            raise ConfigError(f"{named(name)} must be 0 (no limit) or more, not {getattr(settings, name)}")
    for name in ("client_mib_per_hour", "sender_mib_per_hour"):
        mib = getattr(settings, name)
        if mib < 0 or 0 < mib * MIB < settings.max_message_bytes:
            raise ConfigError(
                f"{named(name)} must be 0 (no limit) or at least {named('max_message_bytes')} in MiB "
                f"(else the largest mail could never pass), not {mib}"
            )
    for network in settings.trusted_clients:
        try:
            ipaddress.ip_network(network)
        except ValueError:
            raise ConfigError(
                f"{named('trusted_clients')} must list addresses or networks, like 127.0.0.0/8 or ::1, not {network!r}"
            ) from None
    backend = backend_name(settings.database_url)
    if backend is None:
        raise ConfigError(
            f"{named('database_url')} is not a database URL: use sqlite:///path/to/file.db or postgresql://user@host/dbname"
        )
    if backend not in ("sqlite", "postgresql"):
        raise ConfigError(f"{named('database_url')} names a {backend} database: pbmserv runs on sqlite or postgresql")


def _number(value: float) -> str:
    return str(int(value)) if value == int(value) else str(value)


def _is_host_port(value: str, need_host: bool) -> bool:
    host, colon, port = value.rpartition(":")
    return bool(colon) and (bool(host) or not need_host) and port.isdigit() and int(port) <= 65535
