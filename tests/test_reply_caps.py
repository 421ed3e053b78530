"""Never silent (issue 19): the answer that reaches an hourly cap on what
one address is sent says that replies are paused, until when, and what
still works; the answers after it are not sent until then."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

from sqlalchemy import select

from pbmserv.mail.backends import MemoryBackend
from pbmserv.runtime import Runtime
from pbmserv.store.models import InboundMail
from tests.conftest import START, FakeClock
from tests.mailtools import body, make_mail, send, send_raw
from tests.test_flood_fairness import bobs_reply_address

PAUSED = "Replies to this address are paused until"


def limited(runtime: Runtime, **limits: Any) -> FakeClock:
    runtime.processor.settings = replace(runtime.settings, **limits)
    assert isinstance(runtime.clock, FakeClock)
    return runtime.clock


def last_error(runtime: Runtime) -> str:
    with runtime.sessions() as session:
        last = session.scalars(select(InboundMail).order_by(InboundMail.id.desc())).first()
        assert last is not None
        return last.error


def flat(text: str) -> str:
    return " ".join(text.split())


def test_the_answer_that_reaches_the_cap_says_until_when_and_the_next_ones_stay_silent(runtime: Runtime) -> None:
    clock = limited(runtime, replies_per_hour=3, error_replies_per_hour=100)
    clock.advance(seconds=30)  # the oldest answer counted: 09:00:30, so answers go again at 10:00:30
    [(_, first)] = send(runtime, "loop@example.org", "help")
    clock.advance(minutes=10)
    [(_, second)] = send(runtime, "loop@example.org", "nonsense")
    assert "paused" not in body(first) + body(second)
    clock.advance(minutes=10)
    [(recipient, third)] = send(runtime, "loop@example.org", "help")
    assert recipient == "loop@example.org"
    text = flat(body(third))
    assert text.startswith(
        f"{PAUSED} 2026-01-05 10:01 UTC: the server sends one address at most 3 replies an hour, and this is the last of them."
    ), "the minute it may go again, rounded up, never one before"
    assert "board mails still go to you and to your opponents" in text
    assert "is answered within as many again. pbmserv plays board games by mail." in text, "the answer itself follows the notice"
    for minutes in (1, 10, 39):
        clock.now = START + timedelta(minutes=20 + minutes, seconds=30)
        assert send(runtime, "loop@example.org", "help") == [], "silent after the last one"
        assert send(runtime, "loop@example.org", "nonsense") == []
        assert last_error(runtime) == "1 mail(s) not sent: loop@example.org reached the hourly cap"
    clock.now = START + timedelta(hours=1, seconds=29)
    assert send(runtime, "loop@example.org", "help") == []
    clock.now = START + timedelta(hours=1, seconds=30)
    [(_, again)] = send(runtime, "loop@example.org", "help")
    assert PAUSED in flat(body(again)), "the one that goes fills the cap again, and says so"


def test_moves_and_board_mails_go_on_while_replies_are_paused(toy_boards: Runtime) -> None:
    limited(toy_boards, replies_per_hour=2)  # bob's signup was answered: one more
    [(_, notice)] = send(toy_boards, "bob@example.org", "nonsense")
    assert flat(body(notice)).startswith(PAUSED)
    replies = send(toy_boards, "bob@example.org", "toy move 101 bob secret2 a1")
    assert sorted(recipient for recipient, _ in replies) == ["alice@example.org", "bob@example.org"]
    assert all("last move a1" in body(message) for _, message in replies), "the move was made"
    assert send(toy_boards, "bob@example.org", "toy show 101") == [], "mail that proves nothing is not answered"
    assert send(toy_boards, "bob@example.org", "nonsense") == [], "a refusal is silent too"


def test_mail_forged_from_an_address_cannot_spend_the_answers_its_owner_asks_for(toy_boards: Runtime) -> None:
    """Answers to mail with the account's password, or to its reply address, have an allowance of their own."""
    limited(toy_boards, replies_per_hour=2, asked_replies_per_hour=2)
    for _ in range(3):  # a forger spends bob's answers
        send(toy_boards, "bob@example.org", "toy show 101")
    assert send(toy_boards, "bob@example.org", "toy show 101") == []
    [(to, refused)] = send(toy_boards, "bob@example.org", "toy move 101 bob secret2 c3 #5")
    assert to == "bob@example.org" and "Toy Board 101 Error" in str(refused["Subject"])
    [(_, shown)] = send_raw(toy_boards, make_mail("bob@example.org", "Re: Toy Board 101", "show\n"),
                            "bob@example.org", bobs_reply_address(toy_boards))
    assert "Replies to your own mail to this address are paused until" in flat(body(shown)), "the last of the allowance says so"
    assert send(toy_boards, "bob@example.org", "toy move 101 bob secret2 c3 #5") == [], "the owner's allowance is bounded too"


def test_the_answers_of_one_batch_count_and_the_last_before_the_cap_says_so(runtime: Runtime) -> None:
    limited(runtime, replies_per_hour=2)
    for _ in range(3):
        runtime.intake.store(make_mail("loop@example.org", "help"))
    runtime.processor.process_pending()
    runtime.delivery.deliver_due()
    assert isinstance(runtime.backend, MemoryBackend)
    sent = [data.decode() for _, data in runtime.backend.sent]
    assert len(sent) == 2
    assert PAUSED not in sent[0]
    assert f"{PAUSED} 2026-01-05 10:00 UTC" in flat(sent[1]), "counted from the batch's own first answer"


def test_only_error_mails_pause_when_their_own_cap_fills(runtime: Runtime) -> None:
    limited(runtime, replies_per_hour=30, error_replies_per_hour=1)
    [(_, error)] = send(runtime, "loop@example.org", "nonsense")
    text = flat(body(error))
    assert text.startswith("Error replies to this address are paused until 2026-01-05 10:00 UTC")
    assert "a command that is refused gets no error mail" in text
    assert send(runtime, "loop@example.org", "nonsense") == []
    [(_, answer)] = send(runtime, "loop@example.org", "help")
    assert "paused" not in body(answer), "other answers still go"


def test_relayed_mail_that_reaches_its_cap_carries_no_notice(toy_boards: Runtime) -> None:
    limited(toy_boards, relays_per_hour=1)
    replies = send(toy_boards, "alice@example.org", "message alice secret1 bob", "hello")
    to_bob = [body(message) for recipient, message in replies if recipient == "bob@example.org"]
    assert to_bob and "paused" not in to_bob[0], "bob did not write; nothing of his is paused"


def test_the_owners_allowance_is_its_own_setting_and_far_larger(toy_boards: Runtime) -> None:
    """Real play asks for much more than a stranger may be sent: the
    allowance of answers to the owner's own mail is `asked_replies_per_hour`
    (600 by default), not `replies_per_hour`."""
    limited(toy_boards, replies_per_hour=2)
    shown = [send(toy_boards, "bob@example.org", "toy moves 101 bob secret2") for _ in range(5)]
    assert [len(replies) for replies in shown] == [1] * 5
    assert not any("paused" in body(message) for replies in shown for _, message in replies)
    assert toy_boards.settings.asked_replies_per_hour == 600
