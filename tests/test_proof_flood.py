"""The short version of proofs/bad_mail_flood.py (issue 21, items 3 and 8):
a few thousand bad mails through SMTP and a few through `receive` while a
player moves; every goal but the latency (judged in the runs by hand)."""

from __future__ import annotations

import pytest

from tests.serve_helpers import run_proof

pytestmark = pytest.mark.slow  # a proof at scale or a real MTA: `tests/run --fast` leaves it out


def test_bad_mail_flood_short_holds_every_goal() -> None:
    run_proof("bad_mail_flood.py", "--short", "--no-latency-goal", timeout=300)
