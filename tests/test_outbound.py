"""Replies are written byte by byte (pbmserv/mail/outbound.py); here every
shape is read back with the email package's strict modern policy."""

from __future__ import annotations

from datetime import UTC, datetime
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pbmserv.mail.outbound import compose

WHEN = datetime(2026, 11, 22, 9, 30, tzinfo=UTC)


def reply(subject: str = "Majority Board 101 bob", body: str = "Your move.\n", **extra: Any) -> tuple[str, bytes]:
    return compose(sender="pbmserv@example.org", recipient="bob@example.org", subject=subject, body=body, date=WHEN, **extra)


def read(raw: bytes) -> EmailMessage:
    return BytesParser(policy=policy.default).parsebytes(raw)


def content(raw: bytes) -> str:
    """The text as a mail client shows it (line ends as "\\n")."""
    return read(raw).get_content().replace("\r\n", "\n")


def test_ascii_reply_is_seven_bit_with_the_robot_headers() -> None:
    message_id, raw = reply(in_reply_to="<1@example.org>", references="<0@example.org>")
    message = read(raw)
    assert message["From"] == "pbmserv@example.org"
    assert message["To"] == "bob@example.org"
    assert message["Subject"] == "Majority Board 101 bob"
    assert message["Message-ID"] == message_id
    assert message["In-Reply-To"] == "<1@example.org>"
    assert message["References"] == "<0@example.org> <1@example.org>"
    assert message["Auto-Submitted"] == "auto-replied"
    assert message["Date"].datetime == WHEN
    assert message["Content-Transfer-Encoding"] == "7bit"
    assert content(raw) == "Your move.\n"
    assert b"\r\n\r\nYour move.\r\n" in raw
    assert all(line.endswith(b"\r") or line == b"" for line in raw.split(b"\n")[:-1])


def test_non_ascii_text_and_subject_are_encoded() -> None:
    _, raw = reply(subject="Synch Board 101 jürgen", body="Grüße, jürgen\n")
    raw.decode("ascii")
    message = read(raw)
    assert message["Subject"] == "Synch Board 101 jürgen"
    assert message["Content-Transfer-Encoding"] == "quoted-printable"
    assert message.get_content_charset() == "utf-8"
    assert content(raw) == "Grüße, jürgen\n"


def test_an_overlong_line_is_sent_quoted_printable() -> None:
    long_line = "x" * 2000
    _, raw = reply(body=long_line + "\n")
    assert max(len(line) for line in raw.split(b"\r\n")) <= 998
    assert content(raw) == long_line + "\n"


def test_long_references_are_folded() -> None:
    references = " ".join(f"<message-{n}@mail.example.org>" for n in range(60))
    _, raw = reply(in_reply_to="<last@example.org>", references=references)
    assert max(len(line) for line in raw.split(b"\r\n")) <= 78 + 2
    assert read(raw)["References"] == references + " <last@example.org>"


@given(st.text(min_size=1, max_size=200), st.text(max_size=400))
def test_any_subject_and_body_read_back(subject: str, body: str) -> None:
    _, raw = reply(subject=subject, body=body)
    message = read(raw)
    assert message["Subject"] == " ".join(subject.split())
    expected = body.replace("\r\n", "\n").replace("\r", "\n")
    assert content(raw) == (expected if expected.endswith("\n") else expected + "\n")
