"""The one way the server says no to a player.

A command that cannot be read, cannot be carried out, or is a move the rules
forbid all end in the same answer: what was wrong (one sentence) and how to
do it right. The protocol, the service and the game plugins raise subclasses
of `Refusal`; the mail composer reads `message` and `fix` and nothing else.
"""

from __future__ import annotations


class Refusal(Exception):
    """`message` says what was wrong; `fix` how to do it right ("" where the
    raiser cannot know it and a layer above adds it). `game` and `board` tell
    which game the answer is about; `board_text` is the position, shown under
    a refused move."""

    def __init__(
        self,
        message: str,
        fix: str = "",
        game: str | None = None,
        board: int | None = None,
        *,
        board_text: str = "",
    ):
        super().__init__(message)
        self.message = message
        self.fix = fix
        self.game = game
        self.board = board
        self.board_text = board_text
