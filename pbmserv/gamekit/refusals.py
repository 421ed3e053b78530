"""What a game refuses, in words for the player."""

from pbmserv.refusal import Refusal


class IllegalMove(Refusal):
    """A move a player sent that the rules refuse; the message is for the player."""


class InvalidOption(Refusal):
    """A challenge option that is unknown, malformed or out of range."""
