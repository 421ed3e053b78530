"""The board page kept by its facts (`boards.PageFacts`, `caching.Bodies`)
is never stale: each fact it shows that can change — the time as it
moves the deadline, a reminder, a vacation, a rating that another board
changes, a move — gives a new page under a new ETag, the old ETag gets
no 304, and the page a site that has kept bodies all along answers is
byte for byte the one a site just started makes."""

from __future__ import annotations

import re
from collections.abc import Callable

from pbmserv.runtime import Runtime
from tests.conftest import FakeClock
from tests.mailtools import send
from tests.web_helpers import fetch, play_boards, running_site

PAGE = "/toy/101"


def ratings(page: str) -> list[str]:
    return re.findall(r'</td><td>[XO]</td><td class="number">(\d+)</td>', page)


def test_each_fact_the_board_page_shows_makes_a_new_page(runtime: Runtime, clock: FakeClock) -> None:
    play_boards(runtime)

    def won_by_bob() -> None:  # another board, whose end changes alice's and bob's ratings
        send(runtime, "alice@example.org", "toy challenge alice bob")
        for player, password, square in (("alice", "secret1", "a1"), ("bob", "secret2", "b1"), ("alice", "secret1", "c3"),
                                         ("bob", "secret2", "b2"), ("alice", "secret1", "a2"), ("bob", "secret2", "b3")):
            send(runtime, f"{player}@example.org", f"toy move 105 {player} {password} {square}")

    def back_in_two_days() -> None:  # which the forfeit waits
        clock.advance(days=2)
        send(runtime, "alice@example.org", "vacation alice secret1 off")

    changes: list[tuple[str, Callable[[], object], str]] = [
        ("eight days on: the reminder is due now", lambda: clock.advance(days=8),
         "alice: reminder 2026-01-13 09:00 UTC; without a move the game is forfeited 2026-01-26 09:00 UTC."),
        ("a minute later, still due now", lambda: clock.advance(minutes=1), "alice: reminder 2026-01-13 09:01 UTC;"),
        ("the timer pass reminds alice", runtime.processor.run_timers, "alice: reminder 2026-01-20 09:01 UTC;"),
        ("alice goes on vacation", lambda: send(runtime, "alice@example.org", "vacation alice secret1 on"),
         "alice is on vacation: reminders and the forfeit wait"),
        ("two days later alice comes back", back_in_two_days, "the game is forfeited 2026-01-28 09:00 UTC."),
        ("another board ends", won_by_bob, "ratings"),
        ("alice moves", lambda: send(runtime, "alice@example.org", "toy move 101 alice secret1 c3"), "It is bob&#39;s turn."),
    ]
    with running_site(runtime) as site:
        first = fetch(site + PAGE)
        etags, bodies = [first.headers["ETag"]], [first.body]
        clock.advance(seconds=30)  # within the minute: the same page, kept
        again = fetch(site + PAGE)
        assert (again.body, again.headers["ETag"]) == (first.body, etags[0])
        for what, change, shown in changes:
            change()
            answer = fetch(site + PAGE)
            print(what, re.findall(r"<li>.*?</li>", answer.text)[:1])
            assert answer.status == 200 and (shown in answer.text or ratings(answer.text) != ratings(bodies[-1].decode())), what
            assert answer.headers["ETag"] not in etags and answer.body not in bodies, what
            assert fetch(site + PAGE, If_None_Match=etags[-1]).status == 200, what
            assert fetch(site + PAGE, If_None_Match=answer.headers["ETag"]).status == 304, what
            with running_site(runtime) as fresh:
                assert fetch(fresh + PAGE).body == answer.body, what
            etags.append(answer.headers["ETag"])
            bodies.append(answer.body)
        assert ratings(bodies[-2].decode()) != ratings(bodies[-3].decode())  # the other board's end showed
