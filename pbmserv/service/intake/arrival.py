"""Intake: a mail as it is stored before anyone is told it is safe, in the
arrival spool (SMTP on SQLite) or in `inbound_mails` (`receive`, and SMTP
on PostgreSQL); what intake refuses to store at all. Intake needs no game
loaded: `serve`'s listener process runs it with the games' names only."""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property, partial
from typing import TYPE_CHECKING

from pbmserv.config import Settings
from pbmserv.mail.inbound import IncomingMail, delivery_addresses, parse_headers
from pbmserv.mail.mime import Unreadable
from pbmserv.protocol import Request, parse_request
from pbmserv.protocol.errors import UnknownCommand
from pbmserv.service.intake.masking import masked_copy, nothing_kept
from pbmserv.service.intake.room import RoomCheck, room_limited
from pbmserv.service.play import reply_addresses
from pbmserv.service.processing.processed import Processed, command_words, ms_since
from pbmserv.store.key import ServerKey, server_key
from pbmserv.store.room import room_of
from pbmserv.store.spool import Arrival, Spool
from pbmserv.store.urls import sqlite_file

if TYPE_CHECKING:
    from pbmserv.store.handles import Engine

Clock = Callable[[], datetime]
#: a mail as it arrives: its bytes, its envelope sender (None: its From) and the address it came to ("": the server's)
Mail = tuple[bytes, str | None, str]
#: the longest reverse or forward path, angle brackets included (RFC 5321 4.5.3.1.3)
MAX_PATH_OCTETS = 256
_CONTROL_CHARACTER = re.compile(r"[\x00-\x1f\x7f]")
_EMPTY_LINE = re.compile(rb"\n\r?\n")
#: what it says of a mail kept sealed until it is processed
PENDING_SEALED = "pending; the mail is kept sealed until it is processed"


def utc_now() -> datetime:
    return datetime.now(UTC)


def vouched_for(mail: IncomingMail, trusted_authserv_id: str) -> bool:
    """Whether the mail server the operator trusts vouches for the mail's author (`mail.authentication`)."""
    return bool(trusted_authserv_id) and trusted_authserv_id.lower() in mail.vouched_by


def path_problem(address: str) -> str | None:
    """Why intake refuses a sender or recipient address, or None."""
    if _CONTROL_CHARACTER.search(address):
        return "the address holds a control character"
    if len(address) + 2 > MAX_PATH_OCTETS:
        return f"the address is longer than {MAX_PATH_OCTETS} octets"
    return None


def content_problem(raw: bytes) -> str | None:
    """Why intake refuses a mail's bytes, or None. The header block is
    taken to end at the first empty line, however the lines end: where the
    mail parser ends it earlier, the block checked is only the larger. The
    body may hold anything: the raw mail is kept as bytes."""
    if b"\0" in _EMPTY_LINE.split(raw, maxsplit=1)[0]:
        return "the header holds a NUL byte"
    return None


def dedup_key(raw: bytes, envelope_sender: str, message_id: str) -> str:
    """Same Message-ID from the same sender, or the same bytes without one, is the same mail."""
    if message_id:
        basis = f"{envelope_sender.lower()}\0{message_id}".encode()
    else:
        basis = raw
    return hashlib.sha256(basis).hexdigest()


@dataclass
class Intake:
    engine: Engine
    settings: Settings
    #: the command words of the games offered (the games themselves are not needed)
    game_names: Collection[str]
    clock: Clock = utc_now
    #: where SMTP intake keeps mail on SQLite (see `pbmserv.store.spool`); None: straight into the database
    spool: Spool | None = None

    @cached_property
    def key(self) -> ServerKey:
        """The server's key, read (or made) on first use: `serve` and `receive` ask for it at start."""
        return server_key(self.settings)

    @cached_property
    def room(self) -> RoomCheck | None:
        """What intake checks of the database's room before it takes a mail (None: no limit set)."""
        if not room_limited(self.settings, on_sqlite=sqlite_file(self.settings.database_url) is not None):
            return None
        return RoomCheck(self.settings, partial(room_of, self.settings.database_url, self.engine))

    def close(self) -> None:
        self.engine.dispose()
        if self.spool is not None:
            self.spool.close()

    def store(self, raw: bytes, envelope_sender: str | None = None, recipient: str = "") -> tuple[int, bool]:
        """Commit the raw mail; returns (row id, True if it was a duplicate)."""
        return self.store_many([(raw, envelope_sender, recipient)])[0]

    def store_many(self, mails: list[Mail]) -> list[tuple[int, bool]]:
        """Commit several raw mails into the database in one transaction;
        returns (row id, True if it was a duplicate) for each."""
        from pbmserv.store import inbound

        started = time.monotonic()
        arrivals = [self.arrival(*mail) for mail in mails]
        stored = inbound.store(self.engine, arrivals)
        for mail, (row_id, duplicate) in zip(arrivals, stored):
            if duplicate:
                command = stored_command(mail.raw, self.game_names)
                Processed(row_id, mail.envelope_sender, command, "duplicate", "", ms_since(started)).log()
        return stored

    def accept(self, mails: list[Mail]) -> None:
        """Commit mails that arrived together, before they are acknowledged
        (SMTP intake): into the spool when there is one, else into the
        database, in one transaction either way (under load the write lock
        changes hands once per group, not once per mail)."""
        if self.spool is None:
            self.store_many(mails)
        else:
            self.spool.append([self.arrival(*mail) for mail in mails])

    def recipient_problem(self, recipient: str) -> str | None:
        """Why a mail to `recipient` is not taken, or None (see `recipient_problem`)."""
        from pbmserv.store import users
        from pbmserv.store.database import reading

        def holder(game: str, board: int, seat: int) -> tuple[str, str] | None:
            with reading(self.engine) as connection:
                return users.seat_holder(connection, game, board, seat)

        return recipient_problem(recipient, self.settings.address, self.key, holder)

    def arrival(self, raw: bytes, envelope_sender: str | None, recipient: str = "") -> Arrival:
        return arrival_of(
            self.key, self.settings.address, self.clock(), (raw, envelope_sender, recipient), self.game_names,
            self.settings.trusted_authserv_id,
        )


def reply_address_of(raw: bytes, recipient: str | None, server_address: str) -> str:
    """The reply address a mail piped in (`receive`) came to: the
    envelope recipient its MTA passed, else the one it wrote into the
    headers; "" for any other address (the server's, or an alias of it)."""
    for address in [recipient] if recipient is not None else delivery_addresses(raw):
        if reply_addresses.token_of(address, server_address) is not None:
            return address
        if address.lower() == server_address.lower():
            break
    return ""


def stored_command(stored: bytes, game_names: Collection[str]) -> str:
    """The command words of a mail as stored (a sealed mail's Subject is masked, its words are there)."""
    try:
        headers = parse_headers(stored)
    except Unreadable:
        return "-"
    return command_words(subject_read(headers.subject, game_names))


def arrival_of(
    key: ServerKey, server_address: str, received_at: datetime, mail: Mail, game_names: Collection[str],
    trusted_authserv_id: str = "",
) -> Arrival:
    """The mail as it is stored: its headers that matter, its Subject's
    passwords and its reply addresses masked, and the mail itself
    sealed with the server's key until it is processed. Any mail may
    hold a password (in a reply's body, a `multiple` mail's lines, a
    comment), and whether one does is only known once it is read: so
    neither the database nor its log ever holds a pending mail in
    clear. A mail to a reply address (its recipient) keeps that address
    in its kept form only. Its From is kept as verified if the mail
    server named `trusted_authserv_id` vouches for it.
    """
    raw, envelope_sender, recipient = mail
    try:
        headers = parse_headers(raw)
    except Unreadable:
        headers = None
    reply_to, message_id = (headers.sender, headers.message_id) if headers is not None else ("", "")
    sender = envelope_sender if envelope_sender is not None else reply_to
    dedup = dedup_key(raw, sender, message_id)
    token = reply_addresses.token_of(recipient, server_address) if recipient else None
    kept_token = str(reply_addresses.kept_form(key, token)) if token is not None else ""
    if headers is not None:
        kept = masked_copy(headers, subject_read(headers.subject, game_names).passwords, state=PENDING_SEALED)
    else:
        kept = nothing_kept(PENDING_SEALED)
    verified = headers.author if headers is not None and vouched_for(headers, trusted_authserv_id) else ""
    return Arrival(received_at, sender, message_id, dedup, kept, key.seal(raw), kept_token, verified)


def subject_read(subject: str, game_names: Collection[str]) -> Request:
    """The Subject's command. A first word that is neither a command nor
    a game offered is read as a game's name: a game given as a module
    path (`[games] extra`) is not known here by name, and a mail to it
    must be sealed as one to any other game is; and `receive`'s hot path
    knows no game's name (reading them costs more than storing the mail)."""
    request = parse_request(subject, "", game_names)
    if isinstance(request.lines[0].error, UnknownCommand):
        first_word = request.lines[0].text.split()[0]
        request = parse_request(subject, "", [*game_names, first_word])
    return request


#: who holds a seat (game, board, seat) on a board: (userid, reply secret), None if nobody
SeatHolder = Callable[[str, int, int], "tuple[str, str] | None"]


def recipient_problem(recipient: str, server_address: str, key: ServerKey, seat_holder: SeatHolder) -> str | None:
    """Why a mail to `recipient` is not taken, or None: it must be the
    server's address or a genuine reply address of a seat on a board."""
    if recipient.strip().strip("<>").lower() == server_address.lower():
        return None
    token = reply_addresses.token_of(recipient, server_address)
    if token is None:
        return "no such mailbox here"
    holder = seat_holder(token.game, token.board, token.seat)
    if holder is None or not reply_addresses.is_genuine(key, token, *holder):
        return (
            "not a valid reply address (it may be from before a password change); "
            f"send the command to {server_address} instead"
        )
    return None
