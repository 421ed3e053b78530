"""Hostile mail (issue 16): no single mail may stop the server, corrupt
its data, or make it mail without bound. One test (or a few) per finding;
each failed on 16cc280."""

from __future__ import annotations

import dataclasses
import subprocess
from datetime import datetime
from email import policy
from email.parser import BytesParser
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Connection, select

from pbmserv.config import load_settings
from pbmserv.mail.backends import MemoryBackend
from pbmserv.mail.inbound import IncomingMail
from pbmserv.runtime import Runtime
from pbmserv.service.processing import guesses
from pbmserv.service.processing.catalog import Catalog
from pbmserv.service.processing.context import Proof, Reply
from pbmserv.service.processing.output import Composed
from pbmserv.service.processing.processor import Processor
from pbmserv.store import records
from pbmserv.store.key import ServerKey
from pbmserv.store.models import InboundMail, Move, User
from tests.mailtools import body, make_mail, send, send_raw, signup
from tests.test_cli import BIN, admin, env_for
from tests.test_reliability import CrashingToy


def nested_multipart(depth: int) -> bytes:
    head = "".join(f'Content-Type: multipart/mixed; boundary="b{i}"\r\n\r\n--b{i}\r\n' for i in range(depth))
    tail = "".join(f"\r\n--b{i}--\r\n" for i in reversed(range(depth)))
    return (
        "From: mallory@example.net\r\nSubject: help\r\nMessage-ID: <nest@example.net>\r\nMIME-Version: 1.0\r\n"
        + head + "Content-Type: text/plain\r\n\r\nhello\r\n" + tail
    ).encode()


def nested_rfc822(depth: int) -> bytes:
    return (
        "From: mallory@example.net\r\nSubject: help\r\nMessage-ID: <nest822@example.net>\r\n"
        + "Content-Type: message/rfc822\r\n\r\n" * depth + "Subject: x\r\n\r\nhello\r\n"
    ).encode()


def statuses(runtime: Runtime) -> list[tuple[str, str]]:
    with runtime.sessions() as session:
        return [(m.status, m.error) for m in session.scalars(select(InboundMail).order_by(InboundMail.id))]


# -- C1: one mail must not stop processing ------------------------------------------
@pytest.mark.parametrize("hostile", [nested_multipart(1000), nested_rfc822(1000)], ids=["multipart", "rfc822"])
def test_a_deeply_nested_mail_is_failed_and_answered_once_and_the_queue_goes_on(runtime: Runtime, hostile: bytes) -> None:
    replies = send_raw(runtime, hostile)
    [(recipient, message)] = replies
    assert recipient == "mallory@example.net"
    text = body(message)
    assert "could not read your mail: it has more than 100 MIME parts" in text
    assert "plain text mail" in text
    [(status, error)] = statuses(runtime)
    assert status == "failed" and error.startswith("unreadable:")

    [(_, answer)] = send(runtime, "alice@example.org", "help")
    assert "signup" in body(answer)
    assert [status for status, _ in statuses(runtime)] == ["failed", "done"]


def test_giving_up_an_unreadable_mail_marks_it_failed(runtime: Runtime) -> None:
    """`serve`'s watchdog gives up the mail its worker is stuck on; that
    must work for any mail, whatever it holds."""
    row_id, _ = runtime.intake.store(nested_multipart(1000))
    with runtime.sessions() as session:
        key = session.get(InboundMail, row_id).dedup_key
    assert runtime.processor.give_up(key, "not processed within 300s: given up")
    with runtime.sessions() as session:
        mail = session.get(InboundMail, row_id)
        assert (mail.status, mail.error) == ("failed", "not processed within 300s: given up")
        assert b"hello" not in mail.raw, "only the headers of an unreadable mail are kept"


class RowBreakingProcessor(Processor):
    """A bug that escapes a mail's own failure handling: the replies to a
    mail whose Subject is 'boom' are outbox rows the database refuses,
    which fails the batch they are written in."""

    def _compose(
        self, connection: Connection, row_id: int, mail: IncomingMail, replies: list[Reply], now: datetime,
        proof: Proof | None = None,
    ) -> list[Composed]:
        composed = super()._compose(connection, row_id, mail, replies, now, proof)
        if mail is not None and mail.subject == "boom":
            for made in composed:
                for row in made.rows:
                    row["inbound_id"] = -1
        return composed


def test_a_mail_that_breaks_its_batch_is_given_up_and_the_mails_around_it_are_processed(runtime: Runtime) -> None:
    runtime.processor.__class__ = RowBreakingProcessor
    for sender, subject in [("a@example.org", "help"), ("b@example.org", "boom"), ("c@example.org", "list")]:
        runtime.intake.store(make_mail(sender, subject))
    runtime.processor.process_pending()
    runtime.delivery.deliver_due()
    outcomes = statuses(runtime)
    assert [status for status, _ in outcomes] == ["done", "failed", "done"]
    assert "could not be processed: IntegrityError" in outcomes[1][1]


# -- C1: operators can drop and retry a mail -------------------------------------------
def test_an_operator_fails_a_pending_mail_and_retries_it(tmp_path: Path) -> None:
    runtime = Runtime(load_settings(environ=env_for(tmp_path)))
    runtime.upgrade_schema()
    row_id, _ = runtime.intake.store(make_mail("alice@example.org", "signup alice secret1"))
    runtime.close()

    assert admin(tmp_path, "inbound", "fail", str(row_id), "--reason", "held up the queue") == f"inbound {row_id}: failed\n"
    shown = admin(tmp_path, "inbound", "show", str(row_id))
    assert "status:      failed" in shown and "held up the queue" in shown
    assert "secret1" not in shown and "signup alice ********" in shown

    assert admin(tmp_path, "inbound", "retry", str(row_id)) == f"inbound {row_id}: pending again\n"
    result = subprocess.run(
        [BIN / "pbmserv-admin", "inbound", "retry", str(row_id), "99999"], env=env_for(tmp_path), cwd=tmp_path,
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 1
    assert f"inbound {row_id}: not changed: it is pending, not failed or dropped" in result.stderr
    assert "inbound 99999: not changed: no such mail" in result.stderr

    processed = subprocess.run(
        [BIN / "pbmserv", "process"], env=env_for(tmp_path), cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )
    assert processed.stdout == "processed 1 mail(s)\n", processed.stderr
    assert "alice" in admin(tmp_path, "users", "list"), "retried from its sealed original, password and all"


# -- M3: change address, and the cause of a failure ----------------------------------
def test_change_address_keeps_an_address_and_adds_another(runtime: Runtime) -> None:
    signup(runtime, "alice", "secret1")
    replies = send(runtime, "alice@example.org", "change address alice secret1 alice@example.org alice@home.example")
    assert "pbmserv change address alice" in [str(message["Subject"]) for _, message in replies]
    with runtime.sessions() as session:
        alice = session.scalars(select(User).where(User.userid == "alice")).one()
        assert [a.address for a in alice.addresses] == ["alice@example.org", "alice@home.example"]


def test_the_cause_of_a_failure_is_kept_when_its_apology_is_held_back(runtime: Runtime) -> None:
    runtime.processor.catalog = Catalog([CrashingToy()])
    signup(runtime, "alice", "secret1")
    signup(runtime, "bob", "secret2")
    send(runtime, "alice@example.org", "toy challenge alice bob")
    send(runtime, "alice@example.org", "toy move 101 alice secret1 b2")
    for _ in range(runtime.settings.error_replies_per_hour):
        send(runtime, "bob@example.org", "toy fly")
    assert send(runtime, "bob@example.org", "toy move 101 bob secret2 a1") == []
    status, error = statuses(runtime)[-1]
    assert status == "failed"
    assert error == "RuntimeError: a bug in the game; 1 mail(s) not sent: bob@example.org reached the hourly cap"


# -- L: addresses, and a forged sender -------------------------------------------------------
@pytest.mark.parametrize("address", ["victim@x,other", "bcc:victim@x", "a(c)@x", '"a b"@x', "victim@-x.org", "v@[1.2.3.4]"])
def test_an_account_takes_only_mailboxes(runtime: Runtime, address: str) -> None:
    [(recipient, message)] = send(runtime, "mallory@example.net", f"signup mallory secret1 {address}")
    assert recipient == "mallory@example.net"
    assert "is not a mail address like alice@example.org" in body(message)
    with runtime.sessions() as session:
        assert session.scalars(select(User)).all() == []


def test_a_forged_sender_cannot_lift_a_players_reject(runtime: Runtime) -> None:
    signup(runtime, "alice", "secret1")
    signup(runtime, "bob", "secret2")
    send(runtime, "bob@example.org", "toy reject bob secret2")
    [(recipient, message)] = send(runtime, "bob@example.org", "toy challenge bob alice")
    assert (recipient, str(message["Subject"])) == ("bob@example.org", "Toy Error")
    assert "bob does not accept Toy challenges" in body(message)


# -- C3 and H4: a mail's work and answers are bounded -------------------------------------
def with_settings(runtime: Runtime, **changes: Any) -> Runtime:
    runtime.processor.settings = dataclasses.replace(runtime.processor.settings, **changes)
    return runtime


def test_a_multiple_mail_of_junk_gets_one_answer_and_reads_at_most_20_commands(runtime: Runtime) -> None:
    junk = "\n".join(f"junk{n} {n}" for n in range(2000))
    replies = send(runtime, "mallory@example.net", "multiple", junk, headers={"Reply-To": "victim@outside.example"})
    [(recipient, message)] = replies
    assert recipient == "victim@outside.example"
    text = body(message)
    assert text.startswith("2000 of the 2000 commands of your mail were not carried out.")
    assert "Command 20: junk19 19" in text and "Command 21:" not in text
    assert "Commands 21 to 2000: not carried out: the server carries out at most 20 commands of a mail" in " ".join(text.split())
    assert len(text) < 12_000


def test_the_passwords_on_the_lines_of_a_mail_that_are_not_read_are_masked_too(runtime: Runtime) -> None:
    lines = "\n".join([f"junk{n}" for n in range(20)] + ["signup late Zq7-late", "toy move 101 alice Zq7-move a1"])
    send(runtime, "alice@example.org", "multiple", lines)
    with runtime.sessions() as session:
        kept = session.scalars(select(InboundMail.raw)).one()
    assert b"Zq7" not in kept and b"toy move 101 ******** ******** ********" in kept


def test_a_multiple_mail_of_signups_creates_at_most_20_accounts(runtime: Runtime) -> None:
    signups = "\n".join(f"signup user{n} secret{n}" for n in range(1000))
    send(runtime, "mallory@example.net", "multiple", signups)
    with runtime.sessions() as session:
        assert len(session.scalars(select(User)).all()) == 20


def test_a_multiple_mail_stops_when_its_time_is_up(runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("pbmserv.service.processing.processor.MAIL_SECONDS", 0.0, raising=False)
    replies = send(runtime, "alice@example.org", "multiple", "signup alice secret1\nsignup bob secret2\nhelp")
    errors = [body(message) for _, message in replies if str(message["Subject"]) == "pbmserv Error"]
    assert errors and "Commands 2 to 3: not carried out: your mail had taken more than 0 s" in " ".join(errors[0].split())
    with runtime.sessions() as session:
        assert [u.userid for u in session.scalars(select(User))] == ["alice"]


def test_a_mails_own_answers_count_against_the_hourly_cap(toy_boards: Runtime) -> None:
    with_settings(toy_boards, replies_per_hour=3)
    replies = send(toy_boards, "carol@example.org", "toy show 101 102 101 102 101")
    assert len(replies) == 3
    assert send(toy_boards, "carol@example.org", "toy show 101") == []


def test_show_names_at_most_ten_boards(toy_boards: Runtime) -> None:
    [(_, message)] = send(toy_boards, "carol@example.org", "toy show " + " ".join(["101"] * 500))
    assert "'show' names 500 boards, more than the 10 it shows at a time" in body(message)


def test_an_answer_quotes_a_bounded_part_of_the_mail(runtime: Runtime) -> None:
    long_comment = "\n".join("x" * 500 for _ in range(400))
    [(_, message)] = send(runtime, "mallory@example.net", "nonsense", long_comment)
    quoted = [line for line in body(message).splitlines() if line.startswith(">")]
    assert len(quoted) == 41 and quoted[-1] == "> [... 362 more lines]"
    assert max(len(line) for line in quoted) < 220


def test_a_comment_passed_on_with_a_move_is_bounded(toy_boards: Runtime) -> None:
    comment = "\n".join(f"line {n}" for n in range(1000))
    replies = send(toy_boards, "bob@example.org", "toy move 101 bob secret2 a1", comment)
    to_alice = [body(message) for recipient, message in replies if recipient == "alice@example.org"]
    assert "line 99\n[... the rest of the comment (900 more lines) was left out]" in to_alice[0]
    assert "line 100" not in to_alice[0]


# -- H1: relayed mail and challenges are limited ------------------------------------------
def test_an_account_sends_a_bounded_number_of_messages_an_hour(toy_boards: Runtime) -> None:
    most = 20  # messages_per_hour, by default
    for _ in range(most):
        assert send(toy_boards, "alice@example.org", "message alice secret1 bob", "spam")
    [(recipient, message)] = send(toy_boards, "alice@example.org", "message alice secret1 bob", "spam")
    assert recipient == "alice@example.org"
    assert f"alice has sent {most} messages in the last hour" in body(message)


def test_relayed_mail_to_one_address_is_capped(toy_boards: Runtime) -> None:
    signup(toy_boards, "carol", "secret3")
    to_bob = []
    for sender, userid, password in [("alice@example.org", "alice", "secret1")] * 20 + [("carol@example.org", "carol", "secret3")] * 11:
        replies = send(toy_boards, sender, f"message {userid} {password} bob", "hello")
        to_bob += [recipient for recipient, _ in replies if recipient == "bob@example.org"]
    assert len(to_bob) == 30, "relays_per_hour"


def test_a_player_is_named_in_a_bounded_number_of_new_boards_an_hour(toy_boards: Runtime) -> None:
    for _ in range(8):  # toy_boards started two boards of alice and bob
        send(toy_boards, "carol@example.org", "toy challenge alice bob")
    [(recipient, message)] = send(toy_boards, "carol@example.org", "toy challenge bob alice")
    assert recipient == "carol@example.org"
    assert "bob has been named in 10 new boards in the last hour" in body(message)


def test_a_third_partys_challenge_copy_to_a_forged_sender_is_capped(runtime: Runtime) -> None:
    players = [f"p{n}" for n in range(10)]
    for userid in players:
        signup(runtime, userid, f"secret-{userid}")
    pairs = [(a, b) for a in players for b in players if a < b][:35]  # no player in more than 10 boards
    to_victim = 0
    for start in range(0, len(pairs), 20):
        challenges = "\n".join(f"toy challenge {a} {b}" for a, b in pairs[start:start + 20])
        replies = send(runtime, "mallory@example.net", "multiple", challenges, headers={"Reply-To": "victim@outside.example"})
        to_victim += [recipient for recipient, _ in replies].count("victim@outside.example")
    assert to_victim == 30, "replies_per_hour"


# -- H1: addresses an account names are confirmed before they get mail ---------------------------
def test_a_signup_naming_thousands_of_addresses_is_refused(runtime: Runtime) -> None:
    addresses = " ".join(f"victim{n}@outside.example" for n in range(5000))
    [(recipient, message)] = send(runtime, "mallory@example.net", f"signup mallory secret1 {addresses}")
    assert recipient == "mallory@example.net"
    assert "An account has at most 5 addresses, and this names 5000" in body(message)


def test_signups_from_many_forged_senders_naming_one_address_send_it_one_mail(runtime: Runtime) -> None:
    to_victim = []
    for n in range(60):
        replies = send(runtime, f"forged{n}@example.net", f"signup user{n} secret{n} victim@outside.example")
        to_victim += [message for recipient, message in replies if recipient == "victim@outside.example"]
    assert [str(message["Subject"]).split()[:2] for message in to_victim] == [["confirm", "user0"]]


def test_an_address_an_account_names_gets_no_board_mail_until_it_is_confirmed(toy_boards: Runtime) -> None:
    runtime = toy_boards
    replies = send(runtime, "alice@example.org", "change address alice secret1 alice@example.org victim@outside.example")
    [request] = [message for recipient, message in replies if recipient == "victim@outside.example"]
    subject = str(request["Subject"])
    assert subject.startswith("confirm alice ") and "If it was not you, there is nothing to do" in body(request)

    moved = send(runtime, "bob@example.org", "toy move 101 bob secret2 a1")
    assert "victim@outside.example" not in [recipient for recipient, _ in moved]

    confirmed = send(runtime, "victim@outside.example", f"Re: {subject}")
    assert "victim@outside.example now gets the mail of alice" in body(confirmed[0][1])
    moved = send(runtime, "alice@example.org", "toy move 101 alice secret1 c3")
    assert "victim@outside.example" in [recipient for recipient, _ in moved]


# -- H2: guessing cannot lock a player out, and every process counts it -----------------------
def test_guessing_from_many_addresses_is_held_and_the_player_still_gets_in(toy_boards: Runtime, key_file: str) -> None:
    runtime = with_settings(toy_boards, replies_per_hour=1000, error_replies_per_hour=1000)
    for n in range(guesses.IN_ALL):
        send(runtime, f"forged{n}@example.net", f"toy move 101 bob guess{n} a1")
    [(_, message)] = send(runtime, "new-guesser@example.net", "toy move 101 bob secret2 a1")
    assert "Too many wrong passwords came to this server" in " ".join(body(message).split())

    restarted = Runtime(  # another process (a `receive`, or serve after a restart) remembers no check
        runtime.settings, catalog=runtime.processor.catalog, clock=runtime.clock, backend=runtime.backend,
    )
    try:
        [(_, message)] = send(restarted, "new-guesser@example.net", "toy move 101 bob guess a1")
        assert "Too many wrong passwords came to this server" in " ".join(body(message).split())
        replies = send(restarted, "bob@example.org", "toy move 101 bob secret2 a1")
        assert replies and all("Error" not in str(message["Subject"]) for _, message in replies)
    finally:
        restarted.close()


# -- M1: passwords never kept or passed on in clear --------------------------------------
def test_a_password_in_a_comment_is_masked_for_the_opponent_and_in_the_move_list(toy_boards: Runtime) -> None:
    replies = send(toy_boards, "bob@example.org", "toy move 101 bob secret2 a1", "Oops, my password is secret2. Bye")
    [to_alice] = [body(message) for recipient, message in replies if recipient == "alice@example.org"]
    assert "Oops, my password is ********. Bye" in to_alice and "secret2" not in to_alice
    with toy_boards.sessions() as session:
        assert [m.comment for m in session.scalars(select(Move).where(Move.text == "a1"))] == [
            "Oops, my password is ********. Bye"
        ]


def test_a_password_in_a_message_is_masked(toy_boards: Runtime) -> None:
    replies = send(toy_boards, "alice@example.org", "message alice secret1 bob", "I use secret1 everywhere")
    assert replies and all("secret1" not in body(message) for _, message in replies)


def test_a_dropped_automatic_mail_keeps_no_password(toy_boards: Runtime) -> None:
    auto = make_mail("bob@example.org", "toy move 101 bob secret2 a1", headers={"Auto-Submitted": "auto-replied"})
    assert send_raw(toy_boards, auto) == []
    with toy_boards.sessions() as session:
        dropped = session.scalars(select(InboundMail).where(InboundMail.status == "dropped")).one()
        assert b"secret2" not in dropped.raw and dropped.sealed is None


def test_a_password_at_an_unexpected_place_is_masked(runtime: Runtime) -> None:
    [(_, message)] = send(runtime, "alice@example.org", "toy move alice Zq7pw 101 b2")
    assert "Zq7pw" not in body(message)
    with runtime.sessions() as session:
        assert b"Zq7pw" not in session.scalars(select(InboundMail.raw)).one()


def test_a_pending_mail_is_stored_without_its_password_in_clear(runtime: Runtime) -> None:
    row_id, _ = runtime.intake.store(make_mail("alice@example.org", "multiple", "signup alice Zq7pw\nhelp"))
    with runtime.sessions() as session:
        pending = session.get(InboundMail, row_id)
        assert pending.status == "pending" and b"Zq7pw" not in pending.raw and b"Zq7pw" not in pending.sealed
        assert b"X-Pbmserv-Masked: pending; the mail is kept sealed until it is processed" in pending.raw
    runtime.processor.process_pending()
    with runtime.sessions() as session:
        done = session.get(InboundMail, row_id)
        assert done.status == "done" and done.sealed is None
        assert b"signup alice ********" in done.raw and b"Zq7pw" not in done.raw
        assert session.scalars(select(User.userid)).all() == ["alice"]


def test_no_database_file_ever_holds_a_password_in_clear(tmp_path: Path) -> None:
    """Mail through SMTP intake's arrival spool and the worker, on a SQLite
    file: the password is in none of the files (database, its write-ahead
    log, the spool and its log), not even for a moment."""
    runtime = Runtime(load_settings(environ=env_for(tmp_path, PBMSERV_MAIL_BACKEND="memory")))
    runtime.upgrade_schema()
    signups = [make_mail("alice@example.org", "signup alice Zq7-alice"), make_mail("bob@example.org", "signup bob Zq7-bob")]
    mails = [
        make_mail("alice@example.org", "multiple", "toy challenge alice bob\ntoy move 101 alice Zq7-alice b2"),
        make_mail("bob@example.org", "toy move 101 bob Zq7-bob a1", "my password is Zq7-bob"),
        make_mail("bob@example.org", "toy move 101 bob Zq7-wrong c3"),
    ]
    backend = runtime.backend
    assert isinstance(backend, MemoryBackend)
    try:
        for group in (signups, "the welcomes answered", mails):
            if isinstance(group, str):
                parser = BytesParser(policy=policy.default)
                welcomes = [(to, str(parser.parsebytes(raw)["Subject"])) for to, raw in backend.sent]
                group = [make_mail(to, f"Re: {subject}") for to, subject in welcomes if subject.startswith("confirm ")]
                assert len(group) == 2
            runtime.intake.accept([(raw, None, "") for raw in group])
            files = sorted(path for path in tmp_path.iterdir() if path.name.startswith("pbmserv.db"))
            assert any(path.name.endswith("-spool") for path in files)
            for password in (b"Zq7-alice", b"Zq7-bob", b"Zq7-wrong"):
                assert [path.name for path in files if password in path.read_bytes()] == [], "in the spool"
            runtime.processor.process_pending()
            runtime.delivery.deliver_due()
    finally:
        runtime.close()
    with Runtime(load_settings(environ=env_for(tmp_path, PBMSERV_MAIL_BACKEND="memory"))).sessions() as session:
        assert session.scalars(select(User.userid)).all() == ["alice", "bob"]
        assert session.scalars(select(Move.text)).all() == ["b2", "a1"]
    files = sorted(path for path in tmp_path.iterdir() if path.name.startswith("pbmserv.db"))
    for password in (b"Zq7-alice", b"Zq7-bob", b"Zq7-wrong"):
        assert [path.name for path in files if password in path.read_bytes()] == []


def test_a_sealed_mail_the_key_cannot_open_is_failed_with_an_apology(runtime: Runtime) -> None:
    """A server whose key file was replaced cannot open what the old key
    sealed: each such mail is answered and failed, and the queue goes on."""
    runtime.intake.store(make_mail("alice@example.org", "signup alice secret1"))
    runtime.processor.__dict__["key"] = runtime.intake.__dict__["key"] = ServerKey(b"another key of 32 bytes, really!")
    replies = send(runtime, "bob@example.org", "help")
    subjects = {recipient: str(message["Subject"]) for recipient, message in replies}
    assert subjects == {"alice@example.org": "pbmserv Error", "bob@example.org": "pbmserv help"}
    [(status, error), _] = statuses(runtime)
    assert status == "failed" and error.startswith("Unsealable")


def test_a_player_makes_a_bounded_number_of_draw_offers_on_a_board_an_hour(toy_boards: Runtime) -> None:
    PROPOSALS_PER_HOUR = 5  # service.proposals
    for _ in range(PROPOSALS_PER_HOUR):
        send(toy_boards, "bob@example.org", "toy move 101 bob secret2 propose")
        send(toy_boards, "bob@example.org", "toy move 101 bob secret2 reject")
    [(recipient, message)] = send(toy_boards, "bob@example.org", "toy move 101 bob secret2 propose")
    assert recipient == "bob@example.org"
    assert f"You have made {PROPOSALS_PER_HOUR} offers and requests on board 101 in the last hour" in " ".join(body(message).split())


def test_boards_against_a_bot_are_bounded_by_the_bots_limits_not_the_hourly_count(runtime: Runtime) -> None:
    """A player may start a board against the bot as soon as one ends:
    how many they have at once is bounded (`bot_easy_boards`, 20), not how
    many they start in an hour, so the eleventh of the hour starts too."""
    signup(runtime, "alice", "secret1")
    started = [send(runtime, "alice@example.org", "toy challenge -bot=easy alice bot") for _ in range(12)]
    subjects = [str(message["Subject"]) for replies in started for recipient, message in replies if recipient == "alice@example.org"]
    assert not [subject for subject in subjects if "Error" in subject], subjects
    with runtime.engine.connect() as connection:
        assert len(records.running_boards_of_all(connection, ["alice", "bot-easy"])) == 12


def test_chat_mail_to_one_address_is_capped(toy_boards: Runtime) -> None:
    toy_boards.processor.settings = dataclasses.replace(toy_boards.settings, chats_per_hour=3)
    to_bob = []
    for _ in range(5):
        replies = send(toy_boards, "alice@example.org", "toy chat 101 alice secret1", "hello")
        to_bob += [recipient for recipient, _ in replies if recipient == "bob@example.org"]
    assert len(to_bob) == 3, "chats_per_hour"
