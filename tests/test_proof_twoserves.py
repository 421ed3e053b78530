"""The short version of proofs/two_serves.py (issue 21, item 2) on the
test run's PostgreSQL server: two serves race moves and one of them is
killed; every goal but the recovery time holds (that one, a timing, is
judged in the runs by hand)."""

from __future__ import annotations

import pytest
from sqlalchemy.engine import make_url

from tests.conftest import POSTGRES_URL
from tests.serve_helpers import run_proof

pytestmark = [pytest.mark.db, pytest.mark.slow]


@pytest.mark.skipif(not POSTGRES_URL, reason="two serves share a PostgreSQL database")
def test_two_serves_short_holds_every_goal() -> None:
    server = make_url(POSTGRES_URL).set(database="").render_as_string(hide_password=False).rstrip("/")
    run_proof("two_serves.py", "--short", "--no-latency-goal", "--database", "postgresql", "--postgres", server, timeout=150)
