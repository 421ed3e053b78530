"""Notifications as the player wants (issue 38, item 4;
docs/decisions/0153-notifications.md): the modes of the board mails, per
player and per board, and the daily digest, one a day in the player's
own day, however often the timer pass runs."""

from __future__ import annotations

import re
from collections import Counter
from datetime import UTC
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from zoneinfo import ZoneInfo

import pytest
from alembic import command
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import create_engine, func, inspect, select

from pbmserv.mail.backends import MemoryBackend
from pbmserv.protocol import ParseError, parse_command, probable_passwords
from pbmserv.protocol.commands import BoardNotifications, Notifications
from pbmserv.runtime import Runtime
from pbmserv.service.timers import digests
from pbmserv.store.database import alembic_config
from pbmserv.store.models import BoardNotification
from tests.conftest import FakeClock
from tests.mailtools import body, send, signup
from tests.test_bots import bot_turns


def timer_pass(runtime: Runtime) -> list[tuple[str, EmailMessage]]:
    """One pass of the timers (`pbmserv-admin cleanup`); the mails it sent."""
    backend = runtime.backend
    assert isinstance(backend, MemoryBackend)
    backend.sent.clear()
    runtime.processor.run_timers()
    runtime.delivery.deliver_due()
    parser = BytesParser(policy=policy.default)
    return [(to, parser.parsebytes(raw)) for to, raw in backend.sent]


def recipients(mails: list[tuple[str, EmailMessage]]) -> list[str]:
    return sorted(to for to, _ in mails)


@pytest.mark.parametrize(
    ("text", "passwords"),
    [
        ("notifications alice s3cret often", ("alice", "s3cret", "often")),
        ("notifications alice s3cret digest 24", ("alice", "s3cret", "digest", "24")),
        ("toy notifications 101 alice s3cret sometimes", ("alice", "s3cret", "sometimes")),
        ("toy notifications 101 alice", ("alice",)),
    ],
)
def test_the_password_of_a_notifications_line_not_read_is_masked(text: str, passwords: tuple[str, ...]) -> None:
    assert probable_passwords(text) == passwords


@given(st.lists(st.text(min_size=1, max_size=30).filter(lambda w: not any(c.isspace() for c in w)), max_size=6))
def test_the_notifications_words_read_any_words_or_refuse_them(words: list[str]) -> None:
    for line in (" ".join(["notifications", *words]), " ".join(["toy", "notifications", *words])):
        try:
            found = parse_command(line, ["toy"])
        except ParseError as error:
            assert error.fix, line
        else:
            assert isinstance(found, Notifications | BoardNotifications), line
            if isinstance(found, Notifications) and found.hour is not None:
                assert found.mode == "digest" and 0 <= found.hour <= 23


def test_a_bots_move_is_another_players(runtime: Runtime) -> None:
    signup(runtime, "alice", "secret1")
    send(runtime, "alice@example.org", "toy challenge alice bot")
    send(runtime, "alice@example.org", "notifications alice secret1 turn")
    send(runtime, "alice@example.org", "toy move 101 alice secret1 b2")
    [(to, mail)] = bot_turns(runtime)  # the bot's move leaves the board waiting for alice
    assert to == "alice@example.org" and "It is alice's turn." in body(mail)
    send(runtime, "alice@example.org", "notifications alice secret1 results")
    assert recipients(send(runtime, "alice@example.org", "toy move 101 alice secret1 a1")) == ["alice@example.org"]
    assert bot_turns(runtime) == []


def test_reminders_come_in_every_mode(runtime: Runtime, clock: FakeClock) -> None:
    signup(runtime, "alice", "secret1")
    signup(runtime, "bob", "secret2")
    send(runtime, "alice@example.org", "notifications alice secret1 results")
    send(runtime, "bob@example.org", "toy challenge --nagtime=2 alice bob")
    clock.advance(days=2, hours=1)
    assert "Reminder" in body(dict(timer_pass(runtime))["alice@example.org"])


def test_a_player_signed_off_takes_their_choices_along(runtime: Runtime) -> None:
    """The board's choices go with the account and with the board (the foreign keys cascade)."""
    signup(runtime, "alice", "secret1")
    signup(runtime, "bob", "secret2")
    send(runtime, "alice@example.org", "toy challenge alice bob")
    send(runtime, "alice@example.org", "toy notifications 101 alice secret1 results")
    mails = send(runtime, "alice@example.org", "signoff alice secret1")
    assert "bob@example.org" in recipients(mails)
    with runtime.sessions() as session:
        assert session.scalar(select(func.count()).select_from(BoardNotification)) == 0


def test_the_digest_is_one_mail_a_day_in_each_players_own_day(runtime: Runtime, clock: FakeClock) -> None:
    """Three players in three zones, their hours chosen near the ends of
    their days, the timer pass every hour (and some hours twice) for five
    days: each gets one digest on each of their days, at or after their
    hour; the first on the day the mode was chosen, as that day's hour
    has passed when the first pass runs."""
    hours = {"alice": ("Asia/Tokyo", 9), "bob": ("America/New_York", 23), "carol": ("", 0)}
    for userid, password in (("alice", "secret1"), ("bob", "secret2"), ("carol", "secret3")):
        signup(runtime, userid, password)
    for userid, password in (("alice", "secret1"), ("bob", "secret2"), ("carol", "secret3")):
        zone, hour = hours[userid]
        if zone:
            send(runtime, f"{userid}@example.org", f"timezone {userid} {password} {zone}")
        send(runtime, f"{userid}@example.org", f"notifications {userid} {password} digest {hour}")
    # boards in their setting up, waiting for both players' secret squares; they stay so
    send(runtime, "alice@example.org", "toy challenge -secret alice bob")
    send(runtime, "carol@example.org", "toy challenge -secret carol alice")
    send(runtime, "bob@example.org", "toy challenge -secret bob carol")
    days: Counter[tuple[str, str]] = Counter()
    for hour in range(5 * 24):
        clock.advance(hours=1)
        for run in range(2 if hour % 5 == 0 else 1):
            for to, mail in timer_pass(runtime):
                userid = to.split("@")[0]
                zone, at = hours[userid]
                local = clock.now.astimezone(ZoneInfo(zone) if zone else UTC)
                assert local.hour >= at, (userid, local)
                assert str(mail["Subject"]) == f"pbmserv digest {userid} {local:%Y-%m-%d}"
                assert run == 0, "a second pass in the hour sends no digest"
                assert body(mail).count("It is ") == 2, "the two boards waiting for the player"
                days[userid, f"{local:%Y-%m-%d}"] += 1
    assert set(days.values()) == {1}
    per_player = Counter(userid for userid, _ in days)
    assert all(count in (5, 6) for count in per_player.values()), per_player


def test_no_digest_on_a_day_no_board_waits_nor_later_that_day(runtime: Runtime, clock: FakeClock) -> None:
    signup(runtime, "alice", "secret1")
    signup(runtime, "bob", "secret2")
    send(runtime, "alice@example.org", "notifications alice secret1 digest 10")
    send(runtime, "alice@example.org", "toy challenge bob alice")  # bob to move
    clock.advance(hours=1)  # 10:xx UTC
    assert timer_pass(runtime) == []
    send(runtime, "bob@example.org", "toy move 101 bob secret2 b2")  # now alice's turn: her digest comes tomorrow
    clock.advance(hours=1)
    assert timer_pass(runtime) == []
    clock.advance(hours=23)
    [(to, mail)] = timer_pass(runtime)
    assert to == "alice@example.org" and "toy move 101 alice PASSWORD" in body(mail)


def test_a_board_in_digest_mode_is_listed_and_its_others_are_not(runtime: Runtime, clock: FakeClock) -> None:
    signup(runtime, "alice", "secret1")
    signup(runtime, "bob", "secret2")
    send(runtime, "alice@example.org", "toy challenge alice bob")
    send(runtime, "alice@example.org", "toy challenge alice bob")
    send(runtime, "alice@example.org", "toy notifications 102 alice secret1 digest")
    assert recipients(send(runtime, "bob@example.org", "toy notifications 101 bob secret2 results")) == ["bob@example.org"]
    clock.advance(hours=1)
    [(to, mail)] = timer_pass(runtime)
    assert to == "alice@example.org" and "Board 102" in body(mail) and "Board 101" not in body(mail)
    assert str(mail["Reply-To"]).startswith("pbmserv+toy-102-1-")


def test_the_notification_columns_migrate_up_and_down(empty_database: str) -> None:
    config = alembic_config(empty_database)
    command.upgrade(config, "head")
    engine = create_engine(empty_database)
    try:
        assert {"notifications", "digest_hour", "digest_sent_at"} <= {c["name"] for c in inspect(engine).get_columns("users")}
        command.downgrade(config, "0017")
        inspect_again = inspect(engine)
        assert "board_notifications" not in inspect_again.get_table_names()
        assert "notifications" not in {c["name"] for c in inspect_again.get_columns("users")}
        command.upgrade(config, "head")
        command.check(config)
    finally:
        engine.dispose()


def test_a_digest_with_pictures_draws_its_first_ten_boards_and_links_every_address(runtime: Runtime, clock: FakeClock) -> None:
    signup(runtime, "alice", "secret1")
    signup(runtime, "bob", "secret2")
    send(runtime, "bob@example.org", "pictures bob secret2 on")
    send(runtime, "bob@example.org", "notifications bob secret2 digest 0")
    for number in range(12):
        if number == 10:
            clock.advance(hours=1)  # past the hourly count of new boards
        send(runtime, "alice@example.org", "toy challenge bob alice")
    [(to, mail)] = timer_pass(runtime)
    assert to == "bob@example.org"
    text_part, related = mail.iter_parts()
    html, *images = related.iter_parts()
    assert len(images) == 10
    source = html.get_content()
    links = re.findall(r'href="mailto:(pbmserv\+toy-(\d+)-1-[a-z2-9]+@localhost)"', source)
    assert sorted({int(board) for _, board in links}) == list(range(101, 113))
    assert links[0][0] == str(mail["Reply-To"])
    assert all(address in str(text_part.get_content()) for address, _ in links)


def test_a_digest_shows_at_most_its_bound_of_boards_and_says_how_many_more(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(digests, "MOST_DIGEST_BOARDS", 2)  # 50 in earnest: the same code, fewer boards to make
    signup(runtime, "alice", "secret1")
    signup(runtime, "bob", "secret2")
    send(runtime, "bob@example.org", "notifications bob secret2 digest 0")
    for _ in range(3):
        send(runtime, "alice@example.org", "toy challenge bob alice")
    [(_, mail)] = timer_pass(runtime)
    text = " ".join(body(mail).split())
    assert "3 boards wait for your move" in text and text.count("It is bob's turn.") == 2
    assert "The first 2 are shown; 1 more waits for you: 'all show bob next'" in text
