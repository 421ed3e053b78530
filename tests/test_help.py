"""What the server says about itself: `list` and `help`, as mailed."""

from __future__ import annotations

from pbmserv.runtime import Runtime
from tests.mailtools import body, send


def _one_reply(runtime: Runtime, subject: str) -> str:
    [(_, message)] = send(runtime, "newcomer@example.org", subject)
    return body(message)


def test_the_games_list_keeps_every_line_within_72_columns(runtime: Runtime) -> None:
    text = _one_reply(runtime, "list")
    for name in ("majorities", "majority", "parliament", "plurality", "psychomachia", "synch"):
        assert f"\n{name} " in text
    assert "four fifths" in text and "-order=mode-first|direction-first" in text
    assert max(len(line) for line in text.splitlines()) <= 72
    # descriptions stay under their option, indented the same everywhere
    assert "\n          stones each player places" in text
