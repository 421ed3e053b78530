"""Majority and Psychomachia (the rules `majority help` gives)."""

from games.majority.game import Majority, Psychomachia
from games.majority.state import MajorityState

__all__ = ["Majority", "MajorityState", "Psychomachia"]
