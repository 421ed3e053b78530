"""The short version of proofs/bot_fairness.py (issue 35, item 5): one
account's strong-bot boards, answered at once, against another player's
easy-bot game, through a real `serve`. Every goal but the latency, which is
judged in the runs by hand (see tests/test_proofs.py)."""

from __future__ import annotations

import pytest

from tests.conftest import POSTGRES_URL
from tests.serve_helpers import proof_postgres_server, run_proof

pytestmark = pytest.mark.slow  # a proof at scale or a real MTA: `tests/run --fast` leaves it out


def prove(*options: str) -> None:
    run_proof("bot_fairness.py", "--short", "--no-latency-goal", *options, timeout=300)


def test_bot_fairness_short_holds_every_goal_on_sqlite() -> None:
    prove("--database", "sqlite")


@pytest.mark.db
@pytest.mark.skipif(not POSTGRES_URL, reason="PBMSERV_TEST_DATABASE_URL names no PostgreSQL server")
def test_bot_fairness_short_holds_every_goal_on_postgresql() -> None:
    prove("--database", "postgresql", "--postgres", proof_postgres_server())
