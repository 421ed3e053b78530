"""What the server says about itself: `list` and `help`, as mailed."""

from __future__ import annotations

import re

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


def test_help_names_no_bots_and_no_move_lists_players_cannot_ask_for(runtime: Runtime) -> None:
    texts = [_one_reply(runtime, "help")]
    games = ("majorities", "majority", "parliament", "plurality", "psychomachia", "synch")
    texts += [_one_reply(runtime, f"{name} help") for name in games]
    for text in texts:
        assert not re.search(r"\bbots?\b", text, re.IGNORECASE)
        assert "list of legal moves" not in text


def test_psychomachia_help_explains_reveal_on_the_own_square_and_a_hidden_completion(runtime: Runtime) -> None:
    text = " ".join(_one_reply(runtime, "psychomachia help").split())
    assert '"reveal,d4" with your stone hidden on d4) reads as "reveal" alone' in text
    assert "rested on their own hidden stone" in text
    assert "your time starts only when they reveal" in text
