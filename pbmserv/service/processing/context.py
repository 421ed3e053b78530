"""What every command handler gets, and what it gives back."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from pbmserv.config import Settings
from pbmserv.mail.attachments import Attachment
from pbmserv.mail.outbound import BoardThread, HtmlVersion
from pbmserv.protocol.commands import Credential, ReplyAddressProof
from pbmserv.service.processing import guesses
from pbmserv.service.processing.catalog import Catalog
from pbmserv.service.processing.errors import ServiceError, UnknownUser
from pbmserv.service.processing.passwords import Passwords
from pbmserv.service.processing.rates import RateLog
from pbmserv.store import records
from pbmserv.store.handles import Connection
from pbmserv.store.key import ServerKey
from pbmserv.store.states import Kind


def as_utc(moment: datetime) -> datetime:
    """A stored time, made timezone-aware: SQLite gives back naive datetimes (stored in UTC)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def unknown_user(userid: str, hint: str = "") -> UnknownUser:
    return UnknownUser(
        f"There is no player with the userid '{userid}'.",
        hint or "check the spelling, or sign up first with 'signup userid password'",
    )


def disabled_account(account: records.Account, server_address: str) -> ServiceError:
    """The refusal of every command of an account the operator has disabled
    (checked after its password, so that only its owner learns why)."""
    reason = f": {account.disabled_reason.rstrip('.')}." if account.disabled_reason else "."
    return ServiceError(
        f"The account '{account.userid}' has been disabled by the operator of this server{reason}",
        f"write to postmaster@{server_address.rpartition('@')[2]}, who runs this server, to have it enabled again",
    )


@dataclass
class Proof:
    """What a mail proves about who wrote it, beyond its From line, which
    proves nothing (docs/decisions/0108-trust-model.md)."""

    #: the userid a genuine reply address vouched for: its commands need no password (`protocol.reply`)
    vouched: str | None = None
    #: whether the mail server the operator trusts vouches that the mail comes from its sender
    trusted_from: bool = False
    #: the envelope sender (MAIL FROM), as forgeable as the From, but a forger must write both
    envelope_sender: str = ""
    #: the accounts whose correct password the mail held, as its commands check them
    passwords: set[str] = field(default_factory=set)

    def owned(self, connection: Connection, sender: str) -> frozenset[str]:
        """The addresses the mail proves its writer owns: the confirmed
        addresses of the accounts it proves, and `sender` (its From) if the
        trusted mail server vouches for it. Lower-case."""
        userids = sorted({*self.passwords, *([self.vouched] if self.vouched else [])})
        found = records.confirmed_addresses(connection, userids) if userids else {}
        owned = {address.lower() for addresses in found.values() for address in addresses}
        return frozenset(owned | {sender.lower()} if self.trusted_from else owned)


@dataclass(frozen=True)
class Reply:
    """One mail to send: the same text to every address in `recipients`.

    `kind` says what it is (`store.states.Kind`): each kind has its hourly
    caps per address (`service.rates.CAPS`). An answer or error to an
    address its mail proved its writer owns is `Kind.ASKED` in the outbox
    (`service.output.compose_replies`)."""

    recipients: tuple[str, ...]
    subject: str
    body: str
    kind: Kind = Kind.ANSWER
    #: the Reply-To of a board mail to a player: their reply address (`service.reply_addresses`)
    reply_to: str = ""
    #: the HTML version with the board's picture, beside the text, of a board mail to a player who asked for pictures
    html: HtmlVersion | None = None
    #: the board whose thread the mail is in (`mail.outbound.BoardThread`)
    thread: BoardThread | None = None
    #: files the mail carries beside its text (a game's record, `GAME record`)
    attachments: tuple[Attachment, ...] = ()


@dataclass
class Context:
    """One command's view of the world: the connection of the transaction it
    runs in (its changes are undone with the mail's or line's savepoint if it
    is refused), the settings, and who sent it. Everything is read and
    written through the store's functions on the connection (`store.records`,
    `store.users`, `store.following`)."""

    connection: Connection
    settings: Settings
    catalog: Catalog
    passwords: Passwords
    key: ServerKey
    rates: RateLog  # events counted against rate limits, in every process
    now: datetime
    sender: str  # the address replies to queries and errors go to
    comment: str = ""
    #: what the mail proves about who wrote it; the passwords found correct are added to it
    proof: Proof = field(default_factory=Proof)

    def find_user(self, userid: str) -> records.Account | None:
        return records.find_account(self.connection, userid.lower())

    def known_user(self, userid: str, hint: str = "") -> records.Account:
        user = self.find_user(userid)
        if user is None:
            raise unknown_user(userid, hint)
        return user

    def authenticate(self, userid: str, password: Credential) -> records.Account:
        """The account, if `password` is theirs and it is not disabled;
        otherwise a ServiceError that does not say which of the two was
        wrong beyond what is public. A password this process has not
        checked before is checked within the limits on guessing
        (`service.guesses`)."""
        account = records.find_account(self.connection, userid.lower())
        if account is None:
            raise unknown_user(userid)
        if isinstance(password, ReplyAddressProof):
            matches = account.userid == self.proof.vouched
        else:
            matches = self._password_matches(account, password)
        if not matches:
            raise ServiceError(
                f"The password for '{account.userid}' is wrong.",
                "passwords are case-sensitive; 'change password userid old new' sets a new one",
            )
        if account.disabled_at is not None:
            raise disabled_account(account, self.settings.address)
        self.proof.passwords.add(account.userid)
        return account

    def _password_matches(self, account: records.Account, password: str) -> bool:
        """Whether `password` is the account's: as this process checked it before, or checked now within the
        limits on guessing."""
        remembered = self.passwords.remembered(account.password_hash, password)
        if remembered is not None:
            return remembered
        kind = self._sender_of(account.userid)
        guesses.check_allowed(self.rates, self.sender, kind, account.userid, self.now)
        matches = self.passwords.verify(account.password_hash, password)
        if not matches:
            guesses.failed(self.rates, self.sender, kind, account.userid, self.now)
        return matches

    def _sender_of(self, userid: str) -> guesses.Sender:
        """What the mail proves about its sender, for `userid`'s account."""
        own = self.addresses([userid])[userid]
        if self.sender not in own:
            return guesses.Sender.STRANGER
        if self.proof.trusted_from:
            return guesses.Sender.VOUCHED_FOR
        claimed_twice = self.proof.envelope_sender.lower() in {address.lower() for address in own}
        return guesses.Sender.CLAIMED if claimed_twice else guesses.Sender.STRANGER

    def addresses(self, userids: list[str] | tuple[str, ...]) -> dict[str, tuple[str, ...]]:
        """Each user's confirmed addresses, in their order."""
        return records.confirmed_addresses(self.connection, userids)
