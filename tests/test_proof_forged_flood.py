"""The short version of proofs/forged_flood.py (issue 35, item 2, F1, F2
and F4): strangers and forgers flooding the costliest commands while two
players play, one by reply address and one by password, through a real
`serve` on SQLite and PostgreSQL. Every goal but the latency, which is
judged in the runs by hand (see tests/test_proofs.py)."""

from __future__ import annotations

import pytest

from tests.conftest import POSTGRES_URL
from tests.serve_helpers import proof_postgres_server, run_proof

pytestmark = pytest.mark.slow  # a proof at scale or a real MTA: `tests/run --fast` leaves it out


def prove(*options: str) -> None:
    run_proof("forged_flood.py", "--short", "--no-latency-goal", *options, timeout=300)


def test_forged_flood_short_holds_every_goal_on_sqlite() -> None:
    prove("--database", "sqlite")


@pytest.mark.db
@pytest.mark.skipif(not POSTGRES_URL, reason="PBMSERV_TEST_DATABASE_URL names no PostgreSQL server")
def test_forged_flood_short_holds_every_goal_on_postgresql() -> None:
    prove("--database", "postgresql", "--postgres", proof_postgres_server())
