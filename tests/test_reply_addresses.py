"""Reply addresses (issue 19, item 1): what board mails carry, what a mail
to one does through the whole server (SMTP listener, `pbmserv receive`,
the worker), and what is kept of it."""

from __future__ import annotations

import smtplib
import subprocess
from dataclasses import replace
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path

import pytest
from sqlalchemy import select

from pbmserv.mail.backends import MemoryBackend
from pbmserv.protocol.commands import (
    BY_REPLY_ADDRESS,
    BoardRef,
    Chat,
    Command,
    GameHelp,
    Move,
    Moves,
    Proposal,
    Queue,
    Resign,
    ShowBoards,
)
from pbmserv.protocol.reply import parse_reply
from pbmserv.runtime import Runtime
from pbmserv.service.play.reply_addresses import (
    ReplyToken,
    holds_reply_address,
    is_genuine,
    kept_form,
    mask_addresses,
    reply_address,
    token_for,
    token_of,
)
from pbmserv.store import users
from pbmserv.store.key import ServerKey, is_sealed
from pbmserv.store.models import InboundMail, OutboxMail
from tests.mailtools import body, make_mail, send, signup
from tests.test_cli import BIN, env_for, maildir_mails, receive, receive_signup
from tests.test_smtpd import settle, wait_for_mail

SERVER = "pbmserv@localhost"
KEY = ServerKey(bytes(range(32)))


# -- the address itself --------------------------------------------------------------
def test_an_address_reads_back_into_its_token_and_nothing_else_does() -> None:
    token = token_for(KEY, "majorities", 101, 1, "bob", "secret")
    address = reply_address(SERVER, token)
    assert address.startswith("pbmserv+majorities-101-2-") and address.endswith("@localhost")
    assert token_of(address, SERVER) == token
    assert token_of(f"<{address.upper()}>", SERVER) == token  # MTAs may change the case
    assert len(address.partition("@")[0]) <= 64  # RFC 5321's longest local part, with the longest game name
    assert len(reply_address(SERVER, token_for(KEY, "psychomachia", 999_999_999, 2, "u" * 20, "s")).partition("@")[0]) <= 64
    for other in (
        SERVER, address.replace("@localhost", "@elsewhere.example"), address.replace("pbmserv+", "other+"),
        address.replace("-2-", "-0-"), address[:-12] + "@localhost", "pbmserv+@localhost",
    ):
        assert token_of(other, SERVER) is None, other


def test_only_the_holder_s_current_secret_makes_the_code_genuine() -> None:
    token = token_for(KEY, "toy", 101, 0, "alice", "one")
    assert is_genuine(KEY, token, "alice", "one")
    assert not is_genuine(KEY, token, "alice", "two")  # a new password since
    assert not is_genuine(KEY, token, "bob", "one")
    assert not is_genuine(ServerKey(bytes(32)), token, "alice", "one")  # another server's key
    for tampered in (replace(token, board=102), replace(token, seat=1), replace(token, game="majorities")):
        assert not is_genuine(KEY, tampered, "alice", "one")
    kept = kept_form(KEY, token)
    assert kept.mac != token.mac and is_genuine(KEY, kept, "alice", "one", kept=True)
    assert not is_genuine(KEY, kept, "alice", "one")  # the kept form is no address one could write to


def test_masking_leaves_an_address_readable_without_its_code() -> None:
    address = reply_address(SERVER, token_for(KEY, "toy", 101, 0, "alice", "one"))
    text = f"To: {address}\nReply-To: Alice <{address}>"
    masked = mask_addresses(text)
    assert holds_reply_address(text) and not holds_reply_address(masked)
    assert "pbmserv+toy-101-1-********@localhost" in masked and address.split("-")[-1] not in masked


# -- what board mails carry ----------------------------------------------------------
def reply_to(message: EmailMessage) -> str:
    return str(message["Reply-To"] or "")


def test_each_player_gets_their_own_address_and_a_subscriber_none(runtime: Runtime) -> None:
    for userid in ("alice", "bob", "carol"):
        signup(runtime, userid, f"{userid}-pw")
    send(runtime, "alice@example.org", "toy challenge alice bob")
    send(runtime, "carol@example.org", "toy subscribe 101 carol carol-pw")
    mails = dict(send(runtime, "alice@example.org", "toy move 101 alice alice-pw b2"))
    with runtime.engine.connect() as connection:
        for seat, userid in enumerate(("alice", "bob")):
            token = token_of(reply_to(mails[f"{userid}@example.org"]), SERVER)
            assert token is not None and (token.game, token.board, token.seat) == ("toy", 101, seat)
            holder = users.seat_holder(connection, "toy", 101, seat)
            assert holder is not None and holder[0] == userid and is_genuine(runtime.intake.key, token, *holder)
    assert reply_to(mails["carol@example.org"]) == ""
    assert "reply to this mail with just your move" in " ".join(body(mails["bob@example.org"]).split())
    with runtime.sessions() as session:  # the mails that carry an address waited sealed; the others did not
        kept = {row.recipient: row.raw for row in session.scalars(select(OutboxMail).where(OutboxMail.inbound_id.is_not(None)))}
    assert is_sealed(kept["bob@example.org"]) and not is_sealed(kept["carol@example.org"])


def address_of(runtime: Runtime, userid: str, seat: int, board: int = 101) -> str:
    with runtime.engine.connect() as connection:
        holder = users.seat_holder(connection, "toy", board, seat)
    assert holder is not None and holder[0] == userid
    return reply_address(SERVER, token_for(runtime.intake.key, "toy", board, seat, *holder))


def reply_mail(sender: str, first_line: str, *, quoted: str = "> Toy Board 101: alice (X) vs bob (O)") -> bytes:
    return make_mail(sender, "Re: Toy Board 101 alice", f"{first_line}\n\nOn Monday, pbmserv wrote:\n{quoted}\n")


# -- through the SMTP listener --------------------------------------------------------
def test_over_smtp_a_reply_plays_and_a_forged_or_tampered_address_is_refused(
    toy_boards: Runtime, listener: tuple[int, Path],
) -> None:
    port, maildir = listener
    bob = address_of(toy_boards, "bob", 1)
    forged = bob[:-len("@localhost") - 16] + "a" * 16 + "@localhost"
    with smtplib.SMTP("127.0.0.1", port, timeout=10) as client:
        client.ehlo()
        for refused in (forged, bob.replace("toy-101-", "toy-102-"), bob.replace("-101-2-", "-101-1-")):
            client.mail("mallory@example.org")
            code, message = client.rcpt(refused)
            assert code == 550 and b"not a valid reply address" in message, refused
            client.rset()
        client.mail("bob@example.org")
        assert client.rcpt(bob)[0] == 250
        assert client.rcpt(SERVER)[0] == 250  # the server's own address besides: still one mail, to bob's address
        assert client.rcpt(address_of(toy_boards, "alice", 0))[0] == 452  # another reply address: a mail of its own
        code, _ = client.data(reply_mail("bob@example.org", "a1 #2"))
        assert code == 250
    settle(toy_boards)
    mails = [BytesParser(policy=policy.default).parsebytes(raw) for raw in wait_for_mail(maildir, 2)]
    assert sorted(str(mail["To"]) for mail in mails) == ["alice@example.org", "bob@example.org"]
    assert all("2. bob a1" in body(mail) for mail in mails)


# -- through `pbmserv receive` -----------------------------------------------------------
def test_receive_takes_the_address_from_its_option_or_the_mta_s_header(tmp_path: Path) -> None:
    for userid in ("alice", "bob"):
        receive_signup(tmp_path, userid, f"{userid}-pw")
    assert receive(tmp_path, make_mail("alice@example.org", "toy challenge alice bob")).returncode == 0
    [alice_s] = [reply_to(mail) for mail in maildir_mails(tmp_path) if str(mail["To"]) == "alice@example.org" and reply_to(mail)]
    assert token_of(alice_s, SERVER) is not None

    forged = alice_s[:-len("@localhost") - 16] + "b" * 16 + "@localhost"
    result = receive_with(tmp_path, reply_mail("alice@example.org", "b2"), "--recipient", forged)
    assert result.returncode == 67 and b"not a valid reply address" in result.stderr

    delivered = f"Delivered-To: {alice_s}\r\n".encode() + reply_mail("alice@example.org", "b2")
    assert receive(tmp_path, delivered).returncode == 0
    assert "1. alice b2" in body(maildir_mails(tmp_path)[-1])


def receive_with(tmp_path: Path, raw: bytes, *options: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [BIN / "pbmserv", "receive", "--wait", *options], input=raw, env=env_for(tmp_path), cwd=tmp_path,
        capture_output=True, timeout=60,
    )


# -- in the worker ---------------------------------------------------------------------
def test_an_address_made_stale_after_intake_never_moves(toy_boards: Runtime) -> None:
    runtime = toy_boards
    bob = address_of(runtime, "bob", 1)  # genuine when the reply is taken in (no check at `store`)
    runtime.intake.store(make_mail("bob@example.org", "change password bob secret2 newsecret"), None)
    runtime.processor.process_pending()
    runtime.intake.store(reply_mail("bob@example.org", "a1"), None, bob)
    runtime.processor.process_pending()
    runtime.delivery.deliver_due()
    assert isinstance(runtime.backend, MemoryBackend)
    [*_, (to, answer)] = [(to, BytesParser(policy=policy.default).parsebytes(raw)) for to, raw in runtime.backend.sent]
    assert to == "bob@example.org" and "no longer works" in " ".join(body(answer).split())
    [(_, shown)] = send(runtime, "bob@example.org", "toy show 101")
    assert "bob a1" not in body(shown)


def test_what_is_kept_of_a_reply_holds_no_code(toy_boards: Runtime) -> None:
    runtime = toy_boards
    bob = address_of(runtime, "bob", 1)
    code = bob.partition("@")[0].rsplit("-", 1)[1]
    raw = make_mail("bob@example.org", "Re: Toy Board 101 alice", "a1\n", headers={"Cc": bob}).replace(
        b"To: pbmserv@localhost", f"To: {bob}".encode(),
    )
    runtime.intake.store(raw, None, bob)
    with runtime.sessions() as session:
        pending = session.scalars(select(InboundMail).order_by(InboundMail.id.desc())).first()
        assert pending is not None and pending.sealed is not None and code.encode() not in pending.raw
        assert pending.reply_token and code not in pending.reply_token
    runtime.processor.process_pending()
    with runtime.sessions() as session:
        done = session.scalars(select(InboundMail).order_by(InboundMail.id.desc())).first()
        assert done is not None and done.status == "done" and done.sealed is None
        assert code.encode() not in done.raw and b"pbmserv+toy-101-2-********@localhost" in done.raw
    token = ReplyToken.read(bob.partition("+")[2].partition("@")[0])
    assert token is not None and token.mac == code


# -- what a reply's first line means -----------------------------------------------------
@pytest.mark.parametrize(("first", "expected"), [
    ("a1", Move("toy", 101, "alice", BY_REPLY_ADDRESS, "a1")),
    ("move a1 #4", Move("toy", 101, "alice", BY_REPLY_ADDRESS, "a1", 4)),
    ("synch", Move("toy", 101, "alice", BY_REPLY_ADDRESS, "synch")),  # a game's name alone is a move (synch has one)
    ("resign #3", Resign("toy", 101, "alice", BY_REPLY_ADDRESS, 3)),
    ("undo", Proposal("toy", 101, "alice", BY_REPLY_ADDRESS, "undo")),
    ("accept", Proposal("toy", 101, "alice", BY_REPLY_ADDRESS, "accept")),
    ("queue c3", Queue("toy", 101, "alice", BY_REPLY_ADDRESS, "c3")),
    ("moves", Moves("toy", 101, "alice", BY_REPLY_ADDRESS)),
    ("show", ShowBoards("toy", (BoardRef(101),))),
    ("help", GameHelp("toy")),
    ("toy move 102 alice secret1 b2", Move("toy", 102, "alice", "secret1", "b2")),  # a full command: its own password
])
def test_a_reply_s_first_line_is_a_command_on_its_board_as_its_player(first: str, expected: Command) -> None:
    request = parse_reply("Re: Toy Board 101 bob", f"{first}\nnice game\n", "toy", 101, "alice", ["toy", "synch"])
    [line] = request.lines
    assert line.command == expected and line.text == first
    assert request.comment == "nice game" and request.passwords == (() if "secret1" not in first else ("secret1",))


def test_a_reply_s_chat_is_its_text_and_an_empty_reply_is_explained() -> None:
    chat = parse_reply("Re: x", "chat see you\ntomorrow\n", "toy", 101, "alice", ["toy"])
    assert chat.lines[0].command == Chat("toy", 101, "alice", BY_REPLY_ADDRESS) and chat.comment == "see you\ntomorrow"
    empty = parse_reply("Re: x", "\n\n", "toy", 101, "alice", ["toy"])  # the body as read: quotes already gone
    assert empty.lines[0].error is not None and "first line" in empty.lines[0].error.fix
