"""The command language: mail text in, typed commands out. No I/O here."""

from pbmserv.protocol.commands import *  # noqa: F403
from pbmserv.protocol.errors import ParseError
from pbmserv.protocol.parser import parse_command
from pbmserv.protocol.request import Line, Request, parse_request, probable_passwords
from pbmserv.protocol.syntax import GAME_SYNTAX, GLOBAL_SYNTAX

__all__ = ["GAME_SYNTAX", "GLOBAL_SYNTAX", "Line", "ParseError", "Request", "parse_command", "parse_request", "probable_passwords"]
