"""Parse errors: each says what was wrong in one sentence and shows the right syntax."""

from __future__ import annotations


class ParseError(Exception):
    def __init__(self, message: str, syntax: str = "", game: str | None = None, board: int | None = None):
        super().__init__(message)
        self.message = message
        self.syntax = syntax
        self.game = game
        self.board = board


class UnknownCommand(ParseError):
    pass


class UnknownGame(ParseError):
    pass


class MissingArgument(ParseError):
    pass


class BadArgument(ParseError):
    pass


class EmptyCommand(ParseError):
    pass
