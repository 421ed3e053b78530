"""The swap test over the web site (issue 37, item 5): the same games are
played by mail on two servers, the same mails in both but for one secret
(alice's bonus square on toy board 103: b3 in run A, c1 in run B; her
hidden stone in Psychomachia; her preferences in Parliament); every
address of the site, crawled from its first page, answers with the same
bytes and the same ETag in both runs until the secret is revealed. As a
control, once the toy game is over (and the move list shows the secret)
the board's record differs, and in the real games the owner's own view of
the two positions differs."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pbmserv.gamekit import get_game
from pbmserv.runtime import Runtime
from pbmserv.store.database import upgrade
from tests.conftest import FakeClock
from tests.leak_pairs import twin_of
from tests.mailtools import send, signup
from tests.test_web import crawl
from tests.web_helpers import PASSWORDS, fetch, running_site

#: moves after the secret ones, the same in both runs (none of them on b3 or c1)
PUBLIC_MOVES = (("alice", "b2"), ("bob", "a1"), ("alice", "c3"))


def _play(runtime: Runtime, secret: str) -> None:
    for userid, password in PASSWORDS.items():
        signup(runtime, userid, password)
    send(runtime, "carol@example.org", "toy challenge carol bob")
    send(runtime, "alice@example.org", "toy challenge -secret alice bob")
    send(runtime, "bob@example.org", "toy move 102 bob secret2 bonus a3")
    send(runtime, "alice@example.org", f"toy move 102 alice secret1 bonus {secret}")
    for userid, square in PUBLIC_MOVES:
        send(runtime, f"{userid}@example.org", f"toy move 102 {userid} {PASSWORDS[userid]} {square}")


def test_no_page_picture_or_json_depends_on_a_secret(runtime: Runtime, tmp_path: Path) -> None:
    template = tmp_path / "template.db"
    upgrade(f"sqlite:///{template}")
    twin = twin_of(runtime, template, tmp_path / "run-b.db", FakeClock())
    try:
        _play(runtime, "b3")
        _play(twin, "c1")
        for server in (runtime, twin):  # the feeds name the site's address: the same for both
            server.settings = replace(server.settings, web_base_url="https://games.example.org")
        with running_site(runtime) as site_a, running_site(twin) as site_b:
            a, b = crawl(site_a), crawl(site_b)
            assert set(a) == set(b) and {"/toy/102", "/toy/102.json?move=2", "/toy/102.png?move=4", "/toy/102.atom", "/toy/102/record"} <= set(a)
            differing = [
                address for address in a
                if (a[address].status, a[address].body, a[address].headers["ETag"])
                != (b[address].status, b[address].body, b[address].headers["ETag"])
            ]
            assert differing == []
            for answers, secret in ((a, "b3"), (b, "c1")):
                assert not any(f"bonus {secret}" in answer.text for answer in answers.values() if answer.media_type != "image/png")
            send(runtime, "alice@example.org", "toy resign 102 alice secret1")
            send(twin, "alice@example.org", "toy resign 102 alice secret1")
            record_a, record_b = fetch(f"{site_a}/toy/102/record"), fetch(f"{site_b}/toy/102/record")
            assert "alice bonus b3" in record_a.text and "alice bonus c1" in record_b.text  # the control: revealed at the end
    finally:
        twin.close()


#: (game, options, alice's secret set-up move in run A, in run B)
SECRET_SETUPS = (
    ("psychomachia", {"size": "6"}, "hide b6", "hide d6"),
    ("parliament", {"boards": "upper"}, "prefer b1", "prefer c1"),
)
PUBLIC_TURNS = 10


def _twin_states(game_word: str, options: dict[str, str], secret_a: str, secret_b: str) -> tuple[Any, Any, list[tuple[int, str]]]:
    """The two positions after alice's two secrets, bob's set-up and as many
    public moves (up to PUBLIC_TURNS) as leave the public drawings of the
    two runs alike; and every move after alice's secret, by seat."""
    game = get_game(game_word)
    players = ["alice", "bob"]
    a = game.play(game.new(options, players), 0, secret_a)
    b = game.play(game.new(options, players), 0, secret_b)
    moves: list[tuple[int, str]] = []
    for _ in range(PUBLIC_TURNS + 1):
        if game.outcome(a) is not None or not game.to_move(a):
            break
        seat = min(game.to_move(a))
        alike = [
            move for move in game.legal_moves(a, seat)
            if move in game.legal_moves(b, seat)
            and game.draw(game.play(a, seat, move), None) == game.draw(game.play(b, seat, move), None)
        ]
        if not alike:
            break
        a, b = game.play(a, seat, alike[0]), game.play(b, seat, alike[0])
        moves.append((seat, alike[0]))
    return a, b, moves


@pytest.mark.parametrize(("game_word", "options", "secret_a", "secret_b"), SECRET_SETUPS)
def test_no_page_of_a_real_game_depends_on_its_secret(
    game_word: str, options: dict[str, str], secret_a: str, secret_b: str, runtime: Runtime, tmp_path: Path,
) -> None:
    game = get_game(game_word)
    a, b, moves = _twin_states(game_word, options, secret_a, secret_b)
    assert len(moves) >= 4, f"only {len(moves)} public moves keep the twins alike"
    assert game.draw(a, 0) != game.draw(b, 0)  # the control: alice's own view tells the runs apart
    template = tmp_path / "template.db"
    upgrade(f"sqlite:///{template}")
    twin = twin_of(runtime, template, tmp_path / "run-b.db", FakeClock())
    try:
        option_words = " ".join(f"-{name}={value}" for name, value in options.items())
        for server, secret in ((runtime, secret_a), (twin, secret_b)):
            for userid in ("alice", "bob"):
                signup(server, userid, PASSWORDS[userid])
            send(server, "alice@example.org", f"{game_word} challenge {option_words} alice bob")
            send(server, "alice@example.org", f"{game_word} move 101 alice secret1 {secret}")
            for seat, move in moves:
                userid = ("alice", "bob")[seat]
                send(server, f"{userid}@example.org", f"{game_word} move 101 {userid} {PASSWORDS[userid]} {move}")
            server.settings = replace(server.settings, web_base_url="https://games.example.org")  # the feeds name it
        with running_site(runtime) as site_a, running_site(twin) as site_b:
            assert json.loads(fetch(f"{site_a}/{game_word}/101.json").text)["move_count"] == 1 + len(moves)
            pages_a, pages_b = crawl(site_a), crawl(site_b)
            assert set(pages_a) == set(pages_b) and f"/{game_word}/101.png" in pages_a
            differing = [
                address for address in pages_a
                if (pages_a[address].status, pages_a[address].body, pages_a[address].headers["ETag"])
                != (pages_b[address].status, pages_b[address].body, pages_b[address].headers["ETag"])
            ]
            assert differing == []
    finally:
        twin.close()
