"""Argon2id password hashes with explicit cost parameters (see Settings).

A check costs about 25 ms of CPU by design, which would cap one server
process at some 40 moves a second. So the outcome of every check is
remembered in memory for the life of the process, under a keyed hash of
(stored hash, password) with a random per-process key: a player's second
and later mails cost microseconds, and so does the same wrong password
sent again. Nothing is written anywhere, and changing a password changes
the stored hash, which retires what was remembered for the old one.

A new wrong password still costs a full check, and a flood of them would
hold up everybody's mail. So an account takes at most
FAILED_CHECKS_PER_ACCOUNT failing checks in FAILED_CHECKS_WINDOW; after
that, passwords for it that are not remembered are refused unchecked
until the window has moved on (`TooManyFailures`). A player whose right
password this process has checked before is never refused so: someone
guessing cannot lock them out.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import threading
from collections import OrderedDict, deque
from datetime import datetime, timedelta

from argon2 import PasswordHasher, Type
from argon2.exceptions import InvalidHashError, VerificationError

from pbmserv.config import Settings

REMEMBERED_CHECKS = 10_000
FAILED_CHECKS_PER_ACCOUNT = 5
FAILED_CHECKS_WINDOW = timedelta(minutes=15)


class TooManyFailures(Exception):
    """The account has had its share of failing checks; none until `until`."""

    def __init__(self, until: datetime):
        super().__init__(f"too many failed password checks; none until {until.isoformat()}")
        self.until = until


class Passwords:
    def __init__(self, settings: Settings):
        self._hasher = PasswordHasher(
            time_cost=settings.password_time_cost,
            memory_cost=settings.password_memory_kib,
            parallelism=settings.password_parallelism,
            hash_len=32,
            salt_len=16,
            type=Type.ID,
        )
        self._key = os.urandom(32)
        self._checked: OrderedDict[bytes, bool] = OrderedDict()
        self._failures: OrderedDict[str, deque[datetime]] = OrderedDict()  # by stored hash: when checks failed
        self._lock = threading.Lock()

    def hash(self, password: str) -> str:
        return self._hasher.hash(password)

    def verify(self, stored_hash: str, password: str, now: datetime) -> bool:
        """Whether `password` matches `stored_hash`; raises TooManyFailures
        instead of checking a new password for an account with too many
        failing checks before `now`."""
        token = hmac.new(self._key, f"{stored_hash}\0{password}".encode(), hashlib.sha256).digest()
        with self._lock:
            if token in self._checked:
                self._checked.move_to_end(token)
                return self._checked[token]
            self._check_allowed(stored_hash, now)
        try:
            self._hasher.verify(stored_hash, password)
            matches = True
        except (VerificationError, InvalidHashError):
            matches = False
        with self._lock:
            self._checked[token] = matches
            if len(self._checked) > REMEMBERED_CHECKS:
                self._checked.popitem(last=False)
            if not matches:
                self._failures.setdefault(stored_hash, deque()).append(now)
                self._failures.move_to_end(stored_hash)
                if len(self._failures) > REMEMBERED_CHECKS:
                    self._failures.popitem(last=False)
        return matches

    def _check_allowed(self, stored_hash: str, now: datetime) -> None:
        failures = self._failures.get(stored_hash)
        if failures is None:
            return
        while failures and failures[0] <= now - FAILED_CHECKS_WINDOW:
            failures.popleft()
        if len(failures) >= FAILED_CHECKS_PER_ACCOUNT:
            raise TooManyFailures(failures[0] + FAILED_CHECKS_WINDOW)
