"""The short versions of the proofs under proofs/ (issue 21): each exits 0
only when every goal it states holds, and prints its figures last. Latency
goals are judged in the runs by hand only: beside the rest of the suite the
machine's load decides them, not the server."""

from __future__ import annotations

import pytest

from tests.serve_helpers import run_proof

pytestmark = pytest.mark.slow  # a proof at scale or a real MTA: `tests/run --fast` leaves it out


def test_smtp_abuse_short_holds_every_goal() -> None:
    run_proof("smtp_abuse.py", "--short", "--no-latency-goal", timeout=120)
