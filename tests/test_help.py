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
        # the overview's syntax lines may name an option for the bot ('seek ... [-bot=HOURS]'), no more
        assert not re.search(r"(?<!-)\bbots?\b", text, re.IGNORECASE)
        assert "list of legal moves" not in text


def test_psychomachia_help_explains_reveal_on_the_own_square_and_a_hidden_completion(runtime: Runtime) -> None:
    text = " ".join(_one_reply(runtime, "psychomachia help").split())
    assert '"reveal,d4" with your stone hidden on d4) reads as "reveal" alone' in text
    assert "rested on their own hidden stone" in text
    assert "your time starts only when they reveal" in text


def test_psychomachia_lists_stones_as_its_hidden_stone_leaves_them(runtime: Runtime) -> None:
    text = _one_reply(runtime, "list")
    psychomachia = text[text.index("\npsychomachia ") : text.index("\nsynch ")]
    assert "-stones=N where N is 1..97 (default 40)" in psychomachia
    assert "besides the hidden one" in " ".join(psychomachia.split())
    assert "-hidden" not in psychomachia  # it has no -hidden to name
    majority = text[text.index("\nmajority ") : text.index("\nparliament ")]
    assert "-stones=N where N is 1..98 (default 40)" in majority and "(one less with -hidden)" in " ".join(majority.split())


def test_synch_help_says_a_players_two_halves_in_a_row_fit_one_multiple_mail(runtime: Runtime) -> None:
    text = " ".join(_one_reply(runtime, "synch help").split())
    assert "a player's halves come two in a row" in text
    assert "Put multiple in the Subject and the two commands on lines of their own" in text
    assert "multiple synch move 101 alice secret ne synch move 101 alice secret synch" in text
    assert "The move list shows one line per round" in text
