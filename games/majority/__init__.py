"""Majority and Psychomachia (RULES.md, section 2)."""

from games.majority.game import Majority, Psychomachia
from games.majority.state import MajorityState

__all__ = ["Majority", "MajorityState", "Psychomachia"]
