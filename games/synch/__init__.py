"""Move In Synch, In Opposition by Leroy Quet."""

from games.synch.game import Synch

__all__ = ["Synch"]
