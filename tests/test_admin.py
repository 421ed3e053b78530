"""`pbmserv-admin` as an operator uses it: a real process on the test
database (SQLite, and PostgreSQL in the second run), with the mail that
makes the accounts and boards processed for real beforehand."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import BinaryIO

import click
import pytest
from click.testing import CliRunner
from sqlalchemy import select, update

from pbmserv.cli.admin import cli as admin_cli
from pbmserv.runtime import Runtime
from pbmserv.store.models import Board, OutboxMail, User
from tests.conftest import START
from tests.mailtools import body, send, signup

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


@pytest.fixture
def env(database_url: str, key_file: str, tmp_path: Path) -> dict[str, str]:
    """What a `pbmserv-admin` process on the test database needs: the toy game, cheap password hashes."""
    environ = {
        **os.environ,
        "PBMSERV_DATABASE_URL": database_url,
        "PBMSERV_KEY_FILE": key_file,
        "PBMSERV_EXTRA_GAMES": "tests.toygame:Toy",
        "PBMSERV_PASSWORD_TIME_COST": "1",
        "PBMSERV_PASSWORD_MEMORY_KIB": "1024",
        "PYTHONPATH": str(REPO),
    }
    environ.pop("PBMSERV_CONFIG", None)
    return environ


@dataclass
class Finished:
    returncode: int
    stdout: str
    stderr: str


def run(env: dict[str, str], *args: str, stdin: str = "") -> Finished:
    """`pbmserv-admin ARGS` with `env`, run in this process: the tool's own
    code, without a new interpreter's start-up (a second) for each of the
    many calls here; the installed script itself runs in the tests of
    --version and of the progress bar."""
    changes: dict[str, str | None] = {name: value for name, value in env.items() if os.environ.get(name) != value}
    changes.update({name: None for name in os.environ if name not in env})
    result = CliRunner(mix_stderr=False).invoke(admin_cli, list(args), input=stdin, env=changes, prog_name="pbmserv-admin")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Finished(result.exit_code, result.stdout, result.stderr)


def admin(env: dict[str, str], *args: str, stdin: str = "") -> str:
    result = run(env, *args, stdin=stdin)
    assert result.returncode == 0, result.stderr
    return result.stdout


def refused(env: dict[str, str], *args: str, stdin: str = "", code: int = 1) -> str:
    """The stderr of a command that must fail with exit `code`."""
    result = run(env, *args, stdin=stdin)
    assert result.returncode == code, (result.stdout, result.stderr)
    return result.stderr


@pytest.fixture
def secret_board(runtime: Runtime) -> Runtime:
    """alice and bob on toy board 101 with secret squares (a1 and c3), then
    alice's move b2, so bob is to move."""
    signup(runtime, "alice", "secret1")
    signup(runtime, "bob", "secret2")
    send(runtime, "alice@example.org", "toy challenge -secret alice bob")
    send(runtime, "alice@example.org", "toy move 101 alice secret1 bonus a1")
    send(runtime, "bob@example.org", "toy move 101 bob secret2 bonus c3")
    send(runtime, "alice@example.org", "toy move 101 alice secret1 b2")
    return runtime


# -- the tool as a whole ---------------------------------------------------------------
def test_both_tools_print_the_installed_version() -> None:
    for tool in ("pbmserv", "pbmserv-admin"):
        result = subprocess.run([BIN / tool, "--version"], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        assert result.stdout == f"{tool}, version {version('pbmserv')}\n"


def test_every_command_and_group_says_what_it_does() -> None:
    def walk(command: click.Command, path: str) -> list[tuple[str, click.Command]]:
        found = [(path, command)]
        for name, sub in getattr(command, "commands", {}).items():
            found += walk(sub, f"{path} {name}")
        return found

    commands = walk(admin_cli, "pbmserv-admin")
    assert len(commands) > 20
    assert [path for path, command in commands if not (command.help or "").strip()] == []
    listing = subprocess.run(
        [BIN / "pbmserv-admin", "users", "list", "--help"], capture_output=True, text=True, timeout=60,
    ).stdout
    assert "List every account" in listing and "Columns: userid, addresses" in listing and "--json" in listing


def test_json_goes_before_or_after_the_subcommand(secret_board: Runtime, env: dict[str, str]) -> None:
    for command in (
        ["users", "list"], ["users", "show", "alice"], ["games", "list"], ["inbound", "list"], ["inbound", "show", "1"],
        ["outbox", "list", "--limit", "3"], ["outbox", "show", "1"], ["stats"],
    ):
        before = json.loads(admin(env, "--json", *command))
        after = json.loads(admin(env, *command, "--json"))
        assert before == after and before, command


def test_times_are_printed_in_utc_with_their_offset(secret_board: Runtime, env: dict[str, str]) -> None:
    at = START.isoformat()  # the test clock: 2026-01-05T09:00:00+00:00
    assert json.loads(admin(env, "users", "list", "--json"))[0]["since"] == at
    assert f"alice   alice@example.org  {at}  -\n" in admin(env, "users", "list")
    assert {row["updated"] for row in json.loads(admin(env, "games", "list", "--json"))} == {at}
    assert {row["received"] for row in json.loads(admin(env, "inbound", "list", "--json"))} == {at}
    assert {row["next_try"] for row in json.loads(admin(env, "outbox", "list", "--json"))} == {at}
    exported = json.loads(admin(env, "games", "export", "toy", "101"))
    assert [move["time"] for move in exported["moves"]] == [at, at, at]
    assert exported["created"] == exported["updated"] == at


def test_argument_mistakes_are_refused_with_a_reason(secret_board: Runtime, env: dict[str, str]) -> None:
    assert "no such game type chess; known: majorities, majority," in refused(env, "games", "show", "chess", "1")
    assert "no such game type chess; known:" in refused(env, "games", "list", "chess")
    assert "'notanumber' is not a valid integer" in refused(env, "games", "show", "toy", "notanumber", code=2)
    assert "no toy board 999" in refused(env, "games", "show", "toy", "999")
    assert "-1 is not in the range x>=1" in refused(env, "outbox", "list", "--limit", "-1", code=2)
    assert "-1 is not in the range x>=1" in refused(env, "inbound", "list", "--limit", "-1", code=2)
    for wrong in (["games", "replay"], ["games", "replay", "toy"], ["games", "replay", "--all", "toy", "101"]):
        assert "name GAME_TYPE and NUMBER, or give --all [GAME_TYPE]" in refused(env, *wrong, code=2)
    assert "--output goes with --all" in refused(env, "games", "export", "toy", "101", "--output", "x", code=2)
    assert "name mail ids or give --all-dead" in refused(env, "outbox", "retry", code=2)
    assert "name mail ids or give --all-dead" in refused(env, "outbox", "retry", "1", "--all-dead", code=2)


# -- games -----------------------------------------------------------------------------
def test_games_show_renders_a_seat_by_number_or_userid_and_refuses_one_the_board_lacks(
    secret_board: Runtime, env: dict[str, str],
) -> None:
    public = admin(env, "games", "show", "toy", "101")
    as_alice = admin(env, "games", "show", "toy", "101", "--seat", "1")
    assert "Your secret square: a1" in as_alice and "c3" not in as_alice.split("Moves:")[0]
    assert "secret square" not in public
    assert admin(env, "games", "show", "TOY", "101", "--seat", "Alice") == as_alice
    assert "Your secret square: c3" in admin(env, "games", "show", "toy", "101", "--seat", "2")
    for seat in ("7", "0", "-1", "carol"):
        error = refused(env, "games", "show", "toy", "101", "--seat", seat)
        assert f"board 101 has no seat {seat}: it has seats 1 and 2 (alice, bob)" in error


def test_replay_and_export_of_every_board(secret_board: Runtime, env: dict[str, str], tmp_path: Path) -> None:
    send(secret_board, "alice@example.org", "toy challenge alice bob")
    assert admin(env, "games", "replay", "--all") == "2 of 2 board(s) replay to the stored state\n"
    lines = admin(env, "games", "export", "--all", "toy").splitlines()
    assert [(json.loads(line)["board"], len(json.loads(line)["moves"])) for line in lines] == [(101, 3), (102, 0)]
    assert admin(env, "games", "export", "--all", "--output", str(tmp_path / "out")) == (
        f"2 board(s) written to {tmp_path / 'out'}\n"
    )
    written = json.loads((tmp_path / "out" / "toy-101.json").read_text())
    assert written == json.loads(lines[0])
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["toy-101.json", "toy-102.json"]

    with secret_board.sessions.begin() as session:  # as a bug or a hand-edit would leave it
        session.execute(update(Board).where(Board.board == 101).values(move_count=2, state={"broken": True}))
    result = run(env, "games", "replay", "--all", "toy")
    assert result.returncode == 1
    assert result.stdout == (
        "toy board 101: replaying 2 moves does not give the stored state\n"
        "1 of 2 board(s) replay to the stored state\n"
    )
    assert "board 101: replaying 2 moves does not give the stored state" in refused(env, "games", "replay", "toy", "101")


def read_to_the_end(terminal: BinaryIO) -> bytes:
    """All a pseudo-terminal's leader reads until its last writer has closed it."""
    shown = b""
    try:
        while chunk := terminal.read(4096):
            shown += chunk
    except OSError:  # the terminal is gone once its last writer has closed it
        pass
    return shown


def test_a_progress_bar_shows_on_a_terminal_only(secret_board: Runtime, env: dict[str, str]) -> None:
    quiet = run(env, "games", "export", "--all")
    assert quiet.returncode == 0 and quiet.stderr == "" and json.loads(quiet.stdout)["board"] == 101

    leader, follower = pty.openpty()
    with os.fdopen(leader, "rb", buffering=0) as terminal:
        result = subprocess.run(
            [BIN / "pbmserv-admin", "games", "replay", "--all"], env=env, stdout=subprocess.PIPE, stderr=follower,
            text=True, timeout=60,
        )
        os.close(follower)
        shown = read_to_the_end(terminal)
    assert result.returncode == 0
    assert result.stdout == "1 of 1 board(s) replay to the stored state\n"
    assert b"replaying" in shown and b"100%" in shown


# -- accounts --------------------------------------------------------------------------
def test_users_show_tells_about_one_account(secret_board: Runtime, env: dict[str, str]) -> None:
    send(secret_board, "alice@example.org", "change address alice secret1 alice@example.org alice@home.example")
    send(secret_board, "alice@example.org", "toy challenge alice bob")
    send(secret_board, "alice@example.org", "toy resign 102 alice secret1")
    shown = json.loads(admin(env, "users", "show", "ALICE", "--json"))
    at = START.isoformat()
    assert shown == {
        "userid": "alice",
        "addresses": [f"alice@example.org (confirmed {at})", "alice@home.example (not confirmed)"],
        "since": at, "boards_active": 1, "boards_finished": 1, "vacation_since": None, "disabled_since": None,
        "disabled_reason": None, "last_mail": at,
    }
    assert "boards_active:    1\nboards_finished:  1\nvacation_since:   -\n" in admin(env, "users", "show", "alice")
    assert "no account carol" in refused(env, "users", "show", "carol")


def test_a_disabled_account_is_refused_by_mail_and_its_board_goes_on(secret_board: Runtime, env: dict[str, str]) -> None:
    assert admin(env, "users", "disable", "bob", "--reason", "abusive chat") == "user bob: disabled\n"
    assert "user bob: not changed: it is disabled already" in refused(env, "users", "disable", "bob")
    assert "user carol: not changed: no such account" in refused(env, "users", "disable", "carol")
    listed = {row["userid"]: row["disabled"] for row in json.loads(admin(env, "users", "list", "--json"))}
    assert listed["alice"] is None and listed["bob"].endswith("+00:00")
    assert json.loads(admin(env, "users", "show", "bob", "--json"))["disabled_reason"] == "abusive chat"

    [(to, answer)] = send(secret_board, "bob@example.org", "toy move 101 bob secret2 a3")
    assert to == "bob@example.org" and str(answer["Subject"]) == "Toy Board 101 Error"
    text = " ".join(body(answer).split())
    assert "The account 'bob' has been disabled by the operator of this server: abusive chat." in text
    assert "write to postmaster@localhost, who runs this server, to have it enabled again" in text
    [(_, wrong)] = send(secret_board, "bob@example.org", "toy move 101 bob notmine a3")
    assert "The password for 'bob' is wrong." in body(wrong), "only the password's owner learns of the reason"
    assert "Toy Board 101" in str(send(secret_board, "carol@example.org", "toy show 101")[0][1]["Subject"])
    [(_, challenge)] = send(secret_board, "alice@example.org", "toy challenge alice bob")
    assert "The account 'bob' has been disabled by the operator of this server; a challenge may not name it." in (
        " ".join(body(challenge).split())
    ), "nor may anybody start a board that its player could only forfeit"

    assert admin(env, "users", "enable", "bob") == "user bob: enabled\n"
    assert "user bob: not changed: it is not disabled" in refused(env, "users", "enable", "bob")
    moved = send(secret_board, "bob@example.org", "toy move 101 bob secret2 a3")
    assert {str(mail["Subject"]) for _, mail in moved} == {"Toy Board 101"}


def test_set_password_from_stdin_or_a_prompt_never_echoes_it(secret_board: Runtime, env: dict[str, str]) -> None:
    result = run(env, "users", "set-password", "alice", "--stdin", stdin="brand-new\n")
    assert result.returncode == 0 and result.stdout == "user alice: password changed\n"
    assert "brand-new" not in result.stdout + result.stderr
    with secret_board.sessions() as session:
        stored = session.scalar(select(User.password_hash).where(User.userid == "alice"))
    assert stored.startswith("$argon2id$") and "brand-new" not in stored
    assert "password for 'alice' is wrong" in body(send(secret_board, "alice@example.org", "toy resign 101 alice secret1")[0][1])
    assert "Game won by bob" in body(send(secret_board, "alice@example.org", "toy resign 101 alice brand-new")[0][1])

    # without a terminal getpass reads the prompt's answers from standard input
    prompted = run(env, "users", "set-password", "bob", stdin="other-pw\nother-pw\n")
    assert prompted.returncode == 0, prompted.stderr
    assert "other-pw" not in prompted.stdout + prompted.stderr
    mismatch = subprocess.run(  # the installed script, without a terminal: the prompt ends at the end of its input
        [BIN / "pbmserv-admin", "users", "set-password", "bob"], input="first-pw\nsecond-pw\n", env=env,
        capture_output=True, text=True, timeout=60, start_new_session=True,
    )
    assert mismatch.returncode == 1 and "The two entered values do not match." in mismatch.stdout
    send(secret_board, "alice@example.org", "toy challenge alice bob")
    assert "Game won by" in body(send(secret_board, "bob@example.org", "toy resign 102 bob other-pw")[0][1])

    assert "a password needs at least 4 characters" in refused(env, "users", "set-password", "bob", "--stdin", stdin="abc\n")
    assert "a password is one word" in refused(env, "users", "set-password", "bob", "--stdin", stdin="two words\n")
    assert "no such account" in refused(env, "users", "set-password", "carol", "--stdin", stdin="goodpass\n")


def test_set_address_replaces_the_addresses_confirmed(secret_board: Runtime, env: dict[str, str]) -> None:
    assert admin(env, "users", "set-address", "alice", "Alice@New.example", "alice@example.org") == (
        "user alice: addresses set\n"
    )
    addresses = json.loads(admin(env, "users", "show", "alice", "--json"))["addresses"]
    assert [a.split(" (")[0] for a in addresses] == ["alice@new.example", "alice@example.org"]
    assert all("(confirmed " in a for a in addresses)
    moved = send(secret_board, "bob@example.org", "toy move 101 bob secret2 a3")
    assert "alice@new.example" in {to for to, _ in moved}, "an address the operator sets gets mail at once"

    for bad, why in [
        ("Alice <a@example.org>", "is not a plain mail address"),
        ("a@b@example.org", "is not a plain mail address"),
        ("x" * 65 + "@example.org", "has more than 64 characters before the @"),
        ("a@" + ".".join([label * 63 for label in "bcde"]) + ".org", "is longer than 254 characters"),
    ]:
        assert f"{why}" in refused(env, "users", "set-address", "alice", "ok@example.org", bad)
    six = [f"a{n}@example.org" for n in range(6)]
    assert "at most 5 addresses, and this names 6" in refused(env, "users", "set-address", "alice", *six)
    assert "no such account" in refused(env, "users", "set-address", "carol", "c@example.org")
    assert "Missing argument 'ADDRESSES...'" in refused(env, "users", "set-address", "alice", code=2)
    addresses = json.loads(admin(env, "users", "show", "alice", "--json"))["addresses"]
    assert [a.split(" (")[0] for a in addresses] == ["alice@new.example", "alice@example.org"], "refused: unchanged"


# -- mail ------------------------------------------------------------------------------
def test_outbox_show_and_retry_say_what_they_did(secret_board: Runtime, env: dict[str, str]) -> None:
    shown = admin(env, "outbox", "show", "1")
    assert shown.startswith("id:               1\n")
    assert "recipient:        alice@example.org\nkind:             confirm\n" in shown
    assert "status:           sent\nattempts:         1\n" in shown
    assert "\nSubject: confirm alice nx9zcu5zfa\n" in shown and "Welcome, alice." in shown
    assert "no outbox mail 999" in refused(env, "outbox", "show", "999")

    with secret_board.sessions.begin() as session:
        session.execute(update(OutboxMail).where(OutboxMail.id.in_([2, 3])).values(
            status="dead", attempts=8, last_error="550 no such user",
        ))
    dead = json.loads(admin(env, "outbox", "show", "2", "--json"))
    assert (dead["status"], dead["attempts"], dead["last_error"]) == ("dead", 8, "550 no such user")

    result = run(env, "outbox", "retry", "2", "1", "99999")
    assert result.returncode == 1
    assert result.stdout == "outbox 2: due again\n"
    assert result.stderr == "outbox 1: not changed: it has been sent already\noutbox 99999: not changed: no such mail\n"
    again = json.loads(admin(env, "outbox", "show", "2", "--json"))
    assert (again["status"], again["attempts"]) == ("pending", 0)
    assert admin(env, "outbox", "retry", "--all-dead") == "1 mail(s) due again\n"
    assert {row["status"] for row in json.loads(admin(env, "outbox", "list", "--status", "dead", "--json"))} == set()
