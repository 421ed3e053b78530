"""The command language of issue 9, part 1: subscriptions, chat, messages,
showas, `all show` and challenge policy — exact parses, typed errors, and the
passwords that must be masked."""

from __future__ import annotations

import pytest

from pbmserv.protocol import ParseError, parse_command
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
from pbmserv.protocol.errors import BadArgument, MissingArgument, UnknownCommand
from pbmserv.service.commands.help import overview

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
        ("toy challenges bob Pw on", SetAccepting("toy", "bob", "Pw", True)),
        ("toy CHALLENGES bob Pw OFF", SetAccepting("toy", "bob", "Pw", False)),
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
        ("toy challenges bob pw", MissingArgument, "'on' or 'off' is missing"),
        ("toy challenges bob pw maybe", BadArgument, "ends with 'on' or 'off', not 'maybe'"),
        ("toy accept 101 bob pw", BadArgument, "takes no board number: it is the old word for the challenge policy"),
        ("toy reject #101 bob pw", BadArgument, "takes no board number"),
        ("toy chalenge alice bob", UnknownCommand, "'chalenge' is not a toy command"),
        ("majoritys challenge alice bob", UnknownCommand, "neither a command nor a game"),
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
    ("text", "fix_starts"),
    [
        ("majoritys challenge alice bob", "did you mean 'majorities'? commands: all,"),
        ("hlep", "did you mean 'help'? commands:"),
        ("toy chalenge alice bob", "did you mean 'challenge' or 'challenges'? toy commands:"),
        ("toy acept 101 alice pw", "toy commands:"),  # the old word 'accept' is no longer offered
        ("zzz", "commands: all, broadcast,"),
    ],
)
def test_a_near_miss_gets_did_you_mean_among_what_help_lists(text: str, fix_starts: str) -> None:
    with pytest.raises(UnknownCommand) as raised:
        parse_command(text, (*GAMES, "majorities"))
    assert raised.value.fix.startswith(fix_starts)
    assert "add," not in raised.value.fix and "delete" not in raised.value.fix and "reject" not in raised.value.fix


def test_an_unknown_command_error_lists_exactly_what_help_lists() -> None:
    with pytest.raises(UnknownCommand) as raised:
        parse_command("zzz", GAMES)
    in_error = set(" ".join(raised.value.fix.split()).split("commands: ")[1].split(";")[0].split(", "))
    everybody = overview().split("Commands for everybody:\n")[1].split("\n\n")[0]
    in_help = {line.split()[0] for line in everybody.splitlines() if not line.startswith("      ")}
    assert in_error == in_help and "add" not in in_help and "delete" not in in_help
    with pytest.raises(UnknownCommand) as raised:
        parse_command("toy zzz", GAMES)
    in_error = set(" ".join(raised.value.fix.split()).split("toy commands: ")[1].split(";")[0].split(", "))
    per_game = overview().split("(replace GAME by its name):\n")[1].split("\n\n")[0]
    in_help = {line.split()[1] for line in per_game.splitlines() if not line.startswith("      ")}
    assert in_error == in_help and "accept" not in in_help and "challenges" in in_help
