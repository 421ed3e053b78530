"""The web site for tests: the real app under a real uvicorn on a free
loopback port (in a thread of the test's process), over a database that
real mail has filled, and a plain HTTP client."""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from email.message import Message

import uvicorn

from pbmserv.runtime import Runtime
from pbmserv.web.app import make_app
from tests.mailtools import send, signup
from tests.smtp_helpers import free_port

PASSWORDS = {"alice": "secret1", "bob": "secret2", "carol": "secret3"}


@dataclass(frozen=True)
class Answer:
    status: int
    headers: Message
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode()

    @property
    def media_type(self) -> str:
        return self.headers.get("Content-Type", "").split(";")[0]


def fetch(url: str, method: str = "GET", **headers: str) -> Answer:
    """The answer to one request, whatever its status (urllib follows no redirect: the site makes none)."""
    request = urllib.request.Request(url, method=method, headers={name.replace("_", "-"): value for name, value in headers.items()})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return Answer(response.status, response.headers, response.read())
    except urllib.error.HTTPError as error:
        return Answer(error.code, error.headers, error.read())


@contextmanager
def running_site(runtime: Runtime) -> Iterator[str]:
    """The site over `runtime`'s database, its games and clock; yields its address (no trailing slash)."""
    port = free_port()
    app = make_app(runtime.settings, runtime.catalog, runtime.clock)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, access_log=False, lifespan="on"))
    thread = threading.Thread(target=server.run, name="web-site", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the site did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)


def play_boards(runtime: Runtime) -> None:
    """alice, bob and carol, and their boards, made by mail: toy 101
    running (alice b2, bob a1: alice to move), toy 102 won by bob (alice
    resigned), toy 103 with secret bonus squares (alice chose b3; bob to
    choose), toy 104 won by alice (a1, b1, a2, b2, a3: rated)."""
    for userid, password in PASSWORDS.items():
        signup(runtime, userid, password)
    for userid, subject in (
        ("alice", "toy challenge alice bob"), ("alice", "toy move 101 alice secret1 b2"), ("bob", "toy move 101 bob secret2 a1"),
        ("alice", "toy challenge alice bob"), ("alice", "toy resign 102 alice secret1"),
        ("alice", "toy challenge -secret alice bob"), ("alice", "toy move 103 alice secret1 bonus b3"),
        ("alice", "toy challenge alice bob"), *(
            (player, f"toy move 104 {player} {PASSWORDS[player]} {square}")
            for player, square in (("alice", "a1"), ("bob", "b1"), ("alice", "a2"), ("bob", "b2"), ("alice", "a3"))
        ),
    ):
        send(runtime, f"{userid}@example.org", subject)
