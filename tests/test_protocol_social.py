"""The command language of issue 9, part 1: subscriptions, chat, messages,
showas, `all show` and challenge policy — exact parses, typed errors, and the
passwords that must be masked."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbmserv.protocol import ParseError, parse_command, parse_request
from pbmserv.protocol.commands import (
    AllShow,
    BoardRef,
    Broadcast,
    Chat,
    Message,
    Notify,
    SetAccepting,
    SetLimit,
    SetSeek,
    ShowAs,
    Subscribe,
    Unsubscribe,
)
from pbmserv.protocol.errors import BadArgument, MissingArgument

GAMES = ("majorities", "toy")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("toy subscribe 101 Carol Pw", Subscribe("toy", 101, "carol", "Pw")),
        ("toy SUBSCRIBE ALL carol Pw", Subscribe("toy", None, "carol", "Pw")),
        ("toy unsubscribe 101 carol Pw", Unsubscribe("toy", 101, "carol", "Pw")),
        ("toy unsubscribe all carol Pw", Unsubscribe("toy", None, "carol", "Pw")),
        ("toy notify 101 dave Pw", Notify("toy", 101, "dave", "Pw")),
        ("toy chat 101 alice Pw", Chat("toy", 101, "alice", "Pw")),
        ("toy showas alice Pw 101", ShowAs("toy", "alice", "Pw", (BoardRef(101),))),
        ("toy showas alice Pw 101#3 102", ShowAs("toy", "alice", "Pw", (BoardRef(101, 3), BoardRef(102)))),
        ("toy accept bob Pw", SetAccepting("toy", "bob", "Pw", True)),
        ("toy reject bob Pw", SetAccepting("toy", "bob", "Pw", False)),
        ("toy limit bob Pw 3", SetLimit("toy", "bob", "Pw", 3)),
        ("toy limit bob Pw 0", SetLimit("toy", "bob", "Pw", 0)),
        ("toy seek bob Pw 2", SetSeek("toy", "bob", "Pw", 2)),
        ("message alice Pw bob Carol bob", Message("alice", "Pw", ("bob", "carol"))),
        ("broadcast root Pw", Broadcast("root", "Pw")),
        ("all show Alice", AllShow("alice", "active")),
        ("ALL SHOW alice NEXT", AllShow("alice", "next")),
        ("all show alice active", AllShow("alice", "active")),
    ],
)
def test_parses(text: str, expected: object) -> None:
    assert parse_command(text, GAMES) == expected


@pytest.mark.parametrize(
    ("text", "error", "says"),
    [
        ("toy subscribe", MissingArgument, "board number or 'all' is missing"),
        ("toy subscribe 101 carol", MissingArgument, "password is missing"),
        ("toy subscribe first carol pw", BadArgument, "not a board number"),
        ("toy subscribe 101 carol pw please", BadArgument, "one word too many"),
        ("toy unsubscribe 101 c! pw", BadArgument, "not a userid"),
        ("toy notify all dave pw", BadArgument, "not a board number"),
        ("toy chat 101 alice", MissingArgument, "password is missing"),
        ("toy chat 101 alice pw hello", BadArgument, "one word too many"),
        ("toy showas alice pw", MissingArgument, "board number is missing"),
        ("toy showas alice pw latest", BadArgument, "not a board number like 101"),
        ("toy accept bob", MissingArgument, "password is missing"),
        ("toy reject bob pw now", BadArgument, "one word too many"),
        ("toy limit bob pw", MissingArgument, "number is missing"),
        ("toy limit bob pw many", BadArgument, "whole number from 0 to 999"),
        ("toy limit bob pw 1000", BadArgument, "whole number from 0 to 999"),
        ("toy seek bob pw -1", BadArgument, "whole number from 0 to 99"),
        ("toy seek bob pw 3 4", BadArgument, "one word too many"),
        ("message alice pw", MissingArgument, "userid to send to is missing"),
        ("message alice pw b!b", BadArgument, "not a userid"),
        ("broadcast root", MissingArgument, "password is missing"),
        ("broadcast root pw now", BadArgument, "one word too many"),
        ("all", BadArgument, "followed by 'show'"),
        ("all games alice", BadArgument, "followed by 'show'"),
        ("all show", MissingArgument, "userid is missing"),
        ("all show alice inactive", BadArgument, "'active' or 'next'"),
        ("all show alice bob", BadArgument, "'active' or 'next'"),
    ],
)
def test_errors_are_typed_and_explain(text: str, error: type[ParseError], says: str) -> None:
    with pytest.raises(error) as raised:
        parse_command(text, GAMES)
    assert says in raised.value.message
    assert raised.value.fix, "every parse error shows the right syntax"


@pytest.mark.parametrize(
    ("text", "passwords"),
    [
        ("toy subscribe 101 carol s3cret", ("s3cret",)),
        ("toy subscribe all carol s3cret", ("s3cret",)),
        ("toy unsubscribe all carol s3cret", ("s3cret",)),
        ("toy notify 101 dave s3cret", ("s3cret",)),
        ("toy chat 101 alice s3cret", ("s3cret",)),
        ("Re: toy chat 101 alice s3cret", ("s3cret",)),
        ("toy showas alice s3cret 101", ("s3cret",)),
        ("toy showas alice s3cret", ("alice", "s3cret")),  # also where the line does not parse
        ("toy accept bob s3cret", ("s3cret",)),
        ("toy reject bob s3cret", ("s3cret",)),
        ("toy limit bob s3cret 3", ("s3cret",)),
        ("toy seek bob s3cret x", ("bob", "s3cret", "x")),
        ("chess seek bob s3cret 2", ("bob", "s3cret", "2")),  # an unknown game still hides the password
        ("message alice s3cret bob carol", ("s3cret",)),
        ("message limit s3cret bob carol", ("s3cret",)),  # a userid that is also a game verb
        ("broadcast root s3cret", ("s3cret",)),
        ("signup alice 1234 a@b.c d@e.f", ("1234",)),  # a digit password is not a board number
        ("all show alice", ()),
    ],
)
def test_the_passwords_of_a_line_are_found(text: str, passwords: tuple[str, ...]) -> None:
    assert parse_request(text, "", GAMES).passwords == passwords


words = st.one_of(
    st.sampled_from(["toy", "subscribe", "unsubscribe", "notify", "chat", "showas", "accept", "reject",
                     "limit", "seek", "message", "broadcast", "all", "show", "next", "101", "101#2", "0",
                     "1000", "alice", "pw", "Re:"]),
    st.text(min_size=0, max_size=12),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(words, max_size=7).map(" ".join))
def test_any_line_of_these_words_parses_or_gives_a_typed_error(subject: str) -> None:
    for line in parse_request(subject, "", GAMES).lines:
        assert (line.command is None) != (line.error is None)
        if line.error is not None:
            assert line.error.message.strip()
