"""What every proof shows: a progress bar on stderr, percentiles of its
timings, and its goals, each held or not, before its last line."""

from __future__ import annotations

import sys


def progress(fraction: float, text: str) -> None:
    filled = int(30 * min(1.0, fraction))
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {fraction:4.0%} {text:<70}")
    sys.stderr.flush()


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))] if ordered else float("nan")


def show_goals(goals: dict[str, bool]) -> str:
    """Print each goal as held (ok) or not (FAIL); the verdict for the proof's last line."""
    for goal, held in goals.items():
        print(f"  {'ok  ' if held else 'FAIL'} {goal}")
    return "every goal holds" if all(goals.values()) else "GOALS MISSED"
