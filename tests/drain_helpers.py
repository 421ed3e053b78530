"""Waiting for the drainers that `pbmserv receive` starts in the background."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pbmserv.drainer import DrainLock

PBMSERV = [sys.executable, "-m", "pbmserv"]


def drain_after_drainers(lock_file: Path, env: dict[str, str], cwd: Path) -> None:
    """Wait until no drainer runs, then drain what is left holding its lock,
    so that every mail stored so far is processed when this returns."""
    lock = DrainLock.at(lock_file)
    try:
        lock.take(wait=True)
        subprocess.run(
            [*PBMSERV, "drain", "--lock-fd", str(lock.descriptor)], pass_fds=(lock.descriptor,),
            env=env, cwd=cwd, check=True, timeout=120, capture_output=True,
        )
    finally:
        lock.close()
