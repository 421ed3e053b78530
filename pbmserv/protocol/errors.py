"""Parse errors: each says what was wrong in one sentence and, as its `fix`, shows the right syntax."""

from __future__ import annotations

from pbmserv.refusal import Refusal


class ParseError(Refusal):
    pass


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
