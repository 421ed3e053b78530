"""Real SMTP servers on loopback ephemeral ports for tests: pbmserv's own
listener, and a relay sink that answers as scripted."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from aiosmtpd.smtp import SMTP, Envelope, Session


@contextmanager
def loop_thread() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield loop
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()


@contextmanager
def smtp_server(handler_factory: Callable[[], object], timeout: float = 300) -> Iterator[int]:
    """An aiosmtpd server on 127.0.0.1 and a free port (yielded). The
    threaded Controller of aiosmtpd 1.4.6 cannot bind port 0, so the server
    is made with loop.create_server. timeout: seconds the server waits for
    an idle client (aiosmtpd's default is 300)."""
    with loop_thread() as loop:
        handler = handler_factory()

        async def start() -> asyncio.Server:
            return await loop.create_server(
                lambda: SMTP(handler, hostname="test.localhost", timeout=timeout), "127.0.0.1", 0
            )

        server = asyncio.run_coroutine_threadsafe(start(), loop).result(10)
        try:
            yield server.sockets[0].getsockname()[1]
        finally:
            close_server(server, loop)


def close_server(server: asyncio.Server, loop: asyncio.AbstractEventLoop) -> None:
    """Close a server from outside its loop's thread (close() is not thread-safe)."""

    async def close() -> None:
        server.close()
        await server.wait_closed()

    asyncio.run_coroutine_threadsafe(close(), loop).result(10)


class ScriptedSink:
    """A relay that answers DATA with the scripted replies in turn (then 250)."""

    def __init__(self, replies: list[str]):
        self.replies = list(replies)
        self.accepted: list[bytes] = []
        self.sessions: set[object] = set()  # the client's (host, port) of each session that sent DATA

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        self.sessions.add(session.peer)
        reply = self.replies.pop(0) if self.replies else "250 OK"
        assert envelope.original_content is not None  # aiosmtpd sets it before DATA is handled
        if reply.startswith("250"):
            self.accepted.append(envelope.original_content)
        return reply


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
