"""Every file in tests/transcripts/ replays to exactly the mails it shows."""

from __future__ import annotations

import difflib
import os
from dataclasses import replace
from pathlib import Path

import pytest

from pbmserv.gamekit import get_game
from pbmserv.runtime import Runtime
from pbmserv.service.processing.catalog import Catalog
from tests.toygame import Toy
from tests.transcript import read, replay

TRANSCRIPTS = sorted((Path(__file__).parent / "transcripts").glob("*.txt"))
REGENERATE = os.environ.get("PBMSERV_REGENERATE") == "1"


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=[p.stem for p in TRANSCRIPTS])
def test_transcript(path: Path, runtime: Runtime) -> None:
    expected = path.read_text(encoding="utf-8")
    transcript = read(expected)
    runtime.processor.catalog = Catalog([Toy(), *(get_game(name) for name in transcript.games)])
    runtime.processor.settings = replace(runtime.processor.settings, admins=tuple(transcript.admins), **transcript.limits)
    actual = replay(transcript, runtime)
    if actual == expected:
        return
    diff = "".join(difflib.unified_diff(
        expected.splitlines(keepends=True), actual.splitlines(keepends=True),
        fromfile=f"{path.name} (expected)", tofile=f"{path.name} (actual)",
    ))
    if REGENERATE:
        path.write_text(actual, encoding="utf-8")
        print(f"rewrote {path.name}:\n{diff}")
        return
    pytest.fail(f"transcript {path.name} differs (PBMSERV_REGENERATE=1 rewrites it):\n{diff}")
