"""SMTP intake against hostile clients (issue 16, H3 and L): what cannot be
stored is refused for that mail alone, and neither a slow session nor a
crowd of them keeps the listener from greeting others."""

from __future__ import annotations

import asyncio
import select
import smtplib
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import replace
from pathlib import Path
from typing import TypedDict, Unpack

import pytest
from aiosmtpd.smtp import SMTP, Envelope, Session

from pbmserv.runtime import Runtime
from pbmserv.smtp_rates import REFUSED_RECIPIENTS
from pbmserv.smtpd import IDLE_ENOUGH_TO_MAKE_ROOM_SECONDS, MOST_ERRORS, IntakeHandler, start_listener
from tests.mailtools import make_mail
from tests.smtp_helpers import close_server, loop_thread
from tests.test_cli import BIN, env_for
from tests.test_smtpd import inbound_rows

SERVER = "pbmserv@localhost"


class ListenerSettings(TypedDict, total=False):
    session_seconds: float
    command_seconds: float
    max_sessions: int
    max_sessions_per_client: int


@contextmanager
def listening(runtime: Runtime, **settings: Unpack[ListenerSettings]) -> Iterator[int]:
    """pbmserv's listener with `settings` on a free loopback port (yielded)."""
    runtime.settings = replace(runtime.settings, **settings)
    runtime.processor.settings = runtime.intake.settings = runtime.settings
    with loop_thread() as loop:
        server = asyncio.run_coroutine_threadsafe(start_listener(runtime.intake, threading.Event(), "127.0.0.1", 0), loop).result(10)
        try:
            yield server.sockets[0].getsockname()[1]
        finally:
            close_server(server, loop)


def stored_senders(runtime: Runtime) -> list[str]:
    """The envelope senders of the mails intake stored (on SQLite the worker
    moves them in from the arrival spool first)."""
    runtime.processor.process_pending()
    return sorted(row.envelope_sender for row in inbound_rows(runtime))


# -- H3: what cannot be stored is refused for that mail alone ---------------------


def test_a_nul_in_the_envelope_sender_is_refused_and_mails_beside_it_are_stored(runtime: Runtime) -> None:
    """Before, a NUL in MAIL FROM was taken, and on PostgreSQL it failed the
    commit of every mail stored together with it: they got 451."""
    good = [f"p{n}@example.org" for n in range(8)]
    hostile = [f"evil{n}\0@example.org" for n in range(8)]
    senders = [address for pair in zip(good, hostile) for address in pair]
    at_data = threading.Barrier(len(senders), timeout=60)  # every mail's DATA at once: stored in a few groups
    answers: dict[str, int] = {}

    def deliver(sender: str) -> None:
        with smtplib.SMTP("127.0.0.1", port, timeout=60) as client:
            client.ehlo()
            code, _ = client.mail(sender)
            if code == 250:
                client.rcpt(SERVER)
            at_data.wait()
            answers[sender] = client.data(make_mail(sender, "help"))[0] if code == 250 else code

    with listening(runtime) as port:
        threads = [threading.Thread(target=deliver, args=(sender,)) for sender in senders]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert {sender: answers[sender] for sender in good} == {sender: 250 for sender in good}
    assert {sender: answers[sender] for sender in hostile} == {sender: 553 for sender in hostile}
    assert stored_senders(runtime) == sorted(good)


def test_paths_with_control_characters_or_too_long_are_refused_and_bounces_are_taken(runtime: Runtime) -> None:
    with listening(runtime) as port, smtplib.SMTP("127.0.0.1", port, timeout=60) as client:
        client.ehlo()
        assert client.mail("soh\x01@example.org")[0] == 553
        assert client.mail("x" * 243 + "@example.org")[0] == 553  # 257 octets in angle brackets
        assert client.mail("x" * 242 + "@example.org")[0] == 250  # 256: the most RFC 5321 allows
        assert client.rcpt("pbmserv\x7f@localhost")[0] == 553
        assert client.rcpt(SERVER)[0] == 250
        client.rset()
        client.sendmail("", [SERVER], make_mail("mailer-daemon@example.org", "a bounce"))  # MAIL FROM:<>
    assert stored_senders(runtime) == ["<>"]


def test_a_nul_in_the_header_is_refused_and_one_in_the_body_is_taken(runtime: Runtime) -> None:
    in_header = make_mail("alice@example.org", "help").replace(b"Subject:", b"X-Junk: a\0b\r\nSubject:", 1)
    in_body = make_mail("bob@example.org", "help", "a\0b")
    with listening(runtime) as port, smtplib.SMTP("127.0.0.1", port, timeout=60) as client:
        client.ehlo()
        client.mail("alice@example.org")
        client.rcpt(SERVER)
        code, message = client.data(in_header)
        assert (code, message) == (554, b"5.6.0 the header holds a NUL byte")
        client.mail("bob@example.org")  # the session goes on
        client.rcpt(SERVER)
        assert client.data(in_body)[0] == 250
    assert stored_senders(runtime) == ["bob@example.org"]


def deliver_together(runtime: Runtime, mails: list[tuple[str, bytes]], gone: int | None = None) -> list[str | None]:
    """Hand `mails` (envelope sender, raw) to intake's handler all at once, so
    that they are stored as one group, as sessions finishing their DATA at
    the same moment are; the answer to each (None: mail `gone`'s client went
    away while it waited)."""
    handler = IntakeHandler(runtime.intake, threading.Event())

    async def deliver(sender: str, raw: bytes) -> str:
        envelope = Envelope()
        envelope.mail_from, envelope.rcpt_tos, envelope.original_content = sender, [SERVER], raw
        loop = asyncio.get_running_loop()
        return await handler.handle_DATA(SMTP(handler, loop=loop), Session(loop), envelope)

    async def all_at_once() -> list[str | None]:
        sessions = [asyncio.create_task(deliver(sender, raw)) for sender, raw in mails]
        await asyncio.sleep(0)  # each has its mail waiting now, and the first started the storing
        if gone is not None:
            sessions[gone].cancel()
        answers = await asyncio.wait_for(asyncio.gather(*sessions, return_exceptions=True), 60)
        return [answer if isinstance(answer, str) else None for answer in answers]

    return asyncio.run(all_at_once())


def test_a_mail_that_cannot_be_stored_does_not_fail_the_mails_stored_with_it(runtime: Runtime) -> None:
    """A sender that no database can take (not valid Unicode; on PostgreSQL
    a NUL did the same before intake refused it) fails the group's commit:
    its mails are then stored one by one, and only that mail is refused, for
    good (it would fail the same way every time)."""
    senders = ["alice@example.org", "\udcff@example.org", "bob@example.org"]
    answers = deliver_together(runtime, [(sender, make_mail("carol@example.org", f"help {n}")) for n, sender in enumerate(senders)])
    assert answers == ["250 2.0.0 OK", "554 5.6.0 the mail cannot be stored as it is", "250 2.0.0 OK"]
    assert stored_senders(runtime) == ["alice@example.org", "bob@example.org"]


def test_a_client_that_leaves_while_its_mail_is_stored_does_not_hold_up_the_others(runtime: Runtime) -> None:
    """Before, the storer set the result of a wait that had been cancelled,
    and stopped there: the mails after it never got their answer. (No
    floor on free disk: its check, in a thread, would let the client leave
    before its mail waits to be stored.)"""
    runtime.intake.settings = replace(runtime.intake.settings, min_free_mib=0)
    mails = [(f"p{n}@example.org", make_mail(f"p{n}@example.org", "help")) for n in range(3)]
    answers = deliver_together(runtime, mails, gone=0)
    assert answers == [None, "250 2.0.0 OK", "250 2.0.0 OK"]
    assert stored_senders(runtime) == [sender for sender, _ in mails]  # the first too: its client will find it a duplicate


# -- L: slow sessions and crowds ---------------------------------------------------


def greeting(connection: socket.socket) -> bytes:
    return connection.makefile("rb").readline()


def test_a_session_sending_a_command_now_and_then_is_closed_at_the_session_limit(runtime: Runtime) -> None:
    """aiosmtpd's timeout starts again with each command: a NOOP every few
    seconds kept a session open for ever."""
    with listening(runtime, session_seconds=2.0) as port, smtplib.SMTP("127.0.0.1", port, timeout=60) as client:
        for _ in range(300):  # a minute at most
            try:
                code, message = client.noop()
            except smtplib.SMTPServerDisconnected:
                raise AssertionError("closed without a 421") from None
            if code != 250:
                break
            time.sleep(0.2)
        assert (code, message) == (421, b"4.4.2 localhost session too long, closing connection")


def test_mail_data_sent_a_byte_at_a_time_is_cut_off_at_the_session_limit(runtime: Runtime) -> None:
    with listening(runtime, session_seconds=2.0) as port, socket.create_connection(("127.0.0.1", port), timeout=60) as connection:
        replies = connection.makefile("rb")
        connection.sendall(b"HELO trickle\r\nMAIL FROM:<a@example.org>\r\nRCPT TO:<pbmserv@localhost>\r\nDATA\r\n")
        for _ in range(5):
            replies.readline()
        for byte in b"Subject: x\r\n\r\n" * 20:  # a minute at most
            if select.select([connection], [], [], 0.2)[0]:  # the server has something to say
                break
            connection.sendall(bytes([byte]))
        assert replies.readline().startswith(b"421 4.4.2 ")
        assert replies.readline() == b""


def test_a_session_whose_client_reads_no_answer_is_still_ended(runtime: Runtime) -> None:
    """A client that sends commands and reads none of the answers fills the
    server's buffers; closing its connection waited for them to empty, for
    ever. It is cut off at the session limit all the same."""
    with listening(runtime, session_seconds=2.0) as port, socket.socket() as connection:
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        connection.settimeout(60)
        connection.connect(("127.0.0.1", port))
        with pytest.raises((ConnectionResetError, BrokenPipeError)):
            while True:
                connection.sendall(b"NOOP\r\n" * 1000)


def test_a_silent_session_is_closed_after_command_seconds(runtime: Runtime) -> None:
    with listening(runtime, command_seconds=1.0) as port, socket.create_connection(("127.0.0.1", port), timeout=60) as connection:
        replies = connection.makefile("rb")
        assert replies.readline().startswith(b"220 ")
        assert replies.readline() == b"421 4.4.2 localhost timeout, closing connection\r\n"
        assert replies.readline() == b""


def test_connections_past_the_limit_per_client_are_told_to_come_back_later(runtime: Runtime) -> None:
    with listening(runtime, max_sessions_per_client=3) as port, ExitStack() as stack:
        def connect() -> socket.socket:
            return stack.enter_context(socket.create_connection(("127.0.0.1", port), timeout=60))

        first = [connect() for _ in range(3)]
        assert [greeting(connection)[:4] for connection in first] == [b"220 "] * 3
        refused = connect()
        assert refused.makefile("rb").readlines() == [b"421 4.7.0 localhost too many connections, try again later\r\n"]
        first[0].close()
        for _ in range(600):  # once the server has seen it go (a minute at most), another may come
            if greeting(connect()).startswith(b"220 "):
                break
            time.sleep(0.1)
        else:
            raise AssertionError("a closed session still counts")


def test_every_one_of_a_crowd_of_connections_is_greeted(runtime: Runtime) -> None:
    """300 connections at once: as many as max_sessions are served, the
    others are told 421 at once; nobody is left without an answer. (On a
    busy machine the crowd takes long enough to arrive that sessions greeted
    first have been idle long enough to make room for later ones: those are
    closed with a 421 of their own.)"""

    async def crowd(port: int) -> tuple[list[bytes], list[bytes]]:
        async def one() -> tuple[bytes, asyncio.StreamReader, asyncio.StreamWriter]:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            return await asyncio.wait_for(reader.readline(), 120), reader, writer

        async def quit_session(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bytes:
            writer.write(b"QUIT\r\n")
            with suppress(ConnectionError):
                await writer.drain()
            return await asyncio.wait_for(reader.readline(), 120)

        greeted = await asyncio.gather(*(one() for _ in range(300)))
        held = [(reader, writer) for line, reader, writer in greeted if line.startswith(b"220 ")]
        last_words = await asyncio.gather(*(quit_session(reader, writer) for reader, writer in held))
        for _, _, writer in greeted:
            writer.close()
        return [line[:10] for line, _, _ in greeted], [line[:4] for line in last_words]

    with listening(runtime, max_sessions=40, max_sessions_per_client=1000) as port:
        greetings, last_words = asyncio.run(crowd(port))
    assert sorted(set(greetings)) == [b"220 localh", b"421 4.7.0 "]
    assert set(last_words) <= {b"221 ", b"421 "}
    assert last_words.count(b"221 ") == 40  # the sessions open at the end: the limit, all of it used


def test_at_the_session_limit_the_longest_idle_session_makes_room(runtime: Runtime) -> None:
    """Before, sessions that said nothing kept every other client out until
    they timed out (command_seconds: two minutes by default)."""
    with listening(runtime, max_sessions=3, max_sessions_per_client=1000) as port, ExitStack() as stack:
        def connect() -> socket.socket:
            return stack.enter_context(socket.create_connection(("127.0.0.1", port), timeout=60))

        idle = [connect() for _ in range(3)]
        assert [greeting(connection)[:4] for connection in idle] == [b"220 "] * 3
        assert greeting(connect()).startswith(b"421 4.7.0 ")  # none has been idle long enough yet
        time.sleep(IDLE_ENOUGH_TO_MAKE_ROOM_SECONDS + 0.2)
        with smtplib.SMTP("127.0.0.1", port, timeout=60) as client:
            client.sendmail("alice@example.org", [SERVER], make_mail("alice@example.org", "help"))
        ended = [connection.makefile("rb").readlines() for connection in idle[:1]]
        assert ended == [[b"421 4.4.2 localhost busy, closing idle session to make room, closing connection\r\n"]]
    assert stored_senders(runtime) == ["alice@example.org"]


def test_at_the_limit_in_all_a_client_with_fewer_sessions_is_let_in_at_once(runtime: Runtime) -> None:
    """A crowd from another address, however fresh its sessions, gives up
    its idlest one for a client holding fewer; before, a crowd spread over
    many addresses kept everyone out."""
    with listening(runtime, max_sessions=3, max_sessions_per_client=1000) as port, ExitStack() as stack:
        crowd = [stack.enter_context(socket.create_connection(("127.0.0.1", port), timeout=60, source_address=("127.0.0.2", 0)))
                 for _ in range(3)]
        assert [greeting(connection)[:4] for connection in crowd] == [b"220 "] * 3
        with smtplib.SMTP("127.0.0.1", port, timeout=60) as client:
            client.sendmail("alice@example.org", [SERVER], make_mail("alice@example.org", "help"))
        assert [connection.makefile("rb").readline()[:10] for connection in crowd[:1]] == [b"421 4.4.2 "]
    assert stored_senders(runtime) == ["alice@example.org"]


def test_at_the_limit_in_all_clients_one_session_apart_do_not_take_turns_closing_each_others(runtime: Runtime) -> None:
    """Before, a client holding one session fewer than another took that
    one's idlest, and then the other took it back: under a crowd of
    reconnecting addresses the listener made a session for every
    connection only to close one again."""
    with listening(runtime, max_sessions=3, max_sessions_per_client=1000) as port, ExitStack() as stack:
        def connect(address: str) -> socket.socket:
            return stack.enter_context(socket.create_connection(("127.0.0.1", port), timeout=60, source_address=(address, 0)))

        held = [connect("127.0.0.2"), connect("127.0.0.2"), connect("127.0.0.3")]
        assert [greeting(connection)[:4] for connection in held] == [b"220 "] * 3
        assert greeting(connect("127.0.0.3")).startswith(b"421 4.7.0 ")
        for connection in held:
            connection.sendall(b"NOOP\r\n")
            assert connection.makefile("rb").readline()[:4] == b"250 "
    assert stored_senders(runtime) == []


def test_mail_data_that_goes_on_past_the_size_limit_is_cut_off(runtime: Runtime) -> None:
    """Before, it was read and thrown away to its end, which need never come."""
    runtime.settings = replace(runtime.settings, max_message_bytes=10_000)
    with listening(runtime) as port, socket.create_connection(("127.0.0.1", port), timeout=60) as connection:
        replies = connection.makefile("rb")
        connection.sendall(b"HELO endless\r\nMAIL FROM:<a@example.org>\r\nRCPT TO:<pbmserv@localhost>\r\nDATA\r\n")
        assert [replies.readline()[:3] for _ in range(5)] == [b"220", b"250", b"250", b"250", b"354"]
        with pytest.raises((ConnectionResetError, BrokenPipeError)):
            for _ in range(1000):  # 100 MB: far past the limit and the slack after it
                connection.sendall((b"x" * 998 + b"\r\n") * 100)
        assert replies.readline().startswith(b"552 5.3.4 ")


def test_a_session_that_errs_again_and_again_is_closed(runtime: Runtime) -> None:
    """Each unknown reply address costs a database look-up: a client may
    not try a thousand. The server's own address named again is taken once."""
    with listening(runtime) as port, smtplib.SMTP("127.0.0.1", port, timeout=60) as client:
        client.ehlo()
        client.mail("many@example.org")
        assert {client.rcpt(SERVER)[0] for _ in range(100)} == {250}
        answers = []
        with pytest.raises(smtplib.SMTPServerDisconnected):
            for board in range(1000):
                answers.append(client.rcpt(f"pbmserv+majority-{board}-1-abcdefghjkmnpqrs@localhost")[0])
    # past the unknown recipients a client may name, 450 without a look-up; then the 421 that closed the session
    assert answers == [550] * REFUSED_RECIPIENTS + [450] * (MOST_ERRORS - REFUSED_RECIPIENTS) + [421]


# -- `pbmserv receive` refuses what SMTP intake refuses ----------------------------


@pytest.mark.parametrize(
    ("sender", "raw", "says"),
    [
        (b"evil\n@example.org", make_mail("alice@example.org", "help"), b"control character"),
        (b"evil\x1b@example.org", make_mail("alice@example.org", "help"), b"control character"),
        (b"x" * 300 + b"@example.org", make_mail("alice@example.org", "help"), b"longer than 256 octets"),
        (b"alice@example.org", make_mail("alice@example.org", "help").replace(b"Subject:", b"X: \0\r\nSubject:"), b"NUL"),
        (b"\xff@example.org", make_mail("alice@example.org", "help"), b"cannot be stored as it is"),
        (b"alice@example.org", make_mail("alice@example.org", "help", "x" * 10_000_000), b"larger than 10000 bytes"),
    ],
    ids=["newline-sender", "escape-sender", "long-sender", "nul-header", "not-utf8-sender", "oversize"],
)
def test_receive_refuses_for_good_what_smtp_intake_refuses(
    runtime: Runtime, database_url: str, tmp_path: Path, sender: bytes, raw: bytes, says: bytes,
) -> None:
    """Exit 65 (EX_DATAERR): the MTA bounces the mail, as a 5xx makes it.
    Before, these were taken, or failed with a traceback (exit 1)."""
    refused = subprocess.run(
        [BIN / "pbmserv", "receive", "--wait", b"--sender", sender], input=raw,
        env=env_for(tmp_path, PBMSERV_DATABASE_URL=database_url, PBMSERV_MAX_MESSAGE_BYTES="10000"),
        capture_output=True, timeout=60,
    )
    assert refused.returncode == 65, refused.stderr
    assert refused.stderr.splitlines()[-1].startswith(b"pbmserv: mail refused: ")
    assert says in refused.stderr
    assert inbound_rows(runtime) == []


def test_the_listener_raises_its_open_file_limit_to_hold_a_crowd() -> None:
    """At a soft limit of 512 open files (below the sessions plus the listen
    backlog) the listener's process raises it, within the hard limit."""
    script = (
        "import resource\n"
        "from pbmserv.smtpd import raise_open_file_limit\n"
        "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (512, hard))\n"
        "print(raise_open_file_limit(200), resource.getrlimit(resource.RLIMIT_NOFILE)[0], hard)\n"
    )
    now, soft, hard = (int(word) for word in subprocess.run(
        [sys.executable, "-c", script], check=True, capture_output=True, text=True,
    ).stdout.split())
    assert now == soft == min(200 + 1024 + 256, hard if hard >= 0 else 1 << 62)
