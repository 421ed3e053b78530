from __future__ import annotations

from pbmserv.refusal import Refusal


class ServiceError(Refusal):
    """A command that cannot be carried out; `fix` says how to do it right,
    and a refused move carries the position as `board_text`."""
