"""pbmserv: a play-by-email board game server."""

__version__ = "0.1.0"
