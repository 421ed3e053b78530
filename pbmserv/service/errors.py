from __future__ import annotations


class ServiceError(Exception):
    """A command that cannot be carried out. The reply says `message` (what
    was wrong, one sentence) and `hint` (how to do it right); `board_text`
    is added for a refused move so the player sees the position."""

    def __init__(
        self,
        message: str,
        hint: str = "",
        *,
        game: str | None = None,
        board: int | None = None,
        board_text: str = "",
    ):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.game = game
        self.board = board
        self.board_text = board_text
