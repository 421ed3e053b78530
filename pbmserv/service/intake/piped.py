"""`receive`'s intake: one mail piped in by an MTA, checked and stored
durably with the database's driver alone and no game loaded
(`store.piped`), or refused with what the MTA is to do with it."""

from __future__ import annotations

import time
from enum import Enum

from pbmserv.config import Settings
from pbmserv.service.intake.arrival import (
    arrival_of,
    content_problem,
    path_problem,
    recipient_problem,
    reply_address_of,
    stored_command,
    utc_now,
)
from pbmserv.service.intake.room import NO_ROOM, room_limited, room_problem
from pbmserv.service.processing.processed import Processed, ms_since
from pbmserv.store.key import require_key, server_key
from pbmserv.store.piped import PipedStore, Unstorable
from pbmserv.store.revision import newest_revision
from pbmserv.store.urls import no_database


class Verdict(Enum):
    """What the MTA that piped a refused mail is to do with it."""

    BOUNCE = "bounce"  # refused for good, as SMTP intake's 5xx
    NO_SUCH_USER = "no such user"  # a reply address that is not, or no longer, genuine
    TRY_LATER = "try later"  # kept from being stored now, not for good


class NotStored(Exception):
    """A piped mail that is not stored: why, and what the MTA is to do."""

    def __init__(self, problem: str, verdict: Verdict = Verdict.BOUNCE):
        super().__init__(problem)
        self.verdict = verdict


def store_piped(settings: Settings, raw: bytes, sender: str | None, recipient: str | None) -> None:
    """Check the mail and store it durably, or raise `NotStored`. A mail
    stored before (the same dedup key) is logged as a duplicate and not
    stored again."""
    started = time.monotonic()
    if len(raw) > settings.max_message_bytes:
        raise NotStored(f"the mail is larger than {settings.max_message_bytes} bytes")
    problem = (path_problem(sender) if sender is not None else None) or content_problem(raw)
    if problem is not None:
        raise NotStored(problem)
    store = PipedStore(settings)
    try:
        revision = store.schema_revision()
        if revision is None:  # the wrong settings, or the wrong directory: no new server is made here
            raise NotStored(no_database(settings.database_url), Verdict.TRY_LATER)
        if revision != newest_revision():
            from pbmserv.store.database import require_known_revision

            require_known_revision(settings.database_url, revision)  # before a key is made: a newer pbmserv's
        require_key(settings, store.holds_mail)
        key = server_key(settings)  # a mail that holds passwords is stored sealed with it
        if revision != newest_revision():
            from pbmserv.store.database import upgrade

            upgrade(settings.database_url, settings.database_busy_seconds)
        if room_limited(settings, on_sqlite=store.on_sqlite):
            no_room = room_problem(store.room(), settings)
            if no_room is not None:
                raise NotStored(f"{NO_ROOM} ({no_room})", Verdict.TRY_LATER)
        to = reply_address_of(raw, recipient, settings.address)
        unknown = recipient_problem(to, settings.address, key, store.seat_holder) if to else None
        if unknown is not None:
            raise NotStored(f"<{to}>: {unknown}", Verdict.NO_SUCH_USER)
        try:
            arrival = arrival_of(key, settings.address, utc_now(), (raw, sender, to), (), settings.trusted_authserv_id)
            row_id, duplicate = store.store(arrival)
        except (Unstorable, UnicodeError) as error:
            cause = error if isinstance(error, Unstorable) else type(error).__name__
            raise NotStored(f"it cannot be stored as it is ({cause})") from error
        if duplicate:
            command = stored_command(arrival.raw, ())
            Processed(row_id or 0, arrival.envelope_sender, command, "duplicate", "", ms_since(started)).log()
    finally:
        store.close()
