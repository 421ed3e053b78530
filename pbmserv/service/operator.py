"""What the operator does from `pbmserv-admin` that is more than reading a
table: accounts looked at and changed, given-up mail sent again. Each
change is one transaction and returns why it was not made, or None."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.protocol.mailbox import mailbox, mailbox_problem
from pbmserv.service.accounts import MIN_PASSWORD_LENGTH, MOST_ADDRESSES, replace_addresses
from pbmserv.service.passwords import Passwords
from pbmserv.store.models import Board, InboundMail, OutboxMail, User, Vacation


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


def account(sessions: sessionmaker[Session], userid: str) -> AccountView | None:
    with sessions() as session:
        user = _find(session, userid)
        if user is None:
            return None
        addresses = [(a.address, a.confirmed_at) for a in user.addresses]
        played = [
            status for seats, status in session.execute(select(Board.seats, Board.status)) if user.userid in seats
        ]
        vacation = session.scalar(
            select(Vacation.started_at).where(Vacation.user_id == user.id, Vacation.ended_at.is_(None))
        )
        last_mail = session.scalar(
            select(func.max(InboundMail.received_at)).where(InboundMail.envelope_sender.in_([a for a, _ in addresses]))
        )
        return AccountView(
            user.userid, user.created_at, addresses, played.count("active"), played.count("finished"), vacation,
            user.disabled_at, user.disabled_reason, last_mail,
        )


def disable(sessions: sessionmaker[Session], userid: str, reason: str, now: datetime) -> str | None:
    """Refuse every command of the account from now on (`Context.authenticate`);
    its boards go on as before, with its reminders and forfeits."""
    with sessions.begin() as session:
        user = _find(session, userid)
        if user is None:
            return "no such account"
        if user.disabled_at is not None:
            return "it is disabled already"
        user.disabled_at, user.disabled_reason = now, reason
    return None


def enable(sessions: sessionmaker[Session], userid: str) -> str | None:
    with sessions.begin() as session:
        user = _find(session, userid)
        if user is None:
            return "no such account"
        if user.disabled_at is None:
            return "it is not disabled"
        user.disabled_at, user.disabled_reason = None, ""
    return None


def set_password(sessions: sessionmaker[Session], passwords: Passwords, userid: str, password: str) -> str | None:
    """Store the hash of `password` as signup and `change password` do."""
    if len(password) < MIN_PASSWORD_LENGTH:
        return f"a password needs at least {MIN_PASSWORD_LENGTH} characters"
    if any(character.isspace() for character in password):
        return "a password is one word: the commands in a mail are split at spaces"
    with sessions.begin() as session:
        user = _find(session, userid)
        if user is None:
            return "no such account"
        user.password_hash = passwords.hash(password)
    return None


def set_addresses(sessions: sessionmaker[Session], userid: str, addresses: tuple[str, ...], now: datetime) -> str | None:
    """The account's addresses become `addresses`, in that order, all of them
    confirmed: the operator vouches for them. An address it had keeps its row
    (as in `accounts._set_addresses`, for the unique constraint)."""
    for text in addresses:
        problem = mailbox_problem(text)
        if problem is not None:
            return f"{text!r} {problem}"
    wanted = list(dict.fromkeys(mailbox(text) for text in addresses))
    if len(wanted) > MOST_ADDRESSES:
        return f"an account has at most {MOST_ADDRESSES} addresses, and this names {len(wanted)}"
    with sessions.begin() as session:
        user = _find(session, userid)
        if user is None:
            return "no such account"
        replace_addresses(user, wanted)
        for address in user.addresses:
            address.confirmed_at = address.confirmed_at or now
    return None


def retry_outbox(sessions: sessionmaker[Session], mail_id: int, now: datetime) -> str | None:
    """Make a waiting or given-up outgoing mail due now, with its attempts counted anew."""
    with sessions.begin() as session:
        mail = session.get(OutboxMail, mail_id)
        if mail is None:
            return "no such mail"
        if mail.status == "sent":
            return "it has been sent already"
        _due_again(mail, now)
    return None


def retry_dead_outbox(sessions: sessionmaker[Session], now: datetime) -> int:
    """Make every given-up outgoing mail due now; returns how many there were."""
    with sessions.begin() as session:
        dead = list(session.scalars(select(OutboxMail).where(OutboxMail.status == "dead")))
        for mail in dead:
            _due_again(mail, now)
    return len(dead)


def _due_again(mail: OutboxMail, now: datetime) -> None:
    mail.status, mail.attempts, mail.next_try_at = "pending", 0, now


def _find(session: Session, userid: str) -> User | None:
    return session.scalar(select(User).where(User.userid == userid.lower()))
