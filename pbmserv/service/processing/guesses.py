"""How many new wrong passwords the server checks, so that guessing can
neither hold up everybody's mail (each check costs 25 ms of the worker,
which applies all mail one after another) nor lock a player out, nor
try a player's password without end.

A From line proves nothing, so a mail's privileges depend on proof:

- vouched for: mail the trusted mail server vouches came from one of the
  account's own (confirmed) addresses is always checked;
- claimed: mail whose From and envelope sender both name one of the
  account's addresses, with nothing to prove it, is checked while that
  account has had fewer than PER_ACCOUNT such failed checks in the last
  WINDOW. A forger who writes both can so block this kind of mail for one
  account for a while, never the account: its reply addresses need no
  password, vouched-for mail is always checked, and a password this
  process has checked before needs no check at all. A forger who writes
  the From alone is a stranger, and blocks nothing of the player's;
- stranger: mail from any other address is checked only while that
  address has had fewer than PER_SENDER failed checks in the last WINDOW
  (whatever the accounts), and all strangers together fewer than IN_ALL:
  a guesser who writes from ever new addresses is held by the second.

What is counted is in the database (`service.rates`), so every process
sees it, `pbmserv receive` too, and a restart forgets nothing. A password
this process has checked before needs no check and meets no limit."""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import Enum

from pbmserv.service.processing.errors import ServiceError
from pbmserv.service.processing.rates import RateLog

WINDOW = timedelta(minutes=15)
PER_SENDER = 10
IN_ALL = 100
PER_ACCOUNT = 10
#: the rate event of a failed check of a stranger's: once under the sender's
#: address, and once under ALL; of a claimed own address's: under the account
FAILED = "password"
FAILED_CLAIMED = "password claimed"
ALL = ""


class Sender(Enum):
    """What a mail proves about its sender, for an account whose password it holds."""

    VOUCHED_FOR = "vouched for"
    CLAIMED = "claimed"
    STRANGER = "stranger"


def check_allowed(rates: RateLog, sender: str, kind: Sender, userid: str, now: datetime) -> None:
    """Refuse (unchecked) a password for `userid` from `sender` while the
    limit on its kind of sender is reached."""
    since = now - WINDOW
    if kind is Sender.VOUCHED_FOR:
        return
    if kind is Sender.CLAIMED:
        if rates.count(FAILED_CLAIMED, userid, since) >= PER_ACCOUNT:
            raise ServiceError(
                f"Too many wrong passwords for {userid} came in the last {_minutes()} in mail that says it is from "
                f"{userid}'s address but nothing proves it, so passwords in such mail are not checked now.",
                f"reply to one of your board mails instead (its reply address needs no password), or send this "
                f"again in {_minutes()}",
            )
        return
    if rates.count(FAILED, sender, since) >= PER_SENDER:
        raise ServiceError(
            f"Too many wrong passwords came from {sender} in the last {_minutes()}, so passwords in mail "
            f"from it are not checked now.",
            f"send your mail from one of your account's own addresses, or reply to one of your board mails "
            f"(its reply address needs no password), or send this again in {_minutes()}",
        )
    if rates.count(FAILED, ALL, since) >= IN_ALL:
        raise ServiceError(
            f"Too many wrong passwords came to this server in the last {_minutes()}, so passwords in mail from "
            "addresses that are not the account's own are not checked now.",
            f"send your mail from one of your account's own addresses, or reply to one of your board mails "
            f"(its reply address needs no password), or send this again in {_minutes()}",
        )


def failed(rates: RateLog, sender: str, kind: Sender, userid: str, now: datetime) -> None:
    """Count a failed check of a password for `userid` from `sender`."""
    if kind is Sender.CLAIMED:
        rates.add(FAILED_CLAIMED, userid, now)
    elif kind is Sender.STRANGER:
        rates.add(FAILED, sender, now)
        rates.add(FAILED, ALL, now)


def _minutes() -> str:
    return f"{WINDOW.seconds // 60} minutes"
