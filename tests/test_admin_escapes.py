"""What a stranger writes reaches the operator's terminal only as visible
escapes (issue 35, F8): a stored mail whose Subject, From name and body
hold terminal controls (clear the screen, set the window title, OSC 52 to
the clipboard, C1 controls, DEL, bidi overrides and zero-width
characters), shown by every display of `pbmserv-admin`."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
import tty
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import func, select, update

from pbmserv.cli.admin import cli as admin_cli
from pbmserv.runtime import Runtime
from pbmserv.store.models import InboundMail, OutboxMail
from tests.mailtools import send, send_raw, signup
from tests.test_admin import env, read_to_the_end  # noqa: F401  (env: the fixture, a pbmserv-admin process's settings)

BIN = Path(sys.executable).parent
#: what no display may write: C0 controls but newline and tab, DEL, C1
#: controls, and the bidi and zero-width format characters
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff\u2028\u2029]")
ATTACK = "\x1b[2J\x1b]0;pwned\x07\x1b]52;c;cm0gLXJmIH4=\x07\x9b31m\x7f\u202egnp.exe\u200b"


def hostile_mail(sender: str) -> bytes:
    """A stranger's mail with the controls raw in its Subject, its From name and its body, as SMTP takes it."""
    return (
        f"From: Eve{ATTACK} <{sender}>\r\nTo: pbmserv@localhost\r\nSubject: help{ATTACK}\r\n"
        f"Message-ID: <hostile@example.net>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Transfer-Encoding: 8bit\r\n\r\nhello\r\n{ATTACK}\r\n\tindented\r\n"
    ).encode()


@pytest.fixture
def hostile(runtime: Runtime) -> dict[str, str]:
    """A stranger's hostile mail stored and answered; a player's move whose
    comment holds the same, and an outbox mail whose delivery error does.
    The ids of the two inbound mails."""
    signup(runtime, "alice", "secret1")
    signup(runtime, "bob", "secret2")
    send(runtime, "alice@example.org", "toy challenge alice bob")
    send(runtime, "alice@example.org", "toy move 101 alice secret1 b2", f"good luck{ATTACK}\n\tsee you")
    send_raw(runtime, hostile_mail("eve@example.net"), "eve@example.net")
    with runtime.sessions.begin() as session:
        session.execute(update(OutboxMail).where(OutboxMail.id == 1).values(status="dead", last_error=f"550 {ATTACK}"))
        stranger = session.scalar(select(InboundMail.id).where(InboundMail.envelope_sender == "eve@example.net"))
        move = session.scalar(select(func.max(InboundMail.id)).where(InboundMail.envelope_sender == "alice@example.org"))
    return {"stranger": str(stranger), "move": str(move)}


def invoke(env: dict[str, str], *args: str) -> str:  # noqa: F811
    """`pbmserv-admin ARGS` in this process, its output as a terminal would get it (click strips no colour codes)."""
    changes: dict[str, str | None] = {name: value for name, value in env.items() if os.environ.get(name) != value}
    result = CliRunner(mix_stderr=False).invoke(admin_cli, list(args), env=changes, color=True, prog_name="pbmserv-admin")
    assert result.exit_code == 0, (result.stderr, result.exception)
    return result.stdout


def on_a_terminal(env: dict[str, str], *args: str) -> bytes:  # noqa: F811
    """The bytes the installed `pbmserv-admin ARGS` writes to a terminal (raw: no newline translation)."""
    leader, follower = pty.openpty()
    tty.setraw(follower)
    with os.fdopen(leader, "rb", buffering=0) as terminal:
        result = subprocess.run([BIN / "pbmserv-admin", *args], env=env, stdout=follower, stderr=subprocess.PIPE, timeout=60)
        os.close(follower)
        shown = read_to_the_end(terminal)
    assert result.returncode == 0, result.stderr
    return shown


def test_the_escape_of_each_kind_of_character() -> None:
    from pbmserv.cli.admin_common import printable  # here, so that the other tests run on code without it

    assert printable("a\x1b[2J\x07\x7f\x9b\u202e\u200b\u00ad\ufeff\u2028\U000e0041 é 日本\n\tb") == (
        "a\\x1b[2J\\x07\\x7f\\x9b\\u202e\\u200b\\xad\\ufeff\\u2028\\U000e0041 é 日本\n\tb"
    )
    assert printable("cell\nwith\ttab\r", lines=False) == "cell\\nwith\\ttab\\r"


def test_a_stored_hostile_mail_reaches_the_terminal_escaped(hostile: dict[str, str], env: dict[str, str]) -> None:  # noqa: F811
    shown = on_a_terminal(env, "inbound", "show", hostile["stranger"]).decode()
    assert "Subject: help\\x1b[2J\\x1b]0;pwned\\x07\\x1b]52;c;cm0gLXJmIH4=\\x07\\x9b31m\\x7f\\u202egnp.exe\\u200b" in shown
    assert "From: Eve\\x1b[2J" in shown and "\nhello\n" in shown and "\n\tindented\n" in shown
    assert RAW_CONTROL.search(shown) is None, RAW_CONTROL.search(shown)


@pytest.mark.parametrize("command", [
    ("inbound", "list"), ("inbound", "show", "stranger"), ("inbound", "show", "move"), ("outbox", "list"),
    ("outbox", "show", "1"), ("users", "list"), ("users", "show", "alice"), ("games", "list"),
    ("games", "show", "toy", "101"), ("games", "show", "toy", "101", "--seat", "2"), ("games", "export", "toy", "101"),
])
def test_no_display_writes_a_raw_control_character(
    hostile: dict[str, str], env: dict[str, str], command: tuple[str, ...],  # noqa: F811
) -> None:
    mails = invoke(env, "outbox", "list", "--json")
    assert "\\u001b" in mails, "the delivery error holds the attack (JSON escapes it itself)"
    shown = invoke(env, *(hostile.get(word, word) for word in command))
    assert RAW_CONTROL.search(shown) is None, (command, RAW_CONTROL.search(shown), shown)
    if command in (("inbound", "show", "stranger"), ("outbox", "list")):
        assert "\\x1b]52;c;" in shown, shown
