"""What the operator does from `pbmserv-admin` that is more than reading a
table: accounts looked at and changed, given-up mail sent again, failed
mail made pending again. Each
change is one transaction and returns why it was not made, or None."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from pbmserv.mailbox import mailbox, mailbox_problem
from pbmserv.protocol.syntax import LONGEST_PASSWORD, MOST_ADDRESSES
from pbmserv.service.commands.accounts import MIN_PASSWORD_LENGTH, replace_addresses
from pbmserv.service.intake.masking import MASKED_HEADER
from pbmserv.service.processing.passwords import Passwords
from pbmserv.store import inbound, operator, records, users
from pbmserv.store.database import reading, writing
from pbmserv.store.handles import Engine
from pbmserv.store.states import Inbound, Outbox


@dataclass(frozen=True)
class AccountView:
    """An account as the operator sees it (times as stored: see `context.as_utc`)."""

    userid: str
    created_at: datetime
    addresses: list[tuple[str, datetime | None]]  # each address and when it was confirmed
    boards_active: int
    boards_finished: int
    on_vacation_since: datetime | None
    disabled_at: datetime | None
    disabled_reason: str
    last_mail_at: datetime | None  # the last mail received from one of its addresses


def account(engine: Engine, userid: str) -> AccountView | None:
    with reading(engine) as connection:
        found = operator.accounts(connection, userid)
        if not found:
            return None
        [user] = found
        addresses = [(a.address, a.confirmed_at) for a in user.addresses]
        played = [status for seats, status in operator.board_seats_and_statuses(connection) if user.userid in seats]
        vacation = next((v.started_at for v in users.vacations_of(connection, user.id) if v.ended_at is None), None)
        last_mail = operator.last_mail_from(connection, [a for a, _ in addresses])
    return AccountView(
        user.userid, user.created_at, addresses, played.count("active"), played.count("finished"), vacation,
        user.disabled_at, user.disabled_reason, last_mail,
    )


def disable(engine: Engine, userid: str, reason: str, now: datetime) -> str | None:
    """Refuse every command of the account from now on (`Context.authenticate`);
    its boards go on as before, with its reminders and forfeits."""
    with writing(engine) as connection:
        user = records.find_account(connection, userid.lower())
        if user is None:
            return "no such account"
        if user.disabled_at is not None:
            return "it is disabled already"
        users.set_disabled(connection, user.id, now, reason)
    return None


def enable(engine: Engine, userid: str) -> str | None:
    with writing(engine) as connection:
        user = records.find_account(connection, userid.lower())
        if user is None:
            return "no such account"
        if user.disabled_at is None:
            return "it is not disabled"
        users.set_disabled(connection, user.id, None, "")
    return None


def set_password(engine: Engine, passwords: Passwords, userid: str, password: str) -> str | None:
    """Store the hash of `password` as signup and `change password` do."""
    if len(password) < MIN_PASSWORD_LENGTH:
        return f"a password needs at least {MIN_PASSWORD_LENGTH} characters"
    if len(password) > LONGEST_PASSWORD:
        return f"a password has at most {LONGEST_PASSWORD} characters: no command would take a longer one"
    if any(character.isspace() for character in password):
        return "a password is one word: the commands in a mail are split at spaces"
    with writing(engine) as connection:
        user = records.find_account(connection, userid.lower())
        if user is None:
            return "no such account"
        users.set_password_hash(connection, user.id, passwords.hash(password))
    return None


def set_addresses(engine: Engine, userid: str, addresses: tuple[str, ...], now: datetime) -> str | None:
    """The account's addresses become `addresses`, in that order, all of them
    confirmed: the operator vouches for them. An address it had keeps its row
    (as in `accounts._set_addresses`, for the unique constraint)."""
    for text in addresses:
        problem = mailbox_problem(text)
        if problem is not None:
            return f"{text!r} {problem}"
    wanted = list(dict.fromkeys(address for text in addresses if (address := mailbox(text)) is not None))
    if len(wanted) > MOST_ADDRESSES:
        return f"an account has at most {MOST_ADDRESSES} addresses, and this names {len(wanted)}"
    with writing(engine) as connection:
        user = records.find_account(connection, userid.lower())
        if user is None:
            return "no such account"
        written = replace_addresses(users.addresses_of(connection, user.id), wanted)
        users.write_addresses(connection, user.id, [replace(a, confirmed_at=a.confirmed_at or now) for a in written])
    return None


def retry_outbox(engine: Engine, mail_id: int, now: datetime) -> str | None:
    """Make a waiting or given-up outgoing mail due now, with its attempts counted anew."""
    with writing(engine) as connection:
        mail = operator.find_outbox(connection, mail_id)
        if mail is None:
            return "no such mail"
        if mail.status == Outbox.SENT:
            return "it has been sent already"
        operator.outbox_due_again(connection, [mail_id], now)
    return None


def retry_dead_outbox(engine: Engine, now: datetime) -> int:
    """Make every given-up outgoing mail due now; returns how many there were."""
    with writing(engine) as connection:
        dead = operator.dead_outbox_ids(connection)
        operator.outbox_due_again(connection, dead, now)
    return len(dead)


def retry_inbound(engine: Engine, row_id: int) -> str | None:
    """A failed or dropped mail is made pending, to be processed again as
    it came (from its sealed original, if it had one). A mail whose copy
    has its passwords masked and whose original is gone is refused: it
    would only run its commands with masks for passwords."""
    with writing(engine) as connection:
        row = inbound.by_id(connection, row_id)
        if row is None:
            return "no such mail"
        if row.status not in (Inbound.FAILED, Inbound.DROPPED):
            return f"it is {row.status}, not failed or dropped"
        if row.sealed is None and MASKED_HEADER.encode() in row.raw.partition(b"\r\n\r\n")[0]:
            return "its passwords are masked and its original is no longer kept: ask its sender to send it again"
        inbound.make_pending_again(connection, row_id)
    return None
