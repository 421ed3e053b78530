"""Argon2id password hashes with explicit cost parameters (see Settings).

A check costs about 25 ms of CPU by design, which would cap one server
process at some 40 moves a second. So the outcome of every check is
remembered in memory for the life of the process, under a keyed hash of
(stored hash, password) with a random per-process key: a player's second
and later mails cost microseconds, and so does the same wrong password
sent again. Nothing is written anywhere, and changing a password changes
the stored hash, which retires what was remembered for the old one.

How many new wrong passwords are checked at all is limited elsewhere,
in the database (`service.guesses`), so that every process sees it.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import threading
from collections import OrderedDict

from argon2 import PasswordHasher, Type
from argon2.exceptions import InvalidHashError, VerificationError

from pbmserv.config import Settings

REMEMBERED_CHECKS = 10_000


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
        self._lock = threading.Lock()

    def hash(self, password: str) -> str:
        return self._hasher.hash(password)

    def remembered(self, stored_hash: str, password: str) -> bool | None:
        """Whether `password` matched `stored_hash` when this process checked it; None if it has not."""
        token = self._token(stored_hash, password)
        with self._lock:
            if token not in self._checked:
                return None
            self._checked.move_to_end(token)
            return self._checked[token]

    def verify(self, stored_hash: str, password: str) -> bool:
        """Whether `password` matches `stored_hash`: a full check, whose outcome is remembered."""
        try:
            self._hasher.verify(stored_hash, password)
            matches = True
        except (VerificationError, InvalidHashError):
            matches = False
        with self._lock:
            self._checked[self._token(stored_hash, password)] = matches
            if len(self._checked) > REMEMBERED_CHECKS:
                self._checked.popitem(last=False)
        return matches

    def _token(self, stored_hash: str, password: str) -> bytes:
        return hmac.new(self._key, f"{stored_hash}\0{password}".encode(), hashlib.sha256).digest()
