"""Classic players answering a board mail (issue 19, item 2): the command
line to paste at the end of a board mail, a command as the first body line
under a board mail's Subject, and a password written there masked in every
mail, every stored copy and every log line. Real runtime, real database."""

from __future__ import annotations

import logging

import pytest
from sqlalchemy import select

from pbmserv.runtime import Runtime
from pbmserv.store.models import InboundMail, Move
from tests.mailtools import body, make_mail, send

SECRET = "Zq7-bodypw"


def test_a_board_mail_to_the_player_to_move_ends_with_the_line_to_paste(toy_boards: Runtime) -> None:
    replies = send(toy_boards, "bob@example.org", "toy move 101 bob secret2 a1")
    mails = {recipient: body(message) for recipient, message in replies}
    assert mails["alice@example.org"].rstrip().endswith("  toy move 101 alice PASSWORD " + mails["alice@example.org"].split()[-1])
    assert "PASSWORD" in mails["alice@example.org"] and "PASSWORD" not in mails["bob@example.org"]


def test_a_reply_to_a_board_mail_plays_the_command_on_its_first_body_line(
    toy_boards: Runtime, caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    row_id, _ = toy_boards.intake.store(make_mail(
        "bob@example.org", "Re: Toy Board 101 bob", "toy move 101 bob secret2 a1\nMy password: secret2.",
    ))
    with toy_boards.sessions() as session:
        pending = session.get(InboundMail, row_id)
        assert pending.sealed is not None and b"secret2" not in pending.raw, "sealed until processed"
    send(toy_boards, "alice@example.org", "signup carol Zq7-unused")  # nothing else to do; the pending mail runs too
    with toy_boards.sessions() as session:
        done = session.get(InboundMail, row_id)
        assert done.status == "done" and done.sealed is None and b"secret2" not in done.raw
        [move] = session.scalars(select(Move).where(Move.text == "a1")).all()
        assert move.comment == "My password: ********."
    assert "secret2" not in caplog.text


def test_a_body_password_appears_in_no_mail(toy_boards: Runtime) -> None:
    replies = send(toy_boards, "bob@example.org", "RE: fwd: toy board 101 bob", "toy move 101 bob secret2 a1\nsecret2")
    assert len(replies) == 2 and all("secret2" not in body(message) for _, message in replies)
    refused = send(toy_boards, "alice@example.org", "Re: Toy Board 101 alice", f"toy move 101 alice {SECRET}")
    assert refused and all(SECRET not in body(message) for _, message in refused)


def test_a_reply_without_a_command_says_where_the_command_goes(toy_boards: Runtime) -> None:
    [(_, message)] = send(toy_boards, "bob@example.org", "Re: Toy Board 101 bob", "a1\n\nthanks")
    text = " ".join(body(message).split())
    assert "'Toy Board 101 bob' is a board mail's, not a command" in text
    assert "'a1' is not a command either" in text
    assert "toy move 101 USERID PASSWORD MOVE" in text and "first line of the body" in text
