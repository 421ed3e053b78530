"""Several `serve` processes on one PostgreSQL database: the outbox claims
of one that is gone are taken over at once by another, never those of one
that lives (`pbmserv.store.owners`)."""

from __future__ import annotations

import os
import signal
import socket
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select

from pbmserv.runtime import Runtime
from pbmserv.store import outbox
from pbmserv.store.models import OutboxMail
from pbmserv.store.owners import ClaimOwner
from tests.mailtools import make_mail
from tests.serve_helpers import ServeProcess, count, wait_until


@pytest.fixture
def postgres_url(database_url: str) -> str:
    if not database_url.startswith("postgresql"):
        pytest.skip("claims are taken over from a serve that is gone on PostgreSQL only (SQLite has one serve)")
    return database_url


@pytest.fixture
def silent_relay() -> Iterator[int]:
    """A relay that takes the connection and never says a word: a deliverer
    sending to it waits in its session, its mails claimed."""
    with socket.socket() as relay:
        relay.bind(("127.0.0.1", 0))
        relay.listen(16)
        yield int(relay.getsockname()[1])


def claim_one(runtime: Runtime, owner: str) -> int:
    now = runtime.clock()
    with runtime.engine.begin() as connection:
        outbox.queue(connection, [{
            "created_at": now, "inbound_id": None, "recipient": "alice@example.org", "message_id": "<c1@x>",
            "raw": b"Subject: hello\r\n\r\nhello\r\n", "status": "pending", "kind": "answer", "attempts": 0,
            "next_try_at": now, "last_error": "",
        }])
        [row] = outbox.claim_due(connection, now, now + timedelta(minutes=10), 10, owner, "deliverer-1" if owner else "")
    return int(row.id)


def due_now(runtime: Runtime) -> list[int]:
    now = runtime.clock()
    with runtime.engine.begin() as connection:
        return [row.id for row in outbox.claim_due(connection, now, now + timedelta(minutes=10), 10)]


def test_the_claims_of_a_living_owner_are_kept_and_of_a_gone_one_taken_over(postgres_url: str, runtime: Runtime) -> None:
    owner = ClaimOwner("elsewhere.example:127.0.0.1:2525", create_engine(postgres_url))
    owner.keep()
    claimed = claim_one(runtime, owner.name)
    assert due_now(runtime) == [], "its owner holds the lock"
    owner.close()  # as when every process holding it is killed
    taken: list[int] = []

    def taken_over() -> bool:
        taken.extend(due_now(runtime))
        return bool(taken)

    wait_until(taken_over, 5.0)  # the lock goes once the owner's backend has exited, a moment after it hung up
    assert taken == [claimed]
    assert due_now(runtime) == [], "taken over once, then claimed by the one who took it"


def test_claims_without_an_owner_wait_until_they_run_out(postgres_url: str, runtime: Runtime) -> None:
    claim_one(runtime, "")  # `receive` and `pbmserv deliver` claim so
    assert due_now(runtime) == []


def test_a_serve_killed_while_sending_leaves_its_replies_to_the_other(
    postgres_url: str, tmp_path: Path, silent_relay: int,
) -> None:
    """A's deliverer waits on a relay that never answers, the welcome mail
    claimed; B, polling meanwhile, leaves it to A. A is killed with all its
    processes: B sends the welcome, within seconds instead of the ten
    minutes the claim would have taken to run out."""
    first = ServeProcess(postgres_url, tmp_path, "first", PBMSERV_MAIL_BACKEND="smtp", PBMSERV_RELAY=f"127.0.0.1:{silent_relay}")
    second = ServeProcess(postgres_url, tmp_path, "second")
    first.start()
    second.start()
    try:
        first.send(make_mail("alice@example.org", "signup alice secret1"), "alice@example.org")
        wait_until(lambda: count(postgres_url, OutboxMail.id, OutboxMail.claimed_by != "") == 1, 30.0, first, second)
        time.sleep(1.0)  # B polls every 0.2 s
        assert second.mails() == [], "B takes no claim of A's while A lives"
        assert first.process is not None
        os.killpg(first.process.pid, signal.SIGKILL)
        first.process.wait(timeout=10)
        wait_until(lambda: len(second.mails()) == 1, 30.0, second)
    finally:
        first.stop()
        second.stop()
    engine = create_engine(postgres_url)
    with engine.connect() as connection:
        rows = connection.execute(select(OutboxMail.status, OutboxMail.attempts)).all()
    engine.dispose()
    assert [tuple(row) for row in rows] == [("sent", 1)]
    assert b"Subject: confirm alice " in second.mails()[0]
    assert "took over 1 outbox claims of serve" in second.log.read_text()
