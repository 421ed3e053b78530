"""The short version of proofs/storage_flood.py (issue 35, item 4, F6):
the flood against a tenth of the rates, on SQLite and PostgreSQL: what
each phase takes is within the rates, the rest is told to try again
later, the growth within its bound, the size limit holds, and after the
retention pass (its clock moved on) the database is back where it began."""

from __future__ import annotations

import pytest

from tests.conftest import POSTGRES_URL
from tests.serve_helpers import proof_postgres_server, run_proof

pytestmark = pytest.mark.slow  # a proof at scale or a real MTA: `tests/run --fast` leaves it out


def prove(*options: str) -> None:
    run_proof("storage_flood.py", "--short", *options, timeout=300)


def test_storage_flood_short_holds_every_goal_on_sqlite() -> None:
    prove("--database", "sqlite")


@pytest.mark.db
@pytest.mark.skipif(not POSTGRES_URL, reason="PBMSERV_TEST_DATABASE_URL names no PostgreSQL server")
def test_storage_flood_short_holds_every_goal_on_postgresql() -> None:
    prove("--database", "postgresql", "--postgres", proof_postgres_server())
