"""The command language: exact parses for every command, typed errors for bad
ones, and (hypothesis) no text at all that makes the parser crash."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pbmserv.protocol import (
    ParseError,
    parse_command,
    parse_request,
    probable_passwords,
)
from pbmserv.protocol.commands import (
    PROPOSAL_ACTIONS,
    BoardRef,
    Challenge,
    ChangeAddress,
    ChangePassword,
    GameHelp,
    Help,
    ListBoards,
    ListGames,
    Move,
    Resign,
    ShowBoards,
    ShowUsers,
    Signoff,
    Signup,
)
from pbmserv.protocol.errors import (
    BadArgument,
    EmptyCommand,
    MissingArgument,
    UnknownCommand,
)
from pbmserv.runtime import Runtime
from tests.mailtools import body, send, signup

GAMES = ("majorities", "toy")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("help", Help()),
        ("HELP Move", Help(("move",))),
        ("signup Alice Secret1", Signup("alice", "Secret1")),
        ("add bob pw12 Bob@Example.org", Signup("bob", "pw12", ("bob@example.org",))),
        ("change password alice Old1 New2", ChangePassword("alice", "Old1", "New2")),
        ("change address alice Pw a@x.org b@y.org", ChangeAddress("alice", "Pw", ("a@x.org", "b@y.org"))),
        ("signoff alice Pw", Signoff("alice", "Pw")),
        ("delete alice Pw", Signoff("alice", "Pw")),
        ("list", ListGames()),
        ("list Majorities toy", ListGames(("majorities", "toy"))),
        ("majorities help", GameHelp("majorities")),
        ("Majorities Challenge -size=5 Alice bob", Challenge("majorities", ("alice", "bob"), (("size", "5"),))),
        ("toy challenge -secret --nagtime=3 --forfeittime=10 a1 b2",
         Challenge("toy", ("a1", "b2"), (("secret", None),), (("nagtime", 3), ("forfeittime", 10)))),
        ("toy challenge -secret alice bob", Challenge("toy", ("alice", "bob"), (("secret", None),))),
        ("toy challenge alice 10 -secret", Challenge("toy", ("alice", "10"), (("secret", None),))),
        ("majorities move 101 alice PW a5,f4", Move("majorities", 101, "alice", "PW", "a5,f4")),
        ("majorities move 101 alice PW A5, f4", Move("majorities", 101, "alice", "PW", "A5, f4")),
        ("majorities move 101 alice PW a5,f4#7", Move("majorities", 101, "alice", "PW", "a5,f4", 7)),
        ("majorities move 101 alice PW a5,f4 #7", Move("majorities", 101, "alice", "PW", "a5,f4", 7)),
        ("toy move 3 alice PW hide d7", Move("toy", 3, "alice", "PW", "hide d7")),
        ("toy move 3 alice PW L:c4 then L:d5,L:e5", Move("toy", 3, "alice", "PW", "L:c4 then L:d5,L:e5")),
        ("toy move 3 alice PW Resign", Resign("toy", 3, "alice", "PW")),
        ("toy move 3 alice PW resign #4", Resign("toy", 3, "alice", "PW", 4)),
        ("toy resign 3 alice PW", Resign("toy", 3, "alice", "PW")),
        ("toy resign 3 alice PW #9", Resign("toy", 3, "alice", "PW", 9)),
        ("toy show 101 102#3", ShowBoards("toy", (BoardRef(101), BoardRef(102, 3)))),
        ("toy show Alice bob", ShowUsers("toy", ("alice", "bob"), "active")),
        ("toy show alice NEXT", ShowUsers("toy", ("alice",), "next")),
        ("toy games", ListBoards("toy")),
        ("toy games alice inactive", ListBoards("toy", ("alice",), "inactive")),
        ("toy games all", ListBoards("toy", (), "all")),
    ],
)
def test_parses(text: str, expected: object) -> None:
    assert parse_command(text, GAMES) == expected


@pytest.mark.parametrize(
    ("text", "error", "says"),
    [
        ("", EmptyCommand, "empty"),
        ("fly away", UnknownCommand, "'fly' is neither a command nor a game"),
        ("toy", MissingArgument, "must be followed by a command"),
        ("toy castle", UnknownCommand, "'castle' is not a toy command"),
        ("signup alice", MissingArgument, "password is missing"),
        ("signup a pw", BadArgument, "'a' is not a userid"),
        ("signup alice pw not-an-address", BadArgument, "not a mail address"),
        ("change pw alice a b", BadArgument, "'password' or 'address'"),
        ("change password alice a b c", BadArgument, "one word"),
        ("signoff alice pw extra", BadArgument, "only your userid and password"),
        ("toy move 101 alice", MissingArgument, "password is missing"),
        ("toy move 101 alice pw", MissingArgument, "move itself is missing"),
        ("toy move 101 alice pw #3", MissingArgument, "move itself is missing"),
        ("toy move x1 alice pw a1", BadArgument, "not a board number"),
        ("toy resign 101 alice pw now", BadArgument, "guard"),
        ("toy challenge", MissingArgument, "userids"),
        ("toy challenge --speed=3 a1 b1", BadArgument, "not a timer option"),
        ("toy challenge --nagtime=x a1 b1", BadArgument, "whole number of days"),
        ("toy challenge -=3 a1 b1", BadArgument, "not an option"),
        ("toy challenge alice bob -size 3", BadArgument, "write -size=3, one word"),
        ("toy challenge -size 10 alice bob", BadArgument, "write -size=10, one word"),
        ("toy show", MissingArgument, "board numbers or userids"),
        ("toy show 101 alice", BadArgument, "not both"),
    ],
)
def test_errors_are_typed_and_explain(text: str, error: type[ParseError], says: str) -> None:
    with pytest.raises(error) as raised:
        parse_command(text, GAMES)
    assert says in raised.value.message
    assert raised.value.fix, "every parse error shows the right syntax"


def test_subject_prefixes_and_stars_are_ignored() -> None:
    request = parse_request("RE: Fwd: AW: ** toy move 101 alice pw b2 **", "comment text", GAMES)
    assert request.lines[0].command == Move("toy", 101, "alice", "pw", "b2")
    assert request.comment == "comment text"


def test_multiple_takes_one_command_per_body_line_and_no_comment() -> None:
    request = parse_request("multiple", "help\n\nlist\n   \ntoy fly", GAMES)
    assert [line.command for line in request.lines[:2]] == [Help(), ListGames()]
    assert isinstance(request.lines[2].error, UnknownCommand)
    assert request.comment == ""


def test_multiple_without_commands_is_an_error() -> None:
    request = parse_request("multiple", "", GAMES)
    assert isinstance(request.lines[0].error, EmptyCommand)


@pytest.mark.parametrize(
    ("text", "passwords"),
    [  # lines that could not be read: from one word before the password's place to the end
        ("signup al!ce s3cret", ("al!ce", "s3cret")),
        ("change password alice old", ("alice", "old")),
        ("majorities move alice PW 101 b2", ("PW", "101", "b2")),  # board and userid swapped
        ("toy move 101 PW b2", ("PW", "b2")),  # the userid, or the move, left out
        ("toy move 101 alice pw", ("alice", "pw")),  # the move left out
        ("chess move 101 alice pw e4", ("alice", "pw", "e4")),  # an unknown game still hides the password
        ("toy mvoe 101 alice pw e4", ("alice", "pw", "e4")),  # and an unknown verb in a move's shape
        ("Re: toy resign 101 alice", ("alice",)),
        ("pictures alice s3cret maybe", ("alice", "s3cret", "maybe")),  # a setting it does not know
        ("toy challenges alice s3cret perhaps", ("alice", "s3cret", "perhaps")),
        ("toy seek alice s3cret 1 -bot=soon", ("alice", "s3cret", "1", "-bot=soon")),  # a wait for the bot not in hours
        ("toy show 101", ()),
        ("help me", ()),
    ],
)
def test_probable_passwords_of_a_line_that_could_not_be_read(text: str, passwords: tuple[str, ...]) -> None:
    assert probable_passwords(text) == passwords


words = st.one_of(
    st.sampled_from(["help", "signup", "change", "password", "address", "move", "show", "games", "toy",
                     "majorities", "challenge", "resign", "multiple", "101", "101#2", "#3", "-size=5",
                     "--nagtime=2", "alice", "Re:", "**", "a1,b2"]),
    st.text(min_size=0, max_size=12),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(words, max_size=9).map(" ".join), st.text(max_size=40))
def test_any_text_parses_or_gives_a_typed_error(subject: str, body: str) -> None:
    request = parse_request(subject, body, GAMES)
    assert request.lines
    for line in request.lines:
        assert (line.command is None) != (line.error is None)
        if line.error is not None:
            assert line.error.message.strip()


@settings(max_examples=200, deadline=None)
@given(
    st.from_regex(r"[a-z0-9_.-]{2,20}", fullmatch=True),
    st.text(st.characters(blacklist_categories=("Z", "C")), min_size=1, max_size=20),
    st.integers(1, 10**6),
    st.text(st.characters(blacklist_categories=("Z", "C"), blacklist_characters="#"), min_size=1, max_size=20),
)
def test_move_round_trip(userid: str, password: str, board: int, move: str) -> None:
    assume(move.lower() not in ("resign", *PROPOSAL_ACTIONS))  # commands of their own in the move's place
    command = parse_command(f"toy MOVE {board} {userid.upper()} {password} {move}", GAMES)
    assert command == Move("toy", board, userid, password, move)


@pytest.mark.parametrize("subject", ["Re: Toy Board 101 bob", "RE: Fwd: toy board 101 bob", "Re: New Toy Board 101 alice", "Nag: Toy Board 101 bob"])
def test_a_reply_to_a_board_mail_reads_the_first_body_line(subject: str) -> None:
    request = parse_request(subject, "toy move 101 bob pw b2\nthe comment", GAMES)
    assert request.lines[0].command == Move("toy", 101, "bob", "pw", "b2")
    assert request.comment == "the comment" and request.passwords == ("pw",)


def test_a_reply_to_a_board_mail_without_a_command_says_where_it_goes() -> None:
    [line] = parse_request("Re: Toy Board 101 bob", "b2", GAMES).lines
    assert isinstance(line.error, UnknownCommand) and "'b2' is not a command either" in line.error.message
    assert "toy move 101 USERID PASSWORD MOVE" in line.error.fix and "Subject" in line.error.fix


@pytest.mark.parametrize(
    ("subject", "says", "fixed"),
    [
        (
            "parliament challenge -boards upper alice bob",
            "'-boards upper' reads upper as a player: write -boards=upper, one word.",
            "parliament challenge -boards=upper alice bob",
        ),
        (
            "synch challenge -order direction-first alice bob",
            "write -order=direction-first, one word.",
            "synch challenge -order=direction-first alice bob",
        ),
        (
            "plurality challenge alice bob -board",
            "-board needs its value after '=': -board=square|hex (default square).",
            "plurality challenge alice bob -board=hex",
        ),
    ],
)
def test_an_option_written_apart_from_a_word_value_is_refused_with_how_to_write_it(
    runtime: Runtime, subject: str, says: str, fixed: str,
) -> None:
    for userid in ("alice", "bob", "upper"):
        signup(runtime, userid, "secret")
    [(_, reply)] = send(runtime, "alice@example.org", subject)
    text = " ".join(body(reply).split())
    assert "Error" in reply["Subject"] and says in text
    assert "players, but the challenge names 3" not in text
    # written as one word, the same challenge starts a board
    assert all("Error" not in message["Subject"] for _, message in send(runtime, "alice@example.org", fixed))
