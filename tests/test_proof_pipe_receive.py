"""The short version of proofs/pipe_receive.py (issue 21, item 7): mails
piped into `pbmserv receive` one by one and in a burst are each processed
once with one answer. Its latency goal is judged in the runs by hand only
(see tests/test_proofs.py)."""

from __future__ import annotations

import pytest

from tests.conftest import POSTGRES_URL
from tests.serve_helpers import proof_postgres_server, run_proof

pytestmark = pytest.mark.slow  # a proof at scale or a real MTA: `tests/run --fast` leaves it out


def prove(*options: str) -> None:
    run_proof("pipe_receive.py", "--short", "--no-latency-goal", *options, timeout=180)


def test_pipe_receive_short_holds_every_goal_on_sqlite() -> None:
    prove("--database", "sqlite")


@pytest.mark.db
@pytest.mark.skipif(not POSTGRES_URL, reason="PBMSERV_TEST_DATABASE_URL names no PostgreSQL server")
def test_pipe_receive_short_holds_every_goal_on_postgresql() -> None:
    prove("--database", "postgresql", "--postgres", proof_postgres_server())
