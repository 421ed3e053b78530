"""Argon2id password hashes with explicit cost parameters (see Settings).

A check costs about 25 ms of CPU by design, which would cap one server
process at some 40 moves a second. Successful checks are therefore
remembered in memory for the life of the process, under a keyed hash of
(stored hash, password) with a random per-process key: a player's second and
later mails cost microseconds, a wrong password always pays the full price,
nothing is written anywhere, and changing a password changes the stored hash,
which retires the remembered entry.
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
        self._verified: OrderedDict[bytes, None] = OrderedDict()
        self._lock = threading.Lock()

    def hash(self, password: str) -> str:
        return self._hasher.hash(password)

    def verify(self, stored_hash: str, password: str) -> bool:
        token = hmac.new(self._key, f"{stored_hash}\0{password}".encode(), hashlib.sha256).digest()
        with self._lock:
            if token in self._verified:
                self._verified.move_to_end(token)
                return True
        try:
            self._hasher.verify(stored_hash, password)
        except (VerificationError, InvalidHashError):
            return False
        with self._lock:
            self._verified[token] = None
            if len(self._verified) > REMEMBERED_CHECKS:
                self._verified.popitem(last=False)
        return True
