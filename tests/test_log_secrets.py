"""No log holds a reply address's code or a password, at any verbosity
(issue 35, F9): a real `pbmserv -v serve` on a loopback port, sent mail
over SMTP to a player's genuine reply address and mail with a password in
its Subject, in both log formats."""

from __future__ import annotations

import json
import logging
import re
import smtplib
from email.message import EmailMessage
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from pbmserv.logs import JsonFormatter, WithoutClientText, text_formatter
from pbmserv.runtime import Runtime
from pbmserv.service.play.reply_addresses import token_of
from pbmserv.store.database import make_engine
from pbmserv.store.models import InboundMail
from tests.mailtools import make_mail, send, signup
from tests.serve_helpers import ServeProcess, count, wait_until
from tests.test_logs import pbmserv

PASSWORD = "Zq7-horse-battery"
SERVER = "pbmserv@localhost"
#: a reply address's plus part, whatever its code
ANY_CODE = re.compile(r"toy-101-\d-[a-z2-9]{16}", re.IGNORECASE)


def reply_address_of(replies: list[tuple[str, EmailMessage]], recipient: str) -> str:
    [address] = [str(message["Reply-To"]) for to, message in replies if to == recipient and message["Reply-To"]]
    return address


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_verbose_serve_logs_no_code_and_no_password(
    runtime: Runtime, database_url: str, key_file: str, tmp_path: Path, log_format: str,
) -> None:
    signup(runtime, "alice", "secret1")
    signup(runtime, "bob", PASSWORD)
    address = reply_address_of(send(runtime, "alice@example.org", "toy challenge alice bob"), "alice@example.org")
    token = token_of(address, SERVER)
    assert token is not None
    newest_before = count(database_url, InboundMail.id)  # the ids of the mails set up with (the timer pass may delete them)

    server = ServeProcess(database_url, tmp_path, PBMSERV_KEY_FILE=key_file, PBMSERV_LOG_FORMAT=log_format)
    server.start(verbose=True)
    try:
        with smtplib.SMTP("127.0.0.1", server.port, timeout=30) as client:
            client.sendmail("alice@example.org", [address], make_mail("alice@example.org", "Re: Toy Board 101", "b2\n"))
            client.sendmail("bob@example.org", [SERVER], make_mail("bob@example.org", f"toy move 101 bob {PASSWORD} c3"))
            client.sendmail("carol@example.org", [SERVER], make_mail("carol@example.org", f"signup carol {PASSWORD}"))
        wait_until(lambda: count(database_url, InboundMail.id, InboundMail.status == "done", InboundMail.id > newest_before) == 3, 30, server)
    finally:
        server.stop()
    log = server.log.read_text()
    assert "DEBUG" in log or '"level": "DEBUG"' in log, "the log is verbose"
    assert "inbound" in log and "from bob@example.org: toy move: done" in log, log
    assert PASSWORD not in log
    assert token.mac not in log.lower()
    assert ANY_CODE.search(log) is None, ANY_CODE.search(log)


def test_a_reply_address_in_a_line_of_pbmserv_s_own_is_masked(database_url: str, tmp_path: Path) -> None:
    """The sender of a mail is logged; one that writes from a reply address (forged or not) shows without its code."""
    forged = "pbmserv+toy-101-1-abcdefghijkmnpqr@localhost"
    for how in ((), ("--log-format=json",)):
        result = pbmserv(tmp_path, database_url, *how, "-v", "receive", "--wait", raw=make_mail(forged, "help"))
        assert result.returncode == 0, result.stderr
        assert "abcdefghijkmnpqr" not in result.stderr
        assert "from pbmserv+toy-101-1-********@localhost: help" in result.stderr, result.stderr


def test_aiosmtpd_s_records_keep_the_client_s_address_and_lose_its_words() -> None:
    peer = ("127.0.0.1", 2525)
    records = [
        logging.makeLogRecord({"name": "mail.log", "levelno": level, "msg": msg, "args": args})
        for level, msg, args in (
            (logging.INFO, "%r >> %r", (peer, b"RCPT TO:<pbmserv+toy-101-1-abcdefghijkmnpqr@localhost>")),
            (logging.DEBUG, "DATA readline: %s", (b"Subject: toy move 101 alice Tr0ub4dor b2",)),
            (logging.WARNING, "%r unrecognised: %s", (peer, "TR0UB4DOR")),
            (logging.INFO, "%r connection lost", (peer,)),
        )
    ]
    kept = [record.getMessage() for record in records if WithoutClientText().filter(record)]
    assert kept == ["('127.0.0.1', 2525) unrecognised: [...]", "('127.0.0.1', 2525) connection lost"]


def test_a_database_error_never_shows_the_statement_s_parameters(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'x.db'}")
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE t (secret TEXT UNIQUE)"))
        connection.execute(text("INSERT INTO t VALUES (:secret)"), {"secret": PASSWORD})
    with pytest.raises(IntegrityError) as raised, engine.begin() as connection:
        connection.execute(text("INSERT INTO t VALUES (:secret)"), {"secret": PASSWORD})
    assert PASSWORD not in str(raised.value) and "hide_parameters" in str(raised.value)
    engine.dispose()


def test_both_formats_mask_an_address_in_any_form_also_in_extra_fields() -> None:
    fullwidth = "pbmserv＋toy-101-1-ABCDEFGHIJKMNPQR＠localhost"
    record = logging.makeLogRecord({
        "name": "pbmserv.test", "levelno": logging.INFO, "levelname": "INFO", "msg": "from %s", "args": (fullwidth,),
        "sender": "pbmserv+toy-101-1-abcdefghijkmnpqr@localhost",
    })
    entry = json.loads(JsonFormatter().format(record))
    assert entry["message"] == "from pbmserv＋toy-101-1-********＠localhost"
    assert entry["sender"] == "pbmserv+toy-101-1-********@localhost"
    assert text_formatter("").format(record).endswith("from pbmserv＋toy-101-1-********＠localhost")
