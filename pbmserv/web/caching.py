"""ETags and conditional answers.

What shows one board (its picture, JSON, record, feed) is keyed by what it
follows from, before any of it is made: the board's row id, its version
(which every change of the board moves on, an undo too, after which the
same move count can hold other moves), its move count and the variant
asked for (the position `?move=K`, the format). A page that also shows
what changes apart from its board (ratings, vacations, other boards) is
keyed by a digest of its bytes. Either way a client that sends the ETag
back in If-None-Match gets a 304 while it still holds.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from pbmserv.store.records import BoardRecord

#: every answer may be kept, and is asked for again (If-None-Match) before each use
REVALIDATE = "public, no-cache"


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
