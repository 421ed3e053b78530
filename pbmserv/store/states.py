"""The states a stored mail goes through, and the kinds of mail the
server writes: the values of the `status` and `kind` columns, named once.
They are `str`s, so they are stored, bound and compared as the text they
are, and the database holds nothing new. (No SQLAlchemy here: `receive`'s
hot path stores a pending mail with it.)"""

from __future__ import annotations

from enum import StrEnum


class Inbound(StrEnum):
    """An inbound mail: waiting, processed, failed (a bug or unreadable: kept masked for the operator), or
    dropped unanswered (automatic mail, a loop)."""

    PENDING = "pending"
    DONE = "done"
    FAILED = "failed"
    DROPPED = "dropped"


#: the inbound states of a mail processed: only these are ever deleted (pending mail never is)
PROCESSED = (Inbound.DONE, Inbound.FAILED, Inbound.DROPPED)


class Outbox(StrEnum):
    """A mail in the outbox: waiting to be sent (or tried again), sent, or given up."""

    PENDING = "pending"
    SENT = "sent"
    DEAD = "dead"


#: the outbox states of a mail that will not be sent again
FINISHED = (Outbox.SENT, Outbox.DEAD)


class Kind(StrEnum):
    """What a mail the server writes is, for the hourly caps on what one address is sent (`service.rates.CAPS`):
    a board mail to a board's players and subscribers, an answer or an error to the sender, mail an account
    sends others (message, broadcast), a request to confirm an address, an answer or error to an
    address its mail proved its writer owns, or a chat on a board to its players and followers."""

    BOARD = "board"
    ANSWER = "answer"
    ERROR = "error"
    RELAY = "relay"
    CONFIRM = "confirm"
    ASKED = "asked"
    CHAT = "chat"
