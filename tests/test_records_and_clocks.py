"""Game records by mail (`GAME record`, a JSON file attached) and the
clock in board mails, in UTC and the player's zone (`timezone`): issue 38,
items 6 and 3 (docs/decisions/0148-game-records.md,
docs/decisions/0149-deadlines-in-board-mails.md)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from email import policy
from email.message import MIMEPart
from email.parser import BytesParser

import pytest
from alembic import command
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import create_engine, inspect

from pbmserv.mail.attachments import Attachment
from pbmserv.mail.outbound import compose, message_bytes
from pbmserv.protocol import ParseError, parse_command
from pbmserv.protocol.commands import Record, Timezone
from pbmserv.runtime import Runtime
from pbmserv.service.play.deadlines import Deadline, clock_text, shown_in, zone_named
from pbmserv.store.database import alembic_config
from tests.mailtools import body, send
from tests.web_helpers import fetch, play_boards, running_site

NOW = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def text_of(part: MIMEPart) -> str:
    return str(part.get_content()).replace("\r\n", "\n")


def test_a_mail_with_a_file_attached_keeps_the_plain_mails_text_part() -> None:
    data = '{"moves": ["b2", "ä"]}\n'.encode()
    text = "The record.\nMoves: b2 ä\n"
    _, raw = compose(
        sender="pbmserv@example.org", recipient="dave@example.org", subject="Toy Board 101 record", body=text,
        date=NOW, attachments=(Attachment("toy-101.json", "application/json", data),),
    )
    message = BytesParser(policy=policy.default).parsebytes(raw)
    assert message.get_content_type() == "multipart/mixed" and message["Subject"] == "Toy Board 101 record"
    text_part, file_part = message.iter_parts()
    plain = message_bytes([], text).split(b"\r\n\r\n", 1)[1].decode("ascii").replace("\r\n", "\n")
    assert str(text_part.get_payload()).replace("\r\n", "\n").rstrip("\n") == plain.rstrip("\n")
    assert text_part["Content-Transfer-Encoding"] == "quoted-printable"
    assert text_of(text_part) == text
    assert (file_part.get_content_type(), file_part.get_content_disposition(), file_part.get_filename()) == (
        "application/json", "attachment", "toy-101.json",
    )
    assert file_part.get_content() == data
    assert all(len(line) <= 998 for line in raw.split(b"\r\n"))


def test_the_mailed_record_is_the_web_sites(runtime: Runtime) -> None:
    """The text is the site's /record, the JSON's players, result and moves the site's .json: one code for both."""
    play_boards(runtime)
    with running_site(runtime) as site:
        for number in (101, 103, 104):
            [(recipient, message)] = send(runtime, "dave@example.org", f"toy record {number}")
            text_part, file_part = message.iter_parts()
            assert recipient == "dave@example.org" and file_part.get_filename() == f"toy-{number}.json"
            web_record = fetch(f"{site}/toy/{number}/record").text
            assert text_of(text_part).endswith("\n\n" + web_record)
            mailed, web = json.loads(file_part.get_content()), json.loads(fetch(f"{site}/toy/{number}.json").text)
            assert {key: mailed[key] for key in ("players", "result", "moves")} == {
                key: web[key] for key in ("players", "result", "moves")
            }
            assert (mailed["format"], mailed["version"], mailed["move_count"]) == ("pbmserv game record", 1, web["move_count"])


def test_a_secret_move_stays_secret_in_the_record_until_the_end(runtime: Runtime) -> None:
    play_boards(runtime)
    [(_, message)] = send(runtime, "alice@example.org", "toy record 103")
    text_part, file_part = message.iter_parts()
    assert "b3" not in text_of(text_part) and "b3" not in file_part.get_content().decode()
    send(runtime, "bob@example.org", "toy resign 103 bob secret2")
    [(_, message)] = send(runtime, "carol@example.org", "toy record 103")
    moves = json.loads(list(message.iter_parts())[1].get_content())["moves"]
    assert moves[0]["text"] == "bonus b3"


@given(st.lists(st.text(min_size=1, max_size=80).filter(lambda w: not any(c.isspace() for c in w)), max_size=5))
def test_the_new_words_read_any_words_or_refuse_them(words: list[str]) -> None:
    for line in (" ".join(["timezone", *words]), " ".join(["toy", "record", *words])):
        try:
            found = parse_command(line, ["toy"])
        except ParseError as error:
            assert error.fix, line
        else:
            assert isinstance(found, Timezone | Record), line
            if isinstance(found, Timezone):
                assert len(found.zone) <= 64 and found.zone == words[2]


def test_zone_names_in_any_case_and_nothing_else() -> None:
    assert zone_named("europe/berlin") == "Europe/Berlin" and zone_named("AMERICA/NEW_YORK") == "America/New_York"
    assert zone_named("utc") == "UTC" and zone_named("Etc/UTC") == "Etc/UTC"
    for name in ("Mars/Olympus_Mons", "../../etc/passwd", "/usr/share/zoneinfo/UTC", "CET+1", "+02:00", ""):
        assert zone_named(name) is None, name


def test_a_deadline_is_shown_in_the_zone_with_its_summer_time() -> None:
    assert shown_in(NOW, "") == shown_in(NOW, "UTC") == "2026-01-05 09:00 UTC"
    assert shown_in(NOW, "Europe/Berlin") == "2026-01-05 09:00 UTC (2026-01-05 10:00 Europe/Berlin)"
    assert shown_in(NOW.replace(month=7), "Europe/Berlin") == "2026-07-05 09:00 UTC (2026-07-05 11:00 Europe/Berlin)"
    assert shown_in(NOW.replace(hour=2), "America/New_York") == "2026-01-05 02:00 UTC (2026-01-04 21:00 America/New_York)"
    assert shown_in(NOW, "Gone/Since_The_Last_Update") == "2026-01-05 09:00 UTC"  # a kept zone the tz database lost


def test_the_clock_of_a_player_on_vacation_is_stopped_and_a_late_reminder_is_left_out() -> None:
    assert "your clock is stopped" in clock_text(Deadline("bob", None, None), "")
    late = clock_text(Deadline("bob", NOW + timedelta(days=9), NOW + timedelta(days=7)), "")
    assert " ".join(late.split()) == "Your clock: without your move you forfeit the game on 2026-01-12 09:00 UTC."


def test_the_clock_in_board_mails(runtime: Runtime) -> None:
    play_boards(runtime)
    send(runtime, "alice@example.org", "timezone alice secret1 Asia/Tokyo")
    mails = dict(send(runtime, "alice@example.org", "toy challenge --nagtime=2 --forfeittime=4 alice bot"))
    assert "bot" not in " ".join(mails)
    text = body(mails["alice@example.org"])
    assert "reminded on 2026-01-07" in text and "Asia/Tokyo" in text and text.rstrip().endswith("a3")
    subscribers = dict(send(runtime, "bob@example.org", "toy show 101"))
    assert "Your clock" not in body(subscribers["bob@example.org"])


def test_the_time_zone_column_migrates_up_and_down(empty_database: str) -> None:
    config = alembic_config(empty_database)
    command.upgrade(config, "head")
    engine = create_engine(empty_database)
    try:
        assert "timezone" in {column["name"] for column in inspect(engine).get_columns("users")}
        command.downgrade(config, "0016")
        inspect_again = inspect(engine)
        assert "timezone" not in {column["name"] for column in inspect_again.get_columns("users")}
        command.upgrade(config, "head")
        command.check(config)
    finally:
        engine.dispose()


@pytest.mark.parametrize("zone", ["Mars/Olympus_Mons", "x" * 65])
def test_a_zone_refused_changes_nothing(runtime: Runtime, zone: str) -> None:
    play_boards(runtime)
    [(_, answer)] = send(runtime, "alice@example.org", f"timezone alice secret1 {zone}")
    assert "Error" in str(answer["Subject"]) and ("Europe/Berlin" in body(answer))
    mails = dict(send(runtime, "bob@example.org", "toy move 101 bob secret2 resign"))
    assert "Your clock" not in body(mails["alice@example.org"])
