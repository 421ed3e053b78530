"""Who holds a claim on outbox mail (see `delivery`): a value the serving
process shares with its children, so it imports nothing heavy."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Claim:
    """Who holds the mails claimed in `serve`: the server (`by`, its name,
    the same across its restarts) and the deliverer process they are for
    (`token`, new for each). Unowned (`receive`, `pbmserv deliver`): empty."""

    by: str = ""
    token: str = ""


UNOWNED = Claim()
