"""The web site (issue 37, items 4 and 5): every address answers with the
facts of the boards that real mail made, as the public may see them, with
its content type, ETag and security headers; unknown things are plain
404s; and crawling the whole site changes nothing in the database."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ElementTree
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import pytest
from sqlalchemy import create_engine, select, text
from sqlalchemy.exc import DBAPIError

from pbmserv.runtime import Runtime
from pbmserv.store import records
from pbmserv.store.database import make_engine, reading
from pbmserv.store.models import Base
from pbmserv.web.app import CONTENT_SECURITY_POLICY
from tests.mailtools import send
from tests.web_helpers import Answer, fetch, play_boards, running_site

ATOM = "{http://www.w3.org/2005/Atom}"


def test_the_pages_show_the_boards(runtime: Runtime) -> None:
    play_boards(runtime)
    with running_site(runtime) as site:
        first = fetch(f"{site}/")
        assert (first.status, first.media_type) == (200, "text/html")
        assert all(f'href="/{game}"' in first.text for game in ("toy", "majorities", "synch"))
        assert 'href="/toy/101">Toy 101</a>' in first.text and 'href="/toy/102">Toy 102</a>' in first.text
        assert "won by alice" in first.text and "won by bob" in first.text  # the recent results

        board = fetch(f"{site}/toy/101")
        assert (board.status, board.media_type) == (200, "text/html")
        assert "It is alice&#39;s turn." in board.text
        assert '<img src="/toy/101.svg" alt="Toy, 3x3: alice (X) against bob (O)">' in board.text
        assert "alice: reminder 2026-01-12 09:00 UTC; without a move the game is forfeited 2026-01-26 09:00 UTC." in board.text
        assert '<a href="/toy/101?move=1">alice b2</a>' in board.text and '<a href="/toy/101?move=2">bob a1</a>' in board.text
        assert '<a href="/players/alice">alice</a></td><td>X</td>' in board.text
        assert '<a href="/toy/101?move=1" rel="prev">' in board.text and '<span>Next</span>' in board.text

        earlier = fetch(f"{site}/toy/101?move=1")
        assert "It is bob&#39;s turn." in earlier.text and "The position after move 1 of 2." in earlier.text
        assert '<img src="/toy/101.svg?move=1"' in earlier.text
        for link in ('href="/toy/101?move=0" rel="first"', 'href="/toy/101?move=0" rel="prev"',
                     'href="/toy/101?move=2" rel="next"', 'href="/toy/101" rel="last"'):
            assert link in earlier.text
        assert "reminder" not in earlier.text  # the deadline belongs to the position now

        rated = fetch(f"{site}/toy/104")
        assert "Game won by alice: three in a row." in rated.text and "<td>yes</td>" not in rated.text
        assert re.search(r'<a href="/players/bob">bob</a></td><td>O</td><td class="number">\d+</td>', rated.text)

        standings = fetch(f"{site}/toy/standings")
        assert standings.status == 200 and standings.text.index(">alice<") < standings.text.index(">bob<")
        rules = fetch(f"{site}/toy/rules")
        assert "Noughts and crosses for testing." in rules.text
        assert rules.text.count('<img src="data:image/svg+xml;base64,') == 2 and "After 6 moves" in rules.text

        player = fetch(f"{site}/players/alice")
        assert player.status == 200 and 'href="/toy/104">Toy 104</a>' in player.text and 'href="/toy/standings">Toy</a>' in player.text
        assert "@example.org" not in player.text


def test_the_board_in_other_forms(runtime: Runtime) -> None:
    play_boards(runtime)
    with running_site(runtime) as site:
        svg, earlier_svg = fetch(f"{site}/toy/101.svg"), fetch(f"{site}/toy/101.svg?move=1")
        assert svg.media_type == "image/svg+xml" and svg.text.startswith("<?xml") and "<svg" in svg.text
        assert svg.body != earlier_svg.body and svg.headers["ETag"] != earlier_svg.headers["ETag"]
        png = fetch(f"{site}/toy/101.png?move=1")
        assert png.media_type == "image/png" and png.body.startswith(b"\x89PNG\r\n\x1a\n")

        state = json.loads(fetch(f"{site}/toy/101.json").text)
        assert state["players"] == [{"userid": "alice", "side": "X"}, {"userid": "bob", "side": "O"}]
        assert (state["to_move"], state["move_count"], state["result"]) == (["alice"], 2, None)
        assert [(m["number"], m["player"], m["text"]) for m in state["moves"]] == [(1, "alice", "b2"), (2, "bob", "a1")]
        assert "X = alice, O = bob; last move a1" in state["board_text"] and state["drawing"]["last_move"] == "a1"
        assert set(state) == {
            "game", "title", "board", "status", "players", "move_count", "at", "to_move", "result", "moves", "board_text", "drawing",
        }
        assert json.loads(fetch(f"{site}/toy/101.json?move=1").text)["to_move"] == ["bob"]
        assert json.loads(fetch(f"{site}/toy/104.json").text)["result"] == {"winners": ["alice"], "reason": "three in a row", "scores": None}

        record = fetch(f"{site}/toy/101/record")
        assert record.media_type == "text/plain" and "   2. 2026-01-05 09:00  bob a1" in record.text

        feed = fetch(f"{site}/toy/101.atom")
        assert feed.media_type == "application/atom+xml"
        entries = ElementTree.fromstring(feed.body).findall(f"{ATOM}entry")
        assert [entry.findtext(f"{ATOM}title") for entry in entries] == ["2. bob a1", "1. alice b2"]
        player_feed = ElementTree.fromstring(fetch(f"{site}/players/bob.atom").body)
        assert len(player_feed.findall(f"{ATOM}entry")) == 4


def test_a_secret_move_is_secret_everywhere_until_the_end(runtime: Runtime) -> None:
    play_boards(runtime)
    with running_site(runtime) as site:
        for address in ("/toy/103", "/toy/103.json", "/toy/103/record", "/toy/103.atom"):
            answer = fetch(site + address)
            assert "(secret)" in answer.text and "b3" not in answer.text and "bonus" not in answer.text, address


def test_headers_etags_and_head(runtime: Runtime) -> None:
    play_boards(runtime)
    with running_site(runtime) as site:
        for address in ("/", "/toy/101", "/toy/101.svg", "/toy/101.json", "/nope", "/static/site.css"):
            answer = fetch(site + address)
            assert answer.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY, address
            assert answer.headers["X-Content-Type-Options"] == "nosniff" and answer.headers["Referrer-Policy"] == "no-referrer"
        assert "default-src 'none'" in CONTENT_SECURITY_POLICY and "script-src" not in CONTENT_SECURITY_POLICY
        for address in ("/toy/101", "/toy/101.svg", "/toy/101.png?move=1", "/toy/101.json", "/toy/101/record", "/toy/101.atom", "/toy/standings"):
            first = fetch(site + address)
            etag = first.headers["ETag"]
            assert first.status == 200 and etag and first.headers["Cache-Control"] == "public, no-cache"
            again = fetch(site + address, If_None_Match=etag)
            assert (again.status, again.body, again.headers["ETag"]) == (304, b"", etag), address
            assert fetch(site + address, If_None_Match='"something-else"').status == 200
        before = fetch(f"{site}/toy/101.svg").headers["ETag"]
        head = fetch(f"{site}/toy/101", method="HEAD")
        assert (head.status, head.body, head.media_type) == (200, b"", "text/html")
        send(runtime, "alice@example.org", "toy move 101 alice secret1 c3")
        assert fetch(f"{site}/toy/101.svg", If_None_Match=before).status == 200  # a move makes a new picture


def test_unknown_things_are_plain_404s(runtime: Runtime) -> None:
    play_boards(runtime)
    with running_site(runtime) as site:
        for address, says in (
            ("/chess", "no game called &#39;chess&#39;"), ("/toy/999", "There is no Toy board 999."),
            ("/toy/999.svg", "There is no Toy board 999."), ("/toy/101?move=7", "no position after move 7"),
            ("/toy/101.json?move=x", "?move=x is not a position"), ("/players/zed", "no player with the userid &#39;zed&#39;"),
            ("/players/zed.atom", "no player"), ("/chess/standings", "no game"), ("/a/b/c/d", "no page at this address"),
        ):
            answer = fetch(site + address)
            assert (answer.status, answer.media_type) == (404, "text/html"), address
            assert says in answer.text, (address, answer.text)


def test_hostile_text_is_escaped(runtime: Runtime) -> None:
    """A userid or option that holds markup (no command lets one in: the store is written to directly)."""
    play_boards(runtime)
    hostile = '<script>alert("x")</script>'
    with runtime.engine.begin() as connection:
        record = records.find_board(connection, "toy", 101)
        assert record is not None
        records.insert_board(
            connection, game_type="toy", board=201, options={"size": hostile}, timers=record.timers, seats=[hostile, "bob"],
            state=record.state, move_count=0, status="active", result=None, created_at=record.created_at,
            updated_at=record.updated_at,
        )
    with running_site(runtime) as site:
        for address in ("/", "/toy", "/toy/201", "/toy/201/record", "/toy/201.atom", "/toy/201.json", "/toy/201.svg"):
            answer = fetch(site + address)
            assert answer.status == 200, address
            if answer.media_type in ("text/html", "application/atom+xml"):
                assert "<script" not in answer.text and "&lt;script&gt;" in answer.text, address
            elif answer.media_type == "image/svg+xml":  # its players are the state's (the pictures escape them too)
                assert "<script" not in answer.text
            elif answer.media_type == "application/json":
                assert json.loads(answer.text)["players"][0]["userid"] == hostile


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found += [value for name, value in attrs if name in ("href", "src") and value and not value.startswith("data:")]


def crawl(site: str) -> dict[str, Answer]:
    """Every page the first page leads to on the site, and every picture, feed and record they link."""
    seen: dict[str, Answer] = {}
    waiting = ["/"]
    while waiting:
        address = waiting.pop()
        if address in seen:
            continue
        seen[address] = answer = fetch(site + address)
        if answer.media_type == "text/html":
            links = _Links()
            links.feed(answer.text)
            for link in links.found:
                parts = urlsplit(urljoin(site + address, link))
                if f"{parts.scheme}://{parts.netloc}" == site:
                    waiting.append(parts.path + (f"?{parts.query}" if parts.query else ""))
    return seen


def _content(url: str) -> dict[str, list[tuple[object, ...]]]:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return {
                table.name: sorted((tuple(map(repr, row)) for row in connection.execute(select(table))), key=repr)
                for table in Base.metadata.sorted_tables
            }
    finally:
        engine.dispose()


def test_crawling_the_whole_site_changes_nothing(runtime: Runtime) -> None:
    play_boards(runtime)
    before = _content(runtime.settings.database_url)
    with running_site(runtime) as site:
        answers = crawl(site)
    assert _content(runtime.settings.database_url) == before
    assert len(answers) > 40 and all(a.status == 200 for a in answers.values()), [(k, a.status) for k, a in answers.items() if a.status != 200]
    assert {
        "/toy/104?move=3", "/toy/101.png", "/toy/103.json", "/players/bob.atom", "/toy/rules", "/majorities/rules", "/static/site.css",
    } <= set(answers)
    assert not any("@example.org" in a.text or "secret1" in a.text for a in answers.values() if a.media_type != "image/png")


def test_the_site_cannot_write(runtime: Runtime) -> None:
    """Its engine is read-only in the database itself (SQLite's query_only, PostgreSQL's read-only transactions)."""
    engine = make_engine(runtime.settings.database_url, read_only=True)
    try:
        with pytest.raises(DBAPIError), reading(engine) as connection:
            connection.execute(text("DELETE FROM users"))
    finally:
        engine.dispose()
