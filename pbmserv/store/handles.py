"""What the rest of pbmserv holds of the database without looking inside:
an engine, and the connection of a transaction, passed back to the store's
functions. Naming them here keeps SQLAlchemy's imports in `store`."""

from sqlalchemy import Connection, Engine
from sqlalchemy.orm import sessionmaker as Sessions

__all__ = ["Connection", "Engine", "Sessions"]
