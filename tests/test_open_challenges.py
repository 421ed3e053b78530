"""Open challenges (`GAME open`, `take`, `withdraw`) at the service level:
what transcript 74 does not show — accounts that may not play, numbers
never used twice, one game type's number not another's, and passwords
masked in every form."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import select, update

from pbmserv.protocol import probable_passwords
from pbmserv.runtime import Runtime
from pbmserv.service.processing.catalog import Catalog
from pbmserv.store.models import Board, InboundMail, OutboxMail, User
from tests.mailtools import body, send, signup
from tests.toygame import Toy


class OtherToy(Toy):
    name = "other"
    title = "Other"


def said(runtime: Runtime, userid: str, subject: str) -> str:
    """The text of the one mail the command sent its sender, on one line."""
    [text] = [body(message) for to, message in send(runtime, f"{userid}@example.org", subject) if to == f"{userid}@example.org"]
    return " ".join(text.split())


def boards(runtime: Runtime) -> list[tuple[str, list[str]]]:
    with runtime.sessions() as session:
        return [(board.game_type, board.seats) for board in session.scalars(select(Board).order_by(Board.id))]


@pytest.fixture
def posted(runtime: Runtime) -> Runtime:
    """alice, bob and carol signed up; alice's open toy challenge 1."""
    for userid in ("alice", "bob", "carol"):
        signup(runtime, userid, f"{userid}-pw")
    assert "Open Toy challenge 1 of alice is posted" in said(runtime, "alice", "toy open alice alice-pw")
    return runtime


def test_a_taken_challenge_is_gone_and_its_number_never_comes_back(posted: Runtime) -> None:
    said(posted, "bob", "toy take 1 bob bob-pw")
    assert boards(posted) == [("toy", ["alice", "bob"])]
    assert "There is no open Toy challenge 1" in said(posted, "carol", "toy take 1 carol carol-pw")
    assert "Open Toy challenge 2 of alice" in said(posted, "alice", "toy open alice alice-pw")
    said(posted, "alice", "toy withdraw 2 alice alice-pw")
    assert "Open Toy challenge 3 of alice" in said(posted, "alice", "toy open alice alice-pw")


def test_a_number_is_taken_within_its_game_type_only(posted: Runtime) -> None:
    posted.processor.catalog = Catalog([Toy(), OtherToy()])
    assert "There is no open Other challenge 1" in said(posted, "bob", "other take 1 bob bob-pw")
    assert "Open Other challenges: none." in said(posted, "bob", "other open")
    assert boards(posted) == []


def test_an_unconfirmed_taker_is_refused(posted: Runtime) -> None:
    send(posted, "dave@example.org", "signup dave dave-pw")  # never confirmed
    text = said(posted, "dave", "toy take 1 dave dave-pw")
    assert "You cannot take open Toy challenge 1 now: dave has not confirmed an address yet" in text
    assert "take it once that has changed: 'toy take 1 dave password'" in text
    assert boards(posted) == []


def test_a_challenge_whose_poser_may_not_play_now_cannot_be_taken(posted: Runtime) -> None:
    said(posted, "alice", "toy limit alice alice-pw 1")
    send(posted, "carol@example.org", "toy challenge carol alice")
    text = said(posted, "bob", "toy take 1 bob bob-pw")
    assert "Open Toy challenge 1 cannot begin now: alice already plays 1 active Toy game, the limit alice chose." in text
    assert "take another ('toy open' lists them), or this one later" in text
    assert boards(posted) == [("toy", ["carol", "alice"])]


def test_a_disabled_poser_s_challenge_cannot_be_taken(posted: Runtime) -> None:
    with posted.sessions() as session, session.begin():
        session.execute(update(User).where(User.userid == "alice").values(disabled_at=datetime(2026, 1, 1, tzinfo=UTC)))
    assert "cannot begin now: the account alice is disabled" in said(posted, "bob", "toy take 1 bob bob-pw")


def test_a_player_who_refuses_challenges_posts_none(posted: Runtime) -> None:
    said(posted, "bob", "toy challenges bob bob-pw off")
    text = said(posted, "bob", "toy open bob bob-pw")
    assert "No open challenge can be posted for you now: bob refuses Toy challenges" in text


def test_an_option_the_game_lacks_is_refused_when_posted(posted: Runtime) -> None:
    text = said(posted, "bob", "toy open bob bob-pw -bot=easy")
    assert "toy has no option -bot" in text and "'toy help' lists the options" in text


@pytest.mark.parametrize(("subject", "passwords"), [
    ("toy open alice s3cret -size=9 bob", ("alice", "s3cret", "-size=9", "bob")),
    ("toy take x alice s3cret", ("alice", "s3cret")),
    ("toy withdraw 1 alice", ("alice",)),
])
def test_the_passwords_of_lines_that_could_not_be_read_are_masked(subject: str, passwords: tuple[str, ...]) -> None:
    assert probable_passwords(subject) == passwords


def test_no_password_of_the_new_commands_is_kept_or_sent(posted: Runtime) -> None:
    send(posted, "bob@example.org", "multiple", "toy take 1 bob bob-pw\ntoy open bob bob-pw bob\ntoy withdraw x bob bob-pw")
    with posted.sessions() as session:
        for row in session.scalars(select(InboundMail)):
            assert b"bob-pw" not in row.raw
        for row in session.scalars(select(OutboxMail)):
            assert b"bob-pw" not in row.raw
