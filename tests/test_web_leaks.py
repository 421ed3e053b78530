"""The swap test over the web site (issue 37, item 5): the same games are
played by mail on two servers, the same mails in both but for one secret
(alice's bonus square on toy board 103: b3 in run A, c1 in run B); every
address of the site, crawled from its first page, answers with the same
bytes and the same ETag in both runs until the secret is revealed. As a
control, once the game is over (and the move list shows the secret) the
board's record differs."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

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
