"""The short version of proofs/cost_flatness.py (issue 21, item 6) on the
database this half of the suite tests: its generator fills 2,000 boards
and 20,000 moves, and moves are played through the worker on them and on
a database of 20 boards. The per-move ratios are judged in the full runs
by hand (--no-ratio-goal): at this scale and beside the rest of the suite
the machine's load decides them, not the database."""

from __future__ import annotations

import pytest
from sqlalchemy.engine import make_url

from tests.serve_helpers import run_proof

pytestmark = pytest.mark.slow  # a proof at scale or a real MTA: `tests/run --fast` leaves it out


def test_cost_flatness_short_generates_and_measures(database_url: str) -> None:
    url = make_url(database_url)
    options = ["--short", "--no-ratio-goal"]
    if url.get_backend_name() == "postgresql":  # its own databases, on the test database's server
        server = url.set(database="").render_as_string(hide_password=False).rstrip("/")
        options += ["--database", "postgresql", "--postgres-server", server]
    report = run_proof("cost_flatness.py", *options, timeout=120)
    assert "database with 2,000 boards" in report
    assert "stored boards" in report and "move number" in report
