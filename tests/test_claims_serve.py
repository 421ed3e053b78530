"""A real `pbmserv serve` whose deliverer, or itself, is SIGKILLed while it
sends a reply to a relay that holds the mail: the reply is sent within
seconds of the restart, not once its claim runs out ten minutes later."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from aiosmtpd.smtp import SMTP, Envelope, Session

from tests.serve_helpers import ServeProcess, wait_until
from tests.smtp_helpers import smtp_server

#: far below the ten minutes a claim lasts, and far above what the restart takes
SECONDS = 60.0
HELP = b"From: alice@example.org\r\nSubject: help\r\nMessage-ID: <claims@x>\r\n\r\n\r\n"


class HoldingRelay:
    """A relay that holds every mail's DATA unanswered until `release` is
    set, then refuses those held with a 451, and accepts every later one."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.held = 0
        self.accepted: list[bytes] = []

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        if not self.release.is_set():
            self.held += 1
            while not self.release.is_set():
                await asyncio.sleep(0.05)
            return "451 4.3.0 try again later"
        assert envelope.original_content is not None
        self.accepted.append(envelope.original_content)
        return "250 OK"


@contextmanager
def serving_through(relay: HoldingRelay, database_url: str, tmp_path: Path) -> Iterator[ServeProcess]:
    with smtp_server(lambda: relay) as port:
        serve = ServeProcess(database_url, tmp_path, PBMSERV_MAIL_BACKEND="smtp", PBMSERV_RELAY=f"127.0.0.1:{port}")
        try:
            yield serve.start()
        finally:
            relay.release.set()
            serve.stop()


def deliverer_pid(serve: ServeProcess) -> int:
    """The deliverer's pid, as serve's log names it last."""
    started = re.findall(r"deliverer pid (\d+)|the deliverer process died .* pid (\d+)", serve.log.read_text())
    return int("".join(started[-1]))


def running(pid: int) -> bool:
    """Whether the process runs (a zombie that nobody has reaped yet does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_reply_held_by_a_killed_deliverer_is_sent_at_once_by_the_next(database_url: str, tmp_path: Path) -> None:
    relay = HoldingRelay()
    with serving_through(relay, database_url, tmp_path) as serve:
        serve.send(HELP)
        wait_until(lambda: relay.held == 1, SECONDS, serve)  # the deliverer has the reply's claim, and sends it
        os.kill(deliverer_pid(serve), signal.SIGKILL)
        relay.release.set()
        wait_until(lambda: len(relay.accepted) == 1, SECONDS, serve)
        assert b"Subject: pbmserv help" in relay.accepted[0]


def test_a_reply_held_by_a_killed_serve_is_sent_at_once_after_its_restart(database_url: str, tmp_path: Path) -> None:
    relay = HoldingRelay()
    with serving_through(relay, database_url, tmp_path) as serve:
        serve.send(HELP)
        wait_until(lambda: relay.held == 1, SECONDS, serve)
        assert serve.process is not None
        children = serve.children(3)
        serve.kill()
        wait_until(lambda: not any(map(running, children)), SECONDS, serve)  # they died with it
        relay.release.set()
        serve.start()
        wait_until(lambda: len(relay.accepted) == 1, SECONDS, serve)
        assert b"Subject: pbmserv help" in relay.accepted[0]
