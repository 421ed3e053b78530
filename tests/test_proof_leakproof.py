"""The short version of proofs/leak_proof.py (issue 21, item 5): the swap
test over 20 games of every size and chamber, 0 leaks; it exits 0 only when
every goal it states holds, and prints its figures last."""

from __future__ import annotations

import subprocess
import sys

from tests.serve_helpers import REPO


def test_leak_proof_short_holds_every_goal() -> None:
    proof = subprocess.run(
        [sys.executable, REPO / "proofs" / "leak_proof.py", "--short"], capture_output=True, timeout=300, cwd=REPO,
    )
    report = proof.stdout.decode(errors="replace")
    assert proof.returncode == 0, report + proof.stderr.decode(errors="replace")[-2000:]
    assert report.splitlines()[-1].endswith("every goal holds")
    assert "leaks: 0 (goal 0)" in report
