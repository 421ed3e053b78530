"""The short version of proofs/bad_mail_flood.py (issue 21, items 3 and 8):
a few thousand bad mails through SMTP and a few through `receive` while a
player moves; every goal but the latency (judged in the runs by hand)."""

from __future__ import annotations

import subprocess
import sys

from tests.serve_helpers import REPO


def test_bad_mail_flood_short_holds_every_goal() -> None:
    proof = subprocess.run(
        [sys.executable, REPO / "proofs" / "bad_mail_flood.py", "--short", "--no-latency-goal"],
        capture_output=True, timeout=300, cwd=REPO,
    )
    report = proof.stdout.decode(errors="replace")
    assert proof.returncode == 0, report + proof.stderr.decode(errors="replace")[-2000:]
    assert report.splitlines()[-1].endswith("every goal holds")
