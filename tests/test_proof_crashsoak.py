"""The short crash soak (proofs/crash_soak.py): serve, its worker and its
deliverer SIGKILLed under a stream of moves lose nothing, apply nothing
twice and deliver every reply; the times after the restart are judged in
the runs by hand (--no-time-goal), as the machine's load decides them here."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import POSTGRES_URL
from tests.serve_helpers import REPO


def run_short(*options: str) -> None:
    proof = subprocess.run(
        [sys.executable, REPO / "proofs" / "crash_soak.py", "--short", "--no-time-goal", *options],
        capture_output=True, timeout=180, cwd=REPO,
    )
    report = proof.stdout.decode(errors="replace")
    assert proof.returncode == 0, report + proof.stderr.decode(errors="replace")[-2000:]
    assert report.splitlines()[-1].endswith("every goal holds")


def test_crash_soak_short_holds_every_goal(database_url: str) -> None:
    """On the suite's database: SQLite, or in the PostgreSQL half a database of its own on that server."""
    if database_url.startswith("sqlite"):
        run_short("--database", "sqlite")
    else:
        server = POSTGRES_URL.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://", 1)
        run_short("--database", "postgresql", "--postgresql", server)
