"""Which board mails a player gets: the mode of the board, theirs for all
their boards unless they chose one for it (docs/decisions/0153-notifications.md).
A mode chooses only among the mails others cause: the answer to the
player's own command, a board's first mail and its final one always come."""

from __future__ import annotations

from collections.abc import Collection

from pbmserv.store.records import Account, BoardRecord

#: the mode of every account and board that chose none: today's board mails
EVERY = "every"
DIGEST = "digest"


def mode_on(account: Account, board_modes: dict[int, str]) -> str:
    """The player's mode on a board, given its players' choices for it alone (`store.notifications.board_modes`)."""
    return board_modes.get(account.id, account.notifications)


def waits_for(board: BoardRecord, to_move: Collection[int], seat: int) -> bool:
    """Whether the board waits for the player in `seat`: for their move, or
    for their answer to a draw offer or an undo request (which lapses with
    the next move, so a player in 'turn' mode must hear of it now)."""
    return seat in to_move or (board.proposal is not None and seat not in board.proposal["accepted"])


def gets_board_mail(mode: str, *, own: bool, first: bool, over: bool, waits: bool) -> bool:
    """Whether a player in `mode` gets a board mail: the answer to their own
    command (`own`), the board's first mail and its last (`over`) whatever
    the mode; else every one, only while the board waits for them ('turn'),
    or none ('digest' lists the boards waiting for their move once a day,
    'results' has only the last)."""
    if own or first or over or mode == EVERY:
        return True
    return mode == "turn" and waits
