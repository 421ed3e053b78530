"""Someone to play with (`GAME seek`): the pairing rule's invariants, and
at the service level what the transcripts do not show — ratings apart,
disabled, unconfirmed and full accounts, and the bot that cannot come."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from sqlalchemy import select, update

from pbmserv.runtime import Runtime
from pbmserv.service.commands.seeking import WINDOW, Seeker, partner, seat_order
from pbmserv.service.processing.catalog import Catalog
from pbmserv.store.models import Board, GamePolicy, Rating, User
from tests.mailtools import body, send, signup
from tests.toygame import Toy

START = datetime(2026, 1, 1, tzinfo=UTC)

seekers_strategy = st.builds(
    Seeker,
    userid=st.sampled_from(["alice", "bob", "carol", "dave", "erin"]),
    rating=st.integers(1000, 2400),
    since=st.integers(0, 100).map(lambda hours: START + timedelta(hours=hours)),
    free=st.booleans(),
)


@given(seekers_strategy, st.lists(seekers_strategy, max_size=8))
def test_a_partner_is_free_someone_else_within_the_window_who_waited_longest(seeker: Seeker, others: list[Seeker]) -> None:
    found = partner(seeker, others)
    close = [o for o in others if o.free and o.userid != seeker.userid and abs(o.rating - seeker.rating) <= WINDOW]
    if found is None:
        assert close == []
        return
    assert found.free and found.userid != seeker.userid and abs(found.rating - seeker.rating) <= WINDOW
    assert all(found.since <= other.since for other in close)


@given(seekers_strategy, seekers_strategy)
def test_the_seat_order_is_by_the_wait_and_the_same_whoever_seeks_last(first: Seeker, second: Seeker) -> None:
    assume(first.userid != second.userid)
    order = seat_order(first, second)
    assert order == seat_order(second, first)
    assert order[0].since <= order[1].since


def players(runtime: Runtime, *userids: str) -> Runtime:
    for userid in userids:
        signup(runtime, userid, f"{userid}-pw")
    return runtime


def seek(runtime: Runtime, userid: str, words: str = "1") -> dict[str, str]:
    """Every mail's text that the seek sent a minute after the last, by
    recipient (a recipient's mails one after the other)."""
    runtime.clock.advance(minutes=1)  # type: ignore[attr-defined]
    mails: dict[str, str] = {}
    for to, message in send(runtime, f"{userid}@example.org", f"toy seek {userid} {userid}-pw {words}"):
        mails[to] = mails.get(to, "") + body(message)
    return mails


def boards(runtime: Runtime) -> list[list[str]]:
    with runtime.sessions() as session:
        return [board.seats for board in session.scalars(select(Board).order_by(Board.id))]


def set_rating(runtime: Runtime, userid: str, rating: int) -> None:
    with runtime.sessions() as session, session.begin():
        user = session.scalars(select(User).where(User.userid == userid)).one()
        session.add(Rating(user_id=user.id, game_type="toy", rating=rating, won=0, lost=0, drawn=0, last_game_at=START))


def seeking(runtime: Runtime, userid: str) -> int:
    with runtime.sessions() as session:
        return session.scalars(
            select(GamePolicy.seeking).join(User).where(User.userid == userid, GamePolicy.game_type == "toy")
        ).one()


def test_two_close_seekers_get_a_board_the_first_seeker_first(runtime: Runtime) -> None:
    players(runtime, "alice", "bob")
    answer = seek(runtime, "alice")
    assert "No one close to your rating (1600, within 200 points)" in answer["alice@example.org"]
    mails = seek(runtime, "bob")
    assert boards(runtime) == [["alice", "bob"]]
    assert "Paired with alice: Toy board 101 has begun" in mails["bob@example.org"]
    assert seeking(runtime, "alice") == seeking(runtime, "bob") == 0


def test_seekers_too_far_apart_both_wait(runtime: Runtime) -> None:
    players(runtime, "alice", "bob")
    set_rating(runtime, "alice", 1800 + 1)
    seek(runtime, "alice")
    answer = seek(runtime, "bob")
    assert boards(runtime) == []
    assert "No one close to your rating (1600, within 200 points)" in answer["bob@example.org"]
    players(runtime, "carol")
    set_rating(runtime, "carol", 1601 + WINDOW)
    seek(runtime, "carol")
    assert boards(runtime) == [["alice", "carol"]]


def test_a_seeker_asking_for_more_games_is_paired_with_each_close_seeker(runtime: Runtime) -> None:
    players(runtime, "alice", "bob", "carol", "dave")
    seek(runtime, "alice")
    seek(runtime, "bob")  # paired with alice
    set_rating(runtime, "carol", 1450)
    set_rating(runtime, "dave", 1750)  # too far from carol
    seek(runtime, "carol")
    seek(runtime, "dave")
    assert len(boards(runtime)) == 1
    mails = seek(runtime, "bob", "3")
    assert boards(runtime)[1:] == [["carol", "bob"], ["dave", "bob"]]
    assert seeking(runtime, "bob") == 1
    assert "Paired with carol" in mails["bob@example.org"] and "Paired with dave" in mails["bob@example.org"]


def test_a_disabled_or_full_seeker_is_not_paired(runtime: Runtime) -> None:
    players(runtime, "alice", "bob", "carol")
    seek(runtime, "alice")
    with runtime.sessions() as session, session.begin():
        session.execute(update(User).where(User.userid == "alice").values(disabled_at=START, disabled_reason="spam"))
    send(runtime, "carol@example.org", "toy limit carol carol-pw 1")
    send(runtime, "carol@example.org", "toy challenge carol bob")
    answer = seek(runtime, "carol")
    assert "No board can begin for you now: carol already plays 1 active Toy game, the limit carol chose." in (
        " ".join(answer["carol@example.org"].split())
    )
    answer = seek(runtime, "bob")
    assert boards(runtime) == [["carol", "bob"]]
    assert "No one close" in answer["bob@example.org"]


def test_an_unconfirmed_seeker_is_not_paired(runtime: Runtime) -> None:
    players(runtime, "alice")
    send(runtime, "bob@example.org", "signup bob bob-pw")  # never confirmed
    seek(runtime, "alice")
    answer = " ".join(seek(runtime, "bob")["bob@example.org"].split())
    assert "No board can begin for you now: bob has not confirmed an address yet" in answer
    assert boards(runtime) == []


def test_the_bot_takes_the_game_after_the_wait_chosen(runtime: Runtime) -> None:
    players(runtime, "alice")
    answer = seek(runtime, "alice", "2 -bot=12")
    assert "the bot:     after 12 hours without a player" in answer["alice@example.org"]
    runtime.clock.advance(hours=11)  # type: ignore[attr-defined]
    assert runtime.processor.run_timers() == []
    runtime.clock.advance(hours=1)  # type: ignore[attr-defined]
    assert runtime.processor.run_timers() == ["toy board 101: alice paired with the bot after waiting"]
    assert boards(runtime) == [["alice", "bot"]]
    assert seeking(runtime, "alice") == 1
    assert runtime.processor.run_timers() == []  # the wait for the second game starts anew


def test_a_bot_that_cannot_come_is_said_and_the_seek_stays(runtime: Runtime) -> None:
    players(runtime, "alice")
    runtime.processor.settings = replace(runtime.processor.settings, bot_normal_boards=0)
    seek(runtime, "alice", "1 -bot=1")
    runtime.clock.advance(hours=2)  # type: ignore[attr-defined]
    report = runtime.processor.run_timers()
    assert report == ["toy: no bot for alice: This server offers no games against bot."]
    assert boards(runtime) == [] and seeking(runtime, "alice") == 1
    assert runtime.processor.run_timers() == []


@pytest.mark.parametrize(("words", "says"), [
    ("1 -bot=x", "'-bot=' takes the hours to wait for a player before the bot: a whole number from 0 to 720, not 'x'."),
    ("1 -bot=721", "not '721'"),
    ("1 -bot=3 more", "is one word too many: nothing follows the number."),
    ("1 -boot=3", "'seek' takes one option after the number: -bot=HOURS, the hours to wait for a player before the bot"),
])
def test_a_bad_bot_wait_is_refused_with_the_form(runtime: Runtime, words: str, says: str) -> None:
    players(runtime, "alice")
    answer = " ".join(seek(runtime, "alice", words)["alice@example.org"].split())
    assert says in answer and "toy seek userid password number [-bot=HOURS]" in answer


class Trio(Toy):
    name = "trio"
    title = "Trio"
    min_players = 3
    max_players = 3


def test_seekers_of_a_game_for_three_are_listed_not_paired(runtime: Runtime) -> None:
    runtime.processor.catalog = Catalog([Toy(), Trio()])
    players(runtime, "alice", "bob", "carol")
    for userid in ("alice", "bob"):
        send(runtime, f"{userid}@example.org", f"trio seek {userid} {userid}-pw 1 -bot=1")
    [(_, message)] = send(runtime, "carol@example.org", "trio seek carol carol-pw 1")
    assert "Trio is played by 3 or more players: its seekers are listed in 'trio standings', not paired." in (
        " ".join(body(message).split())
    )
    runtime.clock.advance(hours=2)  # type: ignore[attr-defined]
    assert runtime.processor.run_timers() == []
    assert boards(runtime) == []
