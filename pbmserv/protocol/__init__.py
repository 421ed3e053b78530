"""The command language: mail text in, typed commands out. No I/O here."""

from pbmserv.protocol.commands import *  # noqa: F403
from pbmserv.protocol.errors import ParseError
from pbmserv.protocol.game_commands import GAME_VERBS
from pbmserv.protocol.global_commands import GLOBAL_VERBS
from pbmserv.protocol.parser import parse_command
from pbmserv.protocol.request import Line, Request, parse_request, probable_passwords
from pbmserv.protocol.syntax import Verb

__all__ = [
    "GAME_VERBS", "GLOBAL_VERBS", "Line", "ParseError", "Request", "Verb", "parse_command", "parse_request",
    "probable_passwords",
]
