"""Plurality by João Pedro Neto."""

from games.plurality.game import Plurality

__all__ = ["Plurality"]
