"""Every field of the command language has a maximum length (issue 35,
F13), checked as the command is read, before anything is done: past it
the command is refused with an error that names the field and its
maximum (and never shows a password back); at it, the command is read."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbmserv.protocol import parse_command
from pbmserv.protocol.errors import BadArgument, ParseError
from pbmserv.protocol.syntax import LONGEST_PASSWORD
from pbmserv.runtime import Runtime
from pbmserv.service import operator
from pbmserv.store.models import User
from tests.mailtools import body, send, signup

GAMES = ("toy", "majorities")

#: every command that takes a password, `{}` where it stands
PASSWORD_COMMANDS = [
    "signup alice {}", "add alice {}", "change password alice {} newpass1", "change password alice oldpass1 {}",
    "change address alice {}", "signoff alice {}", "delete alice {}", "message alice {} bob", "broadcast alice {}",
    "vacation alice {} on", "toy move 101 alice {} b2", "toy queue 101 alice {} b2", "toy preview 101 alice {} b2",
    "toy resign 101 alice {}", "toy moves 101 alice {}", "toy showas alice {} 101", "toy subscribe 101 alice {}",
    "toy unsubscribe all alice {}", "toy notify 101 alice {}", "toy chat 101 alice {}", "toy accept alice {}",
    "toy reject alice {}", "toy limit alice {} 5", "toy seek alice {} 1",
]


def word_of(length: int, pattern: str) -> str:
    return (pattern * (length // len(pattern) + 1))[:length]


def refusal(text: str) -> str:
    with pytest.raises(BadArgument) as raised:
        parse_command(text, GAMES)
    return str(raised.value)


patterns = st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7e), min_size=1, max_size=6)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(PASSWORD_COMMANDS), st.integers(LONGEST_PASSWORD + 1, 300_000), patterns)
def test_a_password_past_128_characters_is_refused_unshown(template: str, length: int, pattern: str) -> None:
    password = word_of(length, pattern)
    message = refusal(template.format(password))
    assert "password has" in message and f"at most {LONGEST_PASSWORD}" in message and f"{length:,} characters" in message
    assert password not in message


@settings(max_examples=50, deadline=None)
@given(st.sampled_from(PASSWORD_COMMANDS), patterns)
def test_a_password_of_128_characters_is_read(template: str, pattern: str) -> None:
    password = word_of(LONGEST_PASSWORD, pattern)
    command = parse_command(template.format(password), GAMES)
    assert password in {getattr(command, name, None) for name in ("password", "new_password")}


def test_an_old_and_a_new_password_are_told_apart() -> None:
    long = "p" * 129
    assert refusal(f"change password alice {long} newpass1").startswith("The old password has 129 characters")
    assert refusal(f"change password alice oldpass1 {long}").startswith("The new password has 129 characters")


#: (the command, `{}` where the field stands; the longest the field may be; what the refusal says)
LENGTHS = [
    ("signup {} pw12", 20, "a userid has 2 to 20"),
    ("toy history {}", 20, "a userid has 2 to 20"),
    ("signup alice pw12 {}@example.org", 254 - len("@example.org"), "an address has at most 254 characters"),
    ("toy challenge -size={} alice bob", 40 - len("-size="), "an option with its value has at most 40 characters"),
    ("toy move 101 alice pw12 {}", 200, "a move has at most 200"),
    ("toy queue 101 alice pw12 {}", 200, "a move has at most 200"),
    ("toy preview 101 alice pw12 b2;{}", 200, "a move has at most 200"),
    ("confirm alice {}", 16, "a code has at most 16"),
    ("help {}", 40, "a help topic has at most 40 characters"),
    ("list {}", 40, "a game name has at most 40 characters"),
]


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(LENGTHS), st.integers(1, 250_000))
def test_every_field_past_its_length_is_refused_naming_it(case: tuple[str, int, str], beyond: int) -> None:
    template, longest, says = case
    message = refusal(template.format(word_of(longest + beyond, "ab")))
    assert says in message, message
    assert len(message) < 300, "the field is not shown back whole"


@pytest.mark.parametrize(("template", "longest", "says"), LENGTHS)
def test_every_field_at_its_length_is_read(template: str, longest: int, says: str) -> None:
    try:
        parse_command(template.format(word_of(longest, "ab")), GAMES)
    except ParseError as error:
        assert says not in str(error), error


#: (the command, `{}` where the repeated words stand, the word; the most there may be; what the refusal says)
COUNTS = [
    ("signup alice pw12 {}", "a@example.org", 5, "An account has at most 5 addresses, and this names"),
    ("change address alice pw12 {}", "a@example.org", 5, "An account has at most 5 addresses, and this names"),
    ("toy challenge {} alice", "-opt", 10, "options: at most 10 may be named"),
    ("toy challenge {}", "bob", 10, "players: at most 10 may be named"),
    ("toy show {}", "bob", 10, "players: at most 10 may be named"),
    ("toy games {} all", "bob", 10, "players: at most 10 may be named"),
    ("message alice pw12 {}", "bob", 10, "players to send to: at most 10 may be named"),
    ("toy show {}", "101", 10, "more than the 10 it shows at a time"),
    ("toy showas alice pw12 {}", "101", 10, "more than the 10 it shows at a time"),
    ("help {}", "toy", 3, "words after 'help': at most 3 may be named"),
    ("list {}", "toy", 20, "games: at most 20 may be named"),
]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(COUNTS), st.integers(1, 20_000))
def test_every_list_past_its_count_is_refused_naming_it(case: tuple[str, str, int, str], beyond: int) -> None:
    template, word, most, says = case
    message = refusal(template.format(" ".join([word] * (most + beyond))))
    assert says in message and f"{most + beyond}" in message.replace(",", ""), message


def test_a_preview_tries_at_most_50_moves() -> None:
    assert "moves to preview: at most 50 may be named" in refusal("toy preview 101 alice pw12 " + ";".join(["b2"] * 51))
    parse_command("toy preview 101 alice pw12 " + ";".join(["b2"] * 50), GAMES)


@pytest.mark.parametrize("text", [
    "toy show 101 1234567890", "toy move 1234567890 alice pw12 b2", "toy showas alice pw12 101#1234567890",
    "toy preview 1234567890 alice pw12 b2",
])
def test_a_board_or_move_number_has_at_most_9_digits(text: str) -> None:
    assert "at most 9 digits" in refusal(text)


def test_a_mail_with_a_200_kb_password_is_refused_before_any_account_is_made(runtime: Runtime) -> None:
    password = "x" * 200_000
    [(recipient, message)] = send(runtime, "mallory@example.net", f"signup mallory {password}")
    text = body(message)
    assert recipient == "mallory@example.net"
    assert "The password has 200,000 characters: a password has at most 128." in " ".join(text.split())
    assert "x" * 200 not in text
    with runtime.sessions() as session:
        assert session.query(User).count() == 0


def test_the_operator_cannot_set_a_password_no_command_would_take(runtime: Runtime) -> None:
    signup(runtime, "alice", "secret1")
    passwords = runtime.processor.passwords
    assert operator.set_password(runtime.engine, passwords, "alice", "x" * 129) == (
        "a password has at most 128 characters: no command would take a longer one"
    )
    assert operator.set_password(runtime.engine, passwords, "alice", "x" * 128) is None
