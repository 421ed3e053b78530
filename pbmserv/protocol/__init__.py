"""The command language: mail text in, typed commands out. No I/O here."""

from pbmserv.protocol.commands import *  # noqa: F403
from pbmserv.protocol.errors import ParseError
from pbmserv.protocol.parser import GAME_SYNTAX, GLOBAL_SYNTAX, Line, Request, parse_command, parse_request, probable_passwords

__all__ = ["GAME_SYNTAX", "GLOBAL_SYNTAX", "Line", "ParseError", "Request", "parse_command", "parse_request", "probable_passwords"]
