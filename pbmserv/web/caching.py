"""ETags and conditional answers.

What shows one board (its picture, JSON, record, feed) is keyed by what it
follows from, before any of it is made: the board's row id, its version
(which every change of the board moves on, an undo too, after which the
same move count can hold other moves), its move count and the variant
asked for (the position `?move=K`, the format). The board page is keyed
by its facts (`boards.PageFacts`: the board's version and the rest that
changes apart from the board, ratings and deadlines), read in a few small
reads. Either way a client that sends the ETag back in If-None-Match gets
a 304 before anything is made, and a body once made is kept (`Bodies`) for
every other client that asks for it. Other pages, which show many boards,
are made for each request and keyed by a digest of their bytes.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from pbmserv.store.records import BoardRecord

#: every answer may be kept, and is asked for again (If-None-Match) before each use
REVALIDATE = "public, no-cache"
#: the bytes of made bodies a site process keeps (some thousand pages and pictures)
KEPT_BYTES = 32 * 1024 * 1024


def etag_of(*parts: Any) -> str:
    digest = hashlib.blake2b(json.dumps(parts, separators=(",", ":"), default=str).encode(), digest_size=12)
    return f'"{digest.hexdigest()}"'


def board_etag(record: BoardRecord, *variant: Any) -> str:
    """The ETag of what shows `record` in `variant` (format, position)."""
    return etag_of(record.id, record.version, record.move_count, *variant)


def still_fresh(request: Request, etag: str) -> bool:
    """Whether the client already holds what `etag` names (If-None-Match, weak or strong)."""
    asked = request.headers.get("if-none-match", "")
    return any(tag.strip().removeprefix("W/") in (etag, "*") for tag in asked.split(","))


def not_modified(etag: str) -> Response:
    return Response(status_code=304, headers={"ETag": etag, "Cache-Control": REVALIDATE})


def answer(request: Request, body: bytes | str, media_type: str, etag: str | None = None) -> Response:
    """`body` with its ETag (a digest of it, unless given), or a 304 when the client holds it."""
    content = body.encode() if isinstance(body, str) else body
    tag = etag or etag_of(hashlib.blake2b(content, digest_size=16).hexdigest())
    if still_fresh(request, tag):
        return not_modified(tag)
    return Response(content, media_type=media_type, headers={"ETag": tag, "Cache-Control": REVALIDATE})


class Bodies:
    """Bodies made, by their ETag, the most recently used kept up to
    `most_bytes` in all. An ETag names everything its body shows, so a body
    kept is never stale: a change makes another ETag, and the old body is
    no longer asked for until it is dropped. Shared by the handler threads."""

    def __init__(self, most_bytes: int = KEPT_BYTES):
        self.most_bytes = most_bytes
        self._bodies: OrderedDict[str, bytes] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, etag: str, make: Callable[[], bytes | str]) -> bytes:
        """The body named `etag`: the one kept, else `make`'s (made outside the lock: two threads may both make it)."""
        with self._lock:
            body = self._bodies.get(etag)
            if body is not None:
                self._bodies.move_to_end(etag)
                return body
        made = make()
        body = made.encode() if isinstance(made, str) else made
        with self._lock:
            if etag not in self._bodies:
                self._bodies[etag] = body
                self._bytes += len(body)
            while self._bytes > self.most_bytes:
                self._bytes -= len(self._bodies.popitem(last=False)[1])
        return body
