"""The short crash soak (proofs/crash_soak.py): serve, its worker and its
deliverer SIGKILLed under a stream of moves lose nothing, apply nothing
twice and deliver every reply; the times after the restart are judged in
the runs by hand (--no-time-goal), as the machine's load decides them here."""

from __future__ import annotations

import pytest

from tests.conftest import POSTGRES_URL
from tests.serve_helpers import run_proof

pytestmark = pytest.mark.slow  # a proof at scale or a real MTA: `tests/run --fast` leaves it out


def run_short(*options: str) -> None:
    run_proof("crash_soak.py", "--short", "--no-time-goal", *options, timeout=180)


def test_crash_soak_short_holds_every_goal(database_url: str) -> None:
    """On the suite's database: SQLite, or in the PostgreSQL half a database of its own on that server."""
    if database_url.startswith("sqlite"):
        run_short("--database", "sqlite")
    else:
        server = POSTGRES_URL.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://", 1)
        run_short("--database", "postgresql", "--postgresql", server)
