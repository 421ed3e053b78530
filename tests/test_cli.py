"""The command line tools as an operator and an MTA use them: real
processes, a real SQLite file, a real maildir."""

from __future__ import annotations

import json
import mailbox
import os
import subprocess
import sys
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path

import pytest

from tests.mailtools import make_mail

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def env_for(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update({
        "PBMSERV_DATABASE_URL": f"sqlite:///{tmp_path / 'pbmserv.db'}",
        "PBMSERV_MAIL_BACKEND": "maildir",
        "PBMSERV_MAILDIR": str(tmp_path / "mail" / "outbox"),
        "PBMSERV_KEY_FILE": str(tmp_path / "pbmserv.key"),  # required with PostgreSQL, which tests may set
        "PBMSERV_EXTRA_GAMES": "tests.toygame:Toy",
        "PBMSERV_PASSWORD_TIME_COST": "1",
        "PBMSERV_PASSWORD_MEMORY_KIB": "1024",
        "PYTHONPATH": str(REPO),
    })
    env.pop("PBMSERV_CONFIG", None)
    env.update(extra)
    return env


def receive(tmp_path: Path, raw: bytes, *, wait: bool = True, **extra: str) -> subprocess.CompletedProcess[bytes]:
    """`pbmserv receive`, processing the mail before it exits (--wait)
    unless `wait` is false; the first makes the database as an operator
    does, with `pbmserv-admin db upgrade` (`receive` makes none)."""
    if not (tmp_path / "pbmserv.db").exists() and "PBMSERV_DATABASE_URL" not in extra:
        admin(tmp_path, "db", "upgrade")
    return subprocess.run(
        [BIN / "pbmserv", "receive", *(["--wait"] if wait else [])], input=raw, env=env_for(tmp_path, **extra), cwd=tmp_path,
        capture_output=True, timeout=60,
    )


def receive_signup(tmp_path: Path, userid: str, password: str, address: str = "") -> None:
    """`signup` through `pbmserv receive --wait`, and the reply to its welcome that confirms the address."""
    address = address or f"{userid}@example.org"
    assert receive(tmp_path, make_mail(address, f"signup {userid} {password}")).returncode == 0
    [welcome] = [m for m in maildir_mails(tmp_path) if str(m["Subject"]).startswith(f"confirm {userid} ")]
    assert receive(tmp_path, make_mail(address, f"Re: {welcome['Subject']}")).returncode == 0


def admin(tmp_path: Path, *args: str) -> str:
    result = subprocess.run(
        [BIN / "pbmserv-admin", *args], env=env_for(tmp_path), cwd=tmp_path, capture_output=True, timeout=60, text=True,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def maildir_mails(tmp_path: Path) -> list[EmailMessage]:
    box = mailbox.Maildir(tmp_path / "mail" / "outbox", create=False)
    parser = BytesParser(policy=policy.default)
    mails = [parser.parsebytes(box.get_bytes(key)) for key in box.keys()]
    return sorted(mails, key=lambda m: (m["Date"], str(m["Message-ID"])))


def test_a_game_through_pbmserv_receive_into_a_maildir(tmp_path: Path) -> None:
    receive_signup(tmp_path, "alice", "secret1")
    receive_signup(tmp_path, "bob", "secret2")
    conversation = [
        ("alice@example.org", "toy challenge -secret alice bob"),
        ("alice@example.org", "toy move 101 alice secret1 bonus a1"),
        ("bob@example.org", "toy move 101 bob secret2 bonus c3"),
        ("alice@example.org", "toy move 101 alice secret1 b2"),
        ("bob@example.org", "toy move 101 bob secret2 a3"),
        ("alice@example.org", "toy resign 101 alice secret1"),
    ]
    for sender, subject in conversation:
        result = receive(tmp_path, make_mail(sender, subject))
        assert result.returncode == 0, result.stderr.decode()
    mails = maildir_mails(tmp_path)
    finals = {str(m["To"]): m.get_content() for m in mails if "Game won by" in m.get_content()}
    assert set(finals) == {"alice@example.org", "bob@example.org"}
    assert "Game won by bob: alice resigned." in finals["alice@example.org"]
    # each player sees their own secret square and only their own
    assert "Your secret square: a1" in finals["alice@example.org"]
    assert "Your secret square: c3" in finals["bob@example.org"]
    assert "c3" not in finals["alice@example.org"].split("Moves:")[0]
    # every mail answers one or is a board's first (docs/decisions/0144-one-thread-per-board.md)
    assert all(m["Auto-Submitted"] == "auto-replied" and (m["In-Reply-To"] or str(m["Message-ID"]).startswith("<board.")) for m in mails)
    assert len(mails) == 2 * 2 + 2 * 6  # two welcomes and their confirmations, then every step to both players

    assert "101" in admin(tmp_path, "games", "list")
    exported = json.loads(admin(tmp_path, "games", "export", "toy", "101"))
    assert [m["text"] for m in exported["moves"]] == ["bonus a1", "bonus c3", "b2", "a3", "resign"]
    assert "replay to the stored state" in admin(tmp_path, "games", "replay", "toy", "101")
    stats = json.loads(admin(tmp_path, "--json", "stats"))
    assert stats["inbound_done"] == len(conversation) + 4 and stats["outbox_sent"] == len(mails)  # and the signups


def test_receive_exits_75_when_the_mail_cannot_be_stored(tmp_path: Path) -> None:
    result = receive(
        tmp_path, make_mail("alice@example.org", "help"),
        PBMSERV_DATABASE_URL=f"sqlite:///{tmp_path / 'no' / 'such' / 'dir' / 'x.db'}",
    )
    assert result.returncode == 75
    assert b"try again later" in result.stderr


def test_a_bad_config_file_is_reported(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text("[mail\n")
    result = subprocess.run(
        [BIN / "pbmserv", "--config", str(tmp_path / "bad.toml"), "process"], env=env_for(tmp_path),
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 78
    assert "cannot read config file" in result.stderr


@pytest.mark.parametrize("status", ["pending", "sent", "dead"])
def test_outbox_list_filters(tmp_path: Path, status: str) -> None:
    receive(tmp_path, make_mail("alice@example.org", "help"))
    listing = json.loads(admin(tmp_path, "--json", "outbox", "list", "--status", status))
    assert [row["status"] for row in listing] == (["sent"] if status == "sent" else [])
