"""Account commands: signup, change password, change address, signoff."""

from __future__ import annotations

import hmac
from dataclasses import replace

from pbmserv.protocol import GLOBAL_VERBS
from pbmserv.protocol.commands import ChangeAddress, ChangePassword, Confirm, Signoff, Signup
from pbmserv.protocol.syntax import MOST_ADDRESSES
from pbmserv.service.bots.seats import BOT_USERIDS
from pbmserv.service.commands.handling import handles
from pbmserv.service.play import board_mails, playing
from pbmserv.service.play.board import Board
from pbmserv.service.play.views import wrap
from pbmserv.service.processing.context import Context, Reply
from pbmserv.service.processing.errors import ServiceError
from pbmserv.store import records, users
from pbmserv.store.records import Account
from pbmserv.store.states import Kind
from pbmserv.store.users import AddressRecord

RESERVED_USERIDS = frozenset({*BOT_USERIDS, "pbmserv", "postmaster", "mailer-daemon", "all"})
MIN_PASSWORD_LENGTH = 4


def _check_password(password: str, usage: str) -> None:
    if len(password) < MIN_PASSWORD_LENGTH:
        raise ServiceError(f"A password needs at least {MIN_PASSWORD_LENGTH} characters.", usage)


def _set_addresses(ctx: Context, user: Account, addresses: tuple[str, ...], usage: str) -> list[AddressRecord]:
    """The account's addresses become `addresses`, in that order, and are
    returned. An address it had keeps whether it is confirmed; a new one,
    the one the mail comes from included, waits for its confirmation code:
    a From line proves nothing (docs/decisions/0109-double-opt-in.md)."""
    written = replace_addresses(users.addresses_of(ctx.connection, user.id), _checked_addresses(addresses, usage))
    users.write_addresses(ctx.connection, user.id, written)
    return written


def replace_addresses(had: list[AddressRecord], wanted: list[str]) -> list[AddressRecord]:
    """The addresses `wanted`, in that order; an address the account had keeps whether it is confirmed."""
    kept = {address.address: address for address in had}
    return [kept.get(address) or AddressRecord(address) for address in wanted]


def mail_addresses(addresses: list[AddressRecord]) -> list[str]:
    """The addresses the account's mail goes to: the confirmed ones."""
    return [a.address for a in addresses if a.confirmed_at is not None]


def _checked_addresses(addresses: tuple[str, ...], usage: str) -> list[str]:
    wanted = list(dict.fromkeys(addresses))
    if len(wanted) > MOST_ADDRESSES:
        raise ServiceError(f"An account has at most {MOST_ADDRESSES} addresses, and this names {len(wanted)}.", usage)
    return wanted


def _account_text(addresses: list[AddressRecord]) -> str:
    waiting = [a.address for a in addresses if a.confirmed_at is None]
    text = "Mail for this account goes to: " + (", ".join(mail_addresses(addresses)) or "no address yet") + "."
    if waiting:
        text += "\n" + wrap(
            f"Waiting to be confirmed: {', '.join(waiting)}. A mail to each says how; until then, no other mail goes there.",
            hang="",
        )
    return text


def _to_user_and_sender(ctx: Context, addresses: list[AddressRecord]) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*mail_addresses(addresses), *([ctx.sender] if ctx.sender else [])]))


def to_account_and_sender(ctx: Context, user: Account) -> tuple[str, ...]:
    """Where the answer to a change of an account's settings goes: its addresses, and the mail's sender."""
    return _to_user_and_sender(ctx, users.addresses_of(ctx.connection, user.id))


def _confirmation_code(ctx: Context, user: Account, address: str) -> str:
    return ctx.key.code("confirm address", str(user.id), address)


def _confirmation_requests(
    ctx: Context, user: Account, addresses: list[AddressRecord], welcome: bool = False,
) -> list[Reply]:
    """A mail to each address of the account that waits to be confirmed
    (at most one a day reaches an address: `service.rates`). With
    `welcome`, the one to the address a signup came from is its welcome."""
    requests = []
    for address in (a.address for a in addresses if a.confirmed_at is None):
        code = _confirmation_code(ctx, user, address)
        command = f"confirm {user.userid} {code}"
        how = f"reply to this mail and keep its Subject, or send a mail to {ctx.settings.address} with the Subject: {command}"
        if welcome and address == ctx.sender:
            paragraphs = [
                wrap(
                    f"Welcome, {user.userid}. Your account on the play-by-email server {ctx.settings.address} is "
                    f"ready. Before it gets any mail at this address, {address}, or anybody can challenge you, "
                    f"confirm that the address is yours: {how}", hang="",
                ),
                "Send 'list' for the games on this server and 'help' for the commands.\n"
                "Keep your password to yourself: every move you send needs it.",
                wrap(
                    "If you did not sign up, there is nothing to do: no other mail of the account comes here unless "
                    "the address is confirmed.", hang="",
                ),
            ]
        else:
            paragraphs = [
                wrap(
                    f"Someone asked the play-by-email server {ctx.settings.address} to send the mail of the account "
                    f"'{user.userid}' to this address, {address}.", hang="",
                ),
                wrap(f"If that was you, {how}", hang=""),
                wrap(
                    "If it was not you, there is nothing to do: no other mail of the account comes here unless the "
                    "address is confirmed.", hang="",
                ),
            ]
        requests.append(Reply((address,), command, "\n\n".join(paragraphs) + "\n", Kind.CONFIRM))
    return requests


@handles(Signup)
def signup(ctx: Context, command: Signup) -> list[Reply]:
    usage = GLOBAL_VERBS["signup"].syntax
    if command.userid in RESERVED_USERIDS:
        raise ServiceError(f"The userid '{command.userid}' is reserved for the server.", f"choose another userid: {usage}")
    if ctx.find_user(command.userid) is not None:
        raise ServiceError(f"The userid '{command.userid}' is taken.", f"choose another userid: {usage}")
    _check_password(command.password, usage)
    addresses = command.addresses or ((ctx.sender,) if ctx.sender else ())
    if not addresses:
        raise ServiceError("Your mail has no usable sender address, so the account would get no mail.", usage)
    _checked_addresses(addresses, usage)  # before the password is hashed
    user = users.insert_account(ctx.connection, command.userid, ctx.passwords.hash(command.password), ctx.now)
    written = _set_addresses(ctx, user, addresses, usage)
    requests = _confirmation_requests(ctx, user, written, welcome=True)
    if ctx.sender in addresses:  # the request to confirm it is the welcome
        return requests
    body = (
        f"Welcome, {user.userid}. Your account is ready.\n"
        f"{_account_text(written)}\n\n"
        "Send 'list' for the games on this server and 'help' for the commands.\n"
        "Keep your password to yourself: every move you send needs it.\n"
    )
    return [Reply(_to_user_and_sender(ctx, written), f"pbmserv signup {user.userid}", body), *requests]


@handles(ChangePassword)
def change_password(ctx: Context, command: ChangePassword) -> list[Reply]:
    user = ctx.authenticate(command.userid, command.password)
    _check_password(command.new_password, GLOBAL_VERBS["change"].syntax)
    users.set_password_hash(ctx.connection, user.id, ctx.passwords.hash(command.new_password))
    boards = _running_boards_of(ctx, user.userid)
    follows = {0: "", 1: "; a mail follows for your running board"}.get(
        len(boards), "; a mail follows for each of your running boards",
    )
    body = wrap(
        f"The password of {user.userid} has been changed. Use the new one from now on. The reply addresses "
        f"of your earlier board mails no longer work{follows}{', from its new reply address' if boards else ''}.",
        hang="",
    ) + "\n"
    lead = wrap(
        "(Your password changed: reply to this mail to play. The reply addresses of earlier mails no longer work.)",
        hang="",
    )
    return [
        Reply(_to_user_and_sender(ctx, users.addresses_of(ctx.connection, user.id)), f"pbmserv change password {user.userid}", body),
        *(board_mails.to_player(ctx, board, board.record.seats.index(user.userid), lead) for board in boards),
    ]


def _running_boards_of(ctx: Context, userid: str) -> list[Board]:
    """The running boards `userid` plays on, of the games this server offers."""
    return [
        Board.of(ctx.catalog.get(record.game_type), record)
        for record in records.running_boards_of_all(ctx.connection, [userid]) if record.game_type in ctx.catalog
    ]


@handles(ChangeAddress)
def change_address(ctx: Context, command: ChangeAddress) -> list[Reply]:
    user = ctx.authenticate(command.userid, command.password)
    before = mail_addresses(users.addresses_of(ctx.connection, user.id))
    addresses = command.addresses or ((ctx.sender,) if ctx.sender else ())
    written = _set_addresses(ctx, user, addresses, GLOBAL_VERBS["change"].syntax)
    recipients = tuple(dict.fromkeys([*before, *_to_user_and_sender(ctx, written)]))
    body = f"The addresses of {user.userid} have been changed.\n{_account_text(written)}\n"
    return [Reply(recipients, f"pbmserv change address {user.userid}", body), *_confirmation_requests(ctx, user, written)]


@handles(Confirm)
def confirm(ctx: Context, command: Confirm) -> list[Reply]:
    """The address whose code this is gets the account's mail from now on."""
    user = ctx.known_user(command.userid)
    had = users.addresses_of(ctx.connection, user.id)
    waiting = [a for a in had if a.confirmed_at is None]
    found = next(
        (a for a in waiting if hmac.compare_digest(_confirmation_code(ctx, user, a.address), command.code)), None,
    )
    if found is None:
        raise ServiceError(
            f"That code confirms no address of '{user.userid}' that is waiting to be confirmed.",
            "reply to the mail that asked you to confirm, keeping its Subject",
        )
    written = [replace(a, confirmed_at=ctx.now) if a == found else a for a in had]
    users.write_addresses(ctx.connection, user.id, written)
    body = f"{found.address} now gets the mail of {user.userid}.\n{_account_text(written)}\n"
    return [Reply(_to_user_and_sender(ctx, written), f"pbmserv confirm {user.userid}", body)]


@handles(Signoff)
def signoff(ctx: Context, command: Signoff) -> list[Reply]:
    user = ctx.authenticate(command.userid, command.password)
    replies: list[Reply] = []
    for record in [b for b in records.running_boards(ctx.connection, lock=True) if user.userid in b.seats]:
        board = Board.of(ctx.catalog.get(record.game_type), record)
        seat = record.seats.index(user.userid)
        replies += playing.end_by_resignation(ctx, board, seat, f"{user.userid} signed off and forfeited")
    farewell_to = _to_user_and_sender(ctx, users.addresses_of(ctx.connection, user.id))
    users.delete_account(ctx.connection, user.id)
    forfeited = len(replies) and " Your live games were forfeited."
    body = f"The account {user.userid} has been deleted.{forfeited or ''}\nThank you for playing.\n"
    return [*replies, Reply(farewell_to, f"pbmserv signoff {user.userid}", body)]
