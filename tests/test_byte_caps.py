"""Bytes bounded (issue 35, F5 and item 3): a long move list is cut to fit
and says where the rest is; no mail is longer than MOST_MAIL_CHARS; every
hourly cap on what one address is sent counts bytes as well as mails, and
board mails to one address are capped across all its boards, the mail
that fills a cap saying so."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from sqlalchemy import func, select

from pbmserv.runtime import Runtime
from pbmserv.service.play.views import MOST_LISTED_MOVES
from pbmserv.service.processing.answers import MOST_MAIL_CHARS, within_bounds
from pbmserv.store.models import OutboxMail
from tests.conftest import FakeClock
from tests.long_boards import long_synch_board
from tests.mailtools import body, make_mail, send, send_raw, signup


def limited(runtime: Runtime, **limits: Any) -> FakeClock:
    runtime.processor.settings = replace(runtime.settings, **limits)
    assert isinstance(runtime.clock, FakeClock)
    return runtime.clock


def flat(text: str) -> str:
    return " ".join(text.split())


def listed_numbers(text: str) -> list[int]:
    """The move numbers a board mail's move list shows."""
    listing = text.split("Moves", 1)[1].split("\n\n", 1)[0]
    return [int(number) for number in re.findall(r"(\d+)\. (?:alice|bob) ", listing)]


def test_a_long_move_list_is_cut_and_points_at_the_show_that_lists_the_moves_before(runtime: Runtime) -> None:
    signup(runtime, "alice", "secret1")
    signup(runtime, "bob", "secret2")
    number = long_synch_board(runtime, 700)
    [(_, shown)] = send(runtime, "eve@example.org", f"synch show {number}")
    text = body(shown)
    numbers = listed_numbers(text)
    assert numbers == list(range(numbers[0], 701)) and 700 - MOST_LISTED_MOVES < numbers[0], "the last moves, in order"
    before = numbers[0] - 1
    assert f"Moves (the last {700 - before} of 700; 'synch show {number}#{before}' lists the ones before):" in text
    [(_, earlier)] = send(runtime, "eve@example.org", f"synch show {number}#{before}")
    earlier_numbers = listed_numbers(body(earlier))
    assert earlier_numbers[-1] == before and f"(The position after move {before} of 700.)" in body(earlier)
    assert f"'synch show {number}#{earlier_numbers[0] - 1}' lists the ones before" in body(earlier)
    assert len(text) < 20_000 and len(body(earlier)) < 20_000


def test_a_running_boards_mail_says_that_show_lists_more_not_all_on_a_long_board(runtime: Runtime) -> None:
    signup(runtime, "alice", "secret1")
    signup(runtime, "bob", "secret2")
    number = long_synch_board(runtime, 700)
    [(_, shown)] = send(runtime, "eve@example.org", "synch show alice active")
    assert f"of 700; 'show {number}' lists more):" in body(shown)


def test_no_mail_is_longer_than_the_bound_and_a_cut_one_says_so() -> None:
    line = "x" * 71
    text = "\n".join([line] * 2000) + "\n"
    cut = within_bounds(text)
    assert len(cut) <= MOST_MAIL_CHARS
    kept = cut.count(line + "\n")
    assert flat(cut[cut.index("[..."):]) == (
        f"[... {2000 - kept} more lines left out: a mail from this server holds at most {MOST_MAIL_CHARS:,} characters.]"
    )
    assert within_bounds("short\n") == "short\n"
    one_line = within_bounds("y" * 100_000)
    assert len(one_line) <= MOST_MAIL_CHARS and "[... 1 more line left out" in one_line


def outbox_to(runtime: Runtime, recipient: str, *kinds: str) -> tuple[int, int]:
    """The mails queued for `recipient` (of `kinds`, if given), and their bytes."""
    query = select(func.count(OutboxMail.id), func.sum(func.length(OutboxMail.raw))).where(OutboxMail.recipient == recipient)
    if kinds:
        query = query.where(OutboxMail.kind.in_(kinds))
    with runtime.engine.connect() as connection:
        mails, size = connection.execute(query).one()
    return int(mails), int(size or 0)


def test_a_forged_reply_to_gets_no_more_bytes_than_the_hourly_budget(runtime: Runtime) -> None:
    """F5: four short mails naming a victim in Reply-To, each asking for ten
    long boards. Their answers stop at the victim's byte budget, and the
    one that reaches it says so."""
    signup(runtime, "alice", "secret1")
    signup(runtime, "bob", "secret2")
    number = long_synch_board(runtime, 700)
    budget = runtime.settings.reply_bytes_per_hour
    answers = []
    for first in range(0, 40, 10):
        lines = [f"synch show {number}#{400 + first + k}" for k in range(10)]
        raw = make_mail("forger@example.net", "multiple", "\n".join(lines) + "\n", headers={"Reply-To": "victim@example.com"})
        answers += send_raw(runtime, raw)
    mails, size = outbox_to(runtime, "victim@example.com")
    assert mails == len(answers) < 30, "fewer than the 30 answers an hour the count allows"
    assert budget <= size < budget + MOST_MAIL_CHARS + 4_000, "the budget, and the mail that reached it"
    *before, (_, last) = answers
    assert not any("paused" in body(message) for _, message in before)
    assert flat(body(last)).startswith(
        f"Replies to this address are paused until 2026-01-05 10:00 UTC: the server sends one address at most "
        f"{budget:,} bytes of replies an hour, and this is the last of them."
    )


def test_board_mails_to_one_address_stop_at_the_hourly_cap_across_its_boards_and_go_on_after(toy_boards: Runtime) -> None:
    clock = limited(toy_boards, board_mails_per_hour=6)
    clock.advance(minutes=1)  # the board mails of the fixture's boards are older than the test's
    mails_before, _ = outbox_to(toy_boards, "bob@example.org", "board")
    assert mails_before < 6
    to_bob: list[str] = []
    for sender, move in [
        ("alice", "toy challenge alice bob"), ("alice", "toy move 103 alice secret1 a1"), ("bob", "toy move 103 bob secret2 a2"),
        ("alice", "toy move 103 alice secret1 b1"), ("bob", "toy move 101 bob secret2 a1"), ("alice", "toy move 101 alice secret1 c1"),
    ]:
        replies = send(toy_boards, f"{sender}@example.org", move)
        to_bob += [body(message) for recipient, message in replies if recipient == "bob@example.org"]
        clock.advance(minutes=1)
    mails, _ = outbox_to(toy_boards, "bob@example.org", "board")
    assert mails == 6 and len(to_bob) == 6 - mails_before
    assert not any("paused" in text for text in to_bob[:-1])
    notice = flat(to_bob[-1])
    assert notice.startswith("Board mails to this address are paused until 2026-01-05 10:00 UTC: the server sends one "
                             "address at most 6 board mails an hour, and this is the last of them.")
    assert "'GAME show N' shows a board as it stands." in notice
    [(_, shown)] = send(toy_boards, "eve@example.org", "toy show 101")
    assert "last move c1" in body(shown), "the moves were made"
    clock.advance(hours=1)
    replies = send(toy_boards, "bob@example.org", "toy move 101 bob secret2 b1")
    assert "bob@example.org" in [recipient for recipient, _ in replies], "an hour on, board mails go again"


def test_the_board_cap_holds_for_mail_another_process_wrote(toy_boards: Runtime) -> None:
    """The worker counts an address it has no recent tally of in the
    database: what another process (a `receive` before this `serve`) sent
    it in the hour counts."""
    mails_before, _ = outbox_to(toy_boards, "bob@example.org", "board")
    limited(toy_boards, board_mails_per_hour=mails_before + 2)
    other = Runtime(toy_boards.processor.settings, catalog=toy_boards.catalog, clock=toy_boards.clock, backend=toy_boards.backend)
    try:
        for sender, move in [
            ("bob", "toy move 101 bob secret2 a1"), ("alice", "toy move 101 alice secret1 c1"), ("bob", "toy move 101 bob secret2 b1"),
        ]:
            send(other, f"{sender}@example.org", move)
    finally:
        other.close()
    mails, _ = outbox_to(toy_boards, "bob@example.org", "board")
    assert mails == mails_before + 2
