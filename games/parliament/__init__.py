"""Parliament: Majority, official rules 2019."""

from games.parliament.game import Parliament

__all__ = ["Parliament"]
