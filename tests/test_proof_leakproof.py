"""The short version of proofs/leak_proof.py (issue 21, item 5): the swap
test over 20 games of every size and chamber, 0 leaks; it exits 0 only when
every goal it states holds, and prints its figures last."""

from __future__ import annotations

import pytest

from tests.serve_helpers import run_proof

pytestmark = pytest.mark.slow  # a proof at scale or a real MTA: `tests/run --fast` leaves it out


def test_leak_proof_short_holds_every_goal() -> None:
    report = run_proof("leak_proof.py", "--short", timeout=300)
    assert "leaks: 0 (goal 0)" in report
