"""Account commands: signup, change password, change address, signoff."""

from __future__ import annotations

from pbmserv.protocol import GLOBAL_SYNTAX
from pbmserv.protocol.commands import ChangeAddress, ChangePassword, Signoff, Signup
from pbmserv.service import boards as board_commands
from pbmserv.service.context import Context, Reply
from pbmserv.service.errors import ServiceError
from pbmserv.store import records
from pbmserv.store.models import Address, User
from pbmserv.store.records import BOARDS

RESERVED_USERIDS = frozenset({"bot", "pbmserv", "postmaster", "mailer-daemon", "all"})
MIN_PASSWORD_LENGTH = 4


def _check_password(password: str, usage: str) -> None:
    if len(password) < MIN_PASSWORD_LENGTH:
        raise ServiceError(f"A password needs at least {MIN_PASSWORD_LENGTH} characters.", usage)


def _set_addresses(user: User, addresses: tuple[str, ...]) -> None:
    """The account's addresses become `addresses`, in that order; an
    address it had already keeps its row (a new row for it would meet the
    old one in the unique constraint before the old one is deleted)."""
    kept = {address.address: address for address in user.addresses}
    user.addresses[:] = [kept.get(address) or Address(address=address) for address in dict.fromkeys(addresses)]
    for position, address in enumerate(user.addresses):
        address.position = position


def _account_text(user: User) -> str:
    return "Mail for this account goes to: " + ", ".join(a.address for a in user.addresses) + "."


def _to_user_and_sender(ctx: Context, user: User) -> tuple[str, ...]:
    addresses = [a.address for a in user.addresses]
    if ctx.sender and ctx.sender not in addresses:
        addresses.append(ctx.sender)
    return tuple(addresses)


def signup(ctx: Context, command: Signup) -> list[Reply]:
    usage = GLOBAL_SYNTAX["signup"]
    if command.userid in RESERVED_USERIDS:
        raise ServiceError(f"The userid '{command.userid}' is reserved for the server.", f"choose another userid: {usage}")
    if ctx.find_user(command.userid) is not None:
        raise ServiceError(f"The userid '{command.userid}' is taken.", f"choose another userid: {usage}")
    _check_password(command.password, usage)
    addresses = command.addresses or ((ctx.sender,) if ctx.sender else ())
    if not addresses:
        raise ServiceError("Your mail has no usable sender address, so the account would get no mail.", usage)
    user = User(userid=command.userid, password_hash=ctx.passwords.hash(command.password), created_at=ctx.now)
    _set_addresses(user, addresses)
    ctx.session.add(user)
    ctx.session.flush()
    body = (
        f"Welcome, {user.userid}. Your account is ready.\n"
        f"{_account_text(user)}\n\n"
        "Send 'list' for the games on this server and 'help' for the commands.\n"
        "Keep your password to yourself: every move you send needs it.\n"
    )
    return [Reply(_to_user_and_sender(ctx, user), f"pbmserv signup {user.userid}", body)]


def change_password(ctx: Context, command: ChangePassword) -> list[Reply]:
    user = ctx.user(ctx.authenticate(command.userid, command.password))
    _check_password(command.new_password, GLOBAL_SYNTAX["change"])
    user.password_hash = ctx.passwords.hash(command.new_password)
    body = f"The password of {user.userid} has been changed. Use the new one from now on.\n"
    return [Reply(_to_user_and_sender(ctx, user), f"pbmserv change password {user.userid}", body)]


def change_address(ctx: Context, command: ChangeAddress) -> list[Reply]:
    user = ctx.user(ctx.authenticate(command.userid, command.password))
    before = [a.address for a in user.addresses]
    addresses = command.addresses or ((ctx.sender,) if ctx.sender else ())
    _set_addresses(user, addresses)
    ctx.session.flush()
    recipients = tuple(dict.fromkeys([*before, *(a.address for a in user.addresses)]))
    body = f"The addresses of {user.userid} have been changed.\n{_account_text(user)}\n"
    return [Reply(recipients, f"pbmserv change address {user.userid}", body)]


def signoff(ctx: Context, command: Signoff) -> list[Reply]:
    user = ctx.user(ctx.authenticate(command.userid, command.password))
    replies: list[Reply] = []
    live = records.boards_where(ctx.connection, BOARDS.c.status == "active", lock=True)
    for board in [b for b in live if user.userid in b.seats]:
        game = ctx.catalog.get(board.game_type)
        seat = board.seats.index(user.userid)
        replies += board_commands.end_by_resignation(
            ctx, game, board, seat, f"{user.userid} signed off and forfeited"
        )
    farewell_to = _to_user_and_sender(ctx, user)
    ctx.session.delete(user)
    ctx.session.flush()
    forfeited = len(replies) and " Your live games were forfeited."
    body = f"The account {user.userid} has been deleted.{forfeited or ''}\nThank you for playing.\n"
    return [*replies, Reply(farewell_to, f"pbmserv signoff {user.userid}", body)]
