"""What the SMTP listener takes from one client address and from one
envelope sender, and the unknown recipients a client may name (issue 35,
item 4 and F11): token buckets in the listener's memory (it is one
process), answered with a 4xx that real MTAs retry."""

from __future__ import annotations

import ipaddress
import re
from collections import OrderedDict

from pbmserv.config import MIB, Settings

#: unknown recipients one client may name (a burst of so many, then as many every `REFUSED_RECIPIENTS_SECONDS`):
#: each reply address costs a database look-up, and guesses ran at 277-510 a second (issue 35, F11). A
#: player's MTA names a stale reply address now and then; past the limit it is told 450 and tries later
REFUSED_RECIPIENTS = 10
REFUSED_RECIPIENTS_SECONDS = 600.0
#: keys a table of token buckets remembers at most (forged senders are new keys without end); the one
#: touched least lately is forgotten first, and a bucket forgotten is a full one again
MOST_KEYS = 100_000
_SIZE_OPTION = re.compile(r"SIZE=(\d+)$", re.IGNORECASE)


class Buckets:
    """Token buckets by key: each holds at most `capacity` tokens, is full
    for a key not seen, and refills at `capacity` per `seconds`. So a key
    may spend a burst of `capacity` at once, and `capacity` per `seconds`
    from then on. A bucket is two floats: no timer, no thread."""

    def __init__(self, capacity: float, seconds: float):
        self.capacity = capacity
        self.rate = capacity / seconds
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def level(self, key: str, now: float) -> float:
        tokens, since = self._buckets.get(key, (self.capacity, now))
        return min(self.capacity, tokens + (now - since) * self.rate)

    def take(self, key: str, amount: float, now: float) -> None:
        self._buckets[key] = (self.level(key, now) - amount, now)
        self._buckets.move_to_end(key)
        if len(self._buckets) > MOST_KEYS:
            self._buckets.popitem(last=False)


class IntakeRates:
    """What the listener takes from one client address and from one
    envelope sender: mails and bytes, each a burst of an hour's worth and
    then that much an hour (`[smtp] client_mails_per_hour`, ...; 0: no
    limit). Past a limit a mail is answered 451 4.7.1 and its MTA tries
    again later. A client in `trusted_clients` (the relay in front, which
    passes everybody's mail) is limited by sender alone. A mail to a
    genuine reply address is not counted against its sender: the address
    proves the player, and anybody may write a player's address as the
    sender to spend their share. And the unknown recipients a client names
    (`REFUSED_RECIPIENTS`; behind a trusted relay, a sender)."""

    def __init__(self, settings: Settings):
        self.trusted = [ipaddress.ip_network(network) for network in settings.trusted_clients]
        self.client_mails = _hourly(settings.client_mails_per_hour)
        self.client_bytes = _hourly(settings.client_mib_per_hour * MIB)
        self.sender_mails = _hourly(settings.sender_mails_per_hour)
        self.sender_bytes = _hourly(settings.sender_mib_per_hour * MIB)
        self.refused_recipients = Buckets(REFUSED_RECIPIENTS, REFUSED_RECIPIENTS_SECONDS)

    def is_trusted(self, client: str) -> bool:
        try:
            address = ipaddress.ip_address(client)
        except ValueError:
            return False
        return any(address in network for network in self.trusted)

    def refusal(self, client: str | None, sender: str | None, size: int, now: float) -> str | None:
        """The answer to a mail of `size` bytes (0: not known yet) from
        `client` and `sender` that must wait, or None (None for either: not counted)."""
        for who, key, mails, sizes in self._limits(client, sender):
            if mails is not None and mails.level(key, now) < 1 or sizes is not None and sizes.level(key, now) < max(1, size):
                return f"451 4.7.1 too much mail from {who}, try again later"
        return None

    def take(self, client: str | None, sender: str | None, size: int, now: float) -> None:
        """Count a mail of `size` bytes from `client` and `sender`."""
        for _, key, mails, sizes in self._limits(client, sender):
            if mails is not None:
                mails.take(key, 1, now)
            if sizes is not None:
                sizes.take(key, size, now)

    def recipients_key(self, client: str, sender: str) -> str:
        """Whose unknown recipients are counted together: the client's, or behind a trusted relay the sender's."""
        return f"sender {sender.lower()}" if self.is_trusted(client) else client

    def _limits(self, client: str | None, sender: str | None) -> list[tuple[str, str, Buckets | None, Buckets | None]]:
        limits = [] if sender is None else [(f"<{sender}>", sender.lower(), self.sender_mails, self.sender_bytes)]
        if client is not None and not self.is_trusted(client):
            limits.append((f"your address {client}", client, self.client_mails, self.client_bytes))
        return limits


def _hourly(most: int) -> Buckets | None:
    return Buckets(most, 3600.0) if most else None


def declared_size(mail_options: list[str]) -> int:
    """The size a MAIL FROM declares (SIZE=, RFC 1870), or 0."""
    for option in mail_options:
        found = _SIZE_OPTION.match(option)
        if found:
            return int(found.group(1))
    return 0
