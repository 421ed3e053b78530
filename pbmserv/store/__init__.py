from pbmserv.store.database import make_engine, session_factory, upgrade
from pbmserv.store.models import Address, Base, Board, InboundMail, Move, OutboxMail, User

__all__ = [
    "Address",
    "Base",
    "Board",
    "InboundMail",
    "Move",
    "OutboxMail",
    "User",
    "make_engine",
    "session_factory",
    "upgrade",
]
