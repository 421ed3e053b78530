"""What the worker keeps in memory of the answers it made, so that the same
costly work is not done again for every mail that asks: an LRU bounded by
the bytes it holds.

Every key is a digest of everything the value follows from (`digest`),
never a board's id or version: a value can then never be stale, whatever
is undone, rolled back or replayed, and the cache needs no invalidation.
The values are the game's own output for a given state (and seat);
whoever may be given that output is decided by the caller, before it
looks here, as it would be without the cache.
"""

from __future__ import annotations

import hashlib
import json
import threading
from typing import Any

from cachetools import LRUCache


def digest(*parts: Any) -> bytes:
    """A key for values that follow from `parts` (JSON data: a game's name, a stored state, a seat)."""
    return hashlib.blake2b(json.dumps(parts, sort_keys=True, separators=(",", ":")).encode(), digest_size=20).digest()


class Memo:
    """Text values by key, the least recently used dropped once they hold
    more than `most_bytes` (counted as UTF-8 would be, near enough: a
    character each). A value larger than a tenth of that is not kept."""

    def __init__(self, most_bytes: int):
        self._values: LRUCache[bytes, str] = LRUCache(maxsize=most_bytes, getsizeof=len)
        self._lock = threading.Lock()  # tests process mail in more than one thread

    def get(self, key: bytes) -> str | None:
        with self._lock:
            return self._values.get(key)

    def put(self, key: bytes, value: str) -> None:
        if len(value) * 10 > self._values.maxsize:
            return
        with self._lock:
            self._values[key] = value

    def clear(self) -> None:
        with self._lock:
            self._values.clear()

    @property
    def held(self) -> int:
        """The characters held now."""
        return int(self._values.currsize)
