"""Subscriptions, chat, messages, showas, `all show` and challenge policy at
the service level: what the transcripts do not show — hidden information
kept from subscribers, several game types, signing off, refused commands
that change nothing, and passwords masked."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from sqlalchemy import select

from pbmserv.protocol import GAME_VERBS, GLOBAL_VERBS
from pbmserv.runtime import Runtime
from pbmserv.service.processing.catalog import Catalog
from pbmserv.store.models import GamePolicy, InboundMail, OutboxMail, Subscription
from tests.mailtools import body, send, signup
from tests.test_reliability import snapshot
from tests.toygame import Toy


class OtherToy(Toy):
    name = "other"
    title = "Other"


def everything(runtime: Runtime) -> dict[str, list[Any]]:
    with runtime.sessions() as session:
        return {
            **snapshot(runtime),
            "subscriptions": [(s.user_id, s.board_id, s.final_only) for s in session.scalars(select(Subscription))],
            "policies": [
                (p.user_id, p.game_type, p.accepts_challenges, p.game_limit, p.seeking, p.subscribes_new_boards)
                for p in session.scalars(select(GamePolicy))
            ],
        }


@pytest.fixture
def watched(runtime: Runtime) -> Runtime:
    """alice and bob on a secret toy board 101 (alice chose her square), carol subscribed."""
    for userid in ("alice", "bob", "carol", "dave"):
        signup(runtime, userid, f"{userid}-pw")
    send(runtime, "alice@example.org", "toy challenge -secret alice bob")
    send(runtime, "carol@example.org", "toy subscribe 101 carol carol-pw")
    return runtime


def test_subscribers_get_the_public_view_never_a_players_secret(watched: Runtime) -> None:
    replies = dict(send(watched, "alice@example.org", "toy move 101 alice alice-pw bonus b2"))
    assert set(replies) == {"alice@example.org", "bob@example.org", "carol@example.org"}
    assert "Your secret square: b2" in body(replies["alice@example.org"])
    carol = body(replies["carol@example.org"])
    assert "b2" not in carol and "(secret)" in carol
    assert "Subscribers: carol." in carol


def test_showas_shows_the_secret_to_its_owner_only(watched: Runtime) -> None:
    send(watched, "alice@example.org", "toy move 101 alice alice-pw bonus b2")
    [(to, message)] = send(watched, "alice@example.org", "toy showas alice alice-pw 101")
    assert to == "alice@example.org" and "Your secret square: b2" in body(message)
    [(_, message)] = send(watched, "bob@example.org", "toy showas bob bob-pw 101")
    assert "b2" not in body(message) and "(secret)" in body(message)


def test_a_resignation_reaches_notify_subscribers(watched: Runtime) -> None:
    send(watched, "dave@example.org", "toy notify 101 dave dave-pw")
    send(watched, "alice@example.org", "toy move 101 alice alice-pw bonus b2")
    assert "dave@example.org" not in dict(send(watched, "bob@example.org", "toy move 101 bob bob-pw bonus a1"))
    replies = dict(send(watched, "bob@example.org", "toy resign 101 bob bob-pw"))
    assert {"carol@example.org", "dave@example.org"} <= set(replies)
    assert "Game won by alice" in body(replies["dave@example.org"])


def test_signing_off_ends_subscriptions_and_policies(watched: Runtime) -> None:
    send(watched, "carol@example.org", "toy subscribe all carol carol-pw")
    send(watched, "carol@example.org", "toy limit carol carol-pw 3")
    send(watched, "carol@example.org", "signoff carol carol-pw")
    with watched.sessions() as session:
        assert session.scalars(select(Subscription)).all() == []
        assert session.scalars(select(GamePolicy)).all() == []
    replies = dict(send(watched, "alice@example.org", "toy move 101 alice alice-pw bonus b2"))
    assert "carol@example.org" not in replies


def test_subscribe_all_skips_boards_the_follower_plays(watched: Runtime) -> None:
    send(watched, "carol@example.org", "toy subscribe all carol carol-pw")
    replies = dict(send(watched, "bob@example.org", "toy challenge carol bob"))
    assert "Subscribers" not in body(replies["carol@example.org"])
    replies = dict(send(watched, "bob@example.org", "toy challenge alice bob"))
    assert "Subscribers: carol." in body(replies["carol@example.org"])


def test_all_show_covers_every_game_type(runtime: Runtime) -> None:
    runtime.processor.catalog = Catalog([Toy(), OtherToy()])
    signup(runtime, "alice", "alice-pw")
    signup(runtime, "bob", "bob-pw")
    send(runtime, "alice@example.org", "toy challenge alice bob")
    send(runtime, "alice@example.org", "other challenge bob alice")
    [(_, message)] = send(runtime, "carol@example.org", "all show alice")
    text = body(message)
    assert "Active boards of alice in every game: 2." in text
    assert "Toy Board 101" in text and "Other Board 101" in text
    [(_, message)] = send(runtime, "carol@example.org", "all show alice next")
    assert "Toy Board 101" in body(message) and "Other Board 101" not in body(message)


REFUSED = {
    "subscribe twice": ("carol", "toy subscribe 101 carol carol-pw", "already gets every mail"),
    "player subscribes": ("alice", "toy subscribe 101 alice alice-pw", "gets its mails anyway"),
    "notify, wrong password": ("dave", "toy notify 101 dave nope", "password for 'dave' is wrong"),
    "unsubscribe, not subscribed": ("dave", "toy unsubscribe 101 dave dave-pw", "does not subscribe"),
    "unsubscribe all, nothing": ("dave", "toy unsubscribe all dave dave-pw", "subscribes to no Toy boards"),
    "chat, outsider": ("dave", "toy chat 101 dave dave-pw", "neither plays nor subscribes"),
    "chat, empty": ("alice", "toy chat 101 alice alice-pw", "chat is empty"),
    "message, unknown user": ("alice", "message alice alice-pw bob zoe", "no player with the userid 'zoe'"),
    "broadcast, not admin": ("alice", "broadcast alice alice-pw", "Only the server's admins"),
    "showas, not a player": ("carol", "toy showas carol carol-pw 101", "not a player"),
    "policy, wrong password": ("bob", "toy reject bob nope", "password for 'bob' is wrong"),
}


@pytest.mark.parametrize("path", list(REFUSED))
def test_a_refused_command_answers_the_sender_only_and_changes_nothing(watched: Runtime, path: str) -> None:
    userid, subject, says = REFUSED[path]
    before = everything(watched)
    replies = send(watched, f"{userid}@example.org", "multiple", subject)
    assert everything(watched) == before
    [(to, message)] = replies
    assert to == f"{userid}@example.org" and says in body(message)


def test_a_refused_challenge_changes_no_seek_count(watched: Runtime) -> None:
    send(watched, "alice@example.org", "toy seek alice alice-pw 2")
    send(watched, "bob@example.org", "toy reject bob bob-pw")
    before = everything(watched)
    [(_, message)] = send(watched, "alice@example.org", "toy challenge alice bob")
    assert "bob does not accept Toy challenges" in body(message)
    assert everything(watched) == before


def test_broadcast_reaches_every_user_when_sent_by_an_admin(watched: Runtime) -> None:
    watched.processor.settings = replace(watched.processor.settings, admins=("Dave",))
    replies = dict(send(watched, "dave@example.org", "broadcast dave dave-pw", "Maintenance tonight."))
    assert set(replies) == {f"{u}@example.org" for u in ("alice", "bob", "carol", "dave")}
    assert "Maintenance tonight." in body(replies["bob@example.org"])


def test_passwords_of_the_new_commands_are_masked_in_stored_and_sent_mail(watched: Runtime) -> None:
    send(watched, "alice@example.org", "toy chat 101 alice alice-pw", "Hello all.")
    send(watched, "dave@example.org", "multiple", "toy limit dave dave-pw 3\ntoy seek dave dave-pw x\nmessage dave dave-pw bob")
    with watched.sessions() as session:
        for row in session.scalars(select(InboundMail)):
            assert b"alice-pw" not in row.raw and b"dave-pw" not in row.raw
        for row in session.scalars(select(OutboxMail)):
            assert b"alice-pw" not in row.raw and b"dave-pw" not in row.raw


def test_notify_and_subscribe_switch_the_kind_of_subscription(watched: Runtime) -> None:
    [(_, message)] = send(watched, "carol@example.org", "toy notify 101 carol carol-pw")
    assert "Subscribers: carol (final result only)." in body(message)
    assert "carol@example.org" not in dict(send(watched, "alice@example.org", "toy move 101 alice alice-pw bonus b2"))
    [(_, message)] = send(watched, "carol@example.org", "toy subscribe 101 carol carol-pw")
    assert "Subscribers: carol." in body(message)
    assert "carol@example.org" in dict(send(watched, "bob@example.org", "toy move 101 bob bob-pw bonus a1"))


def test_every_command_word_is_declared_with_its_syntax_and_help() -> None:
    for prefix, verbs in (("", GLOBAL_VERBS), ("GAME ", GAME_VERBS)):
        for word, verb in verbs.items():
            assert verb.syntax.startswith(f"{prefix}{word}") and verb.help.strip(), word
