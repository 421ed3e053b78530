"""The SMTP listener: a thin aiosmtpd handler that stores each mail durably
before it answers 250. Everything slow (database, argon2) runs in threads."""

from __future__ import annotations

import asyncio
import logging
import signal
import threading

from aiosmtpd.smtp import SMTP, Envelope, Session

from pbmserv.runtime import Runtime

log = logging.getLogger(__name__)


class IntakeHandler:
    def __init__(self, runtime: Runtime, wake: threading.Event):
        self.runtime = runtime
        self.wake = wake
        self.address = runtime.settings.address.lower()

    async def handle_RCPT(self, server: SMTP, session: Session, envelope: Envelope, address: str, rcpt_options: list[str]) -> str:
        if address.lower() != self.address:
            return f"550 5.1.1 <{address}>: no such mailbox here"
        envelope.rcpt_tos.append(address)
        return "250 2.1.5 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        raw = envelope.original_content or b""
        try:
            _, duplicate = await asyncio.to_thread(self.runtime.processor.store, raw, envelope.mail_from or "")
        except Exception:  # the mail is not safe with us: the sender must retry
            log.exception("could not store an inbound mail")
            return "451 4.3.0 cannot store the mail now, try again later"
        self.wake.set()
        return "250 2.0.0 OK (already received)" if duplicate else "250 2.0.0 OK"


class Worker:
    """A thread that processes inbound mail in arrival order and works the
    outbox, woken by new mail or every `poll_seconds`."""

    def __init__(self, runtime: Runtime):
        self.runtime = runtime
        self.wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="pbmserv-worker", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self.wake.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.runtime.processor.process_pending()
                self.runtime.delivery.deliver_due()
            except Exception:
                log.exception("worker round failed; retrying")
            self.wake.wait(self.runtime.settings.poll_seconds)
            self.wake.clear()


async def start_listener(runtime: Runtime, wake: threading.Event, host: str, port: int) -> asyncio.Server:
    """The SMTP server on (host, port); port 0 picks a free port."""
    settings = runtime.settings
    handler = IntakeHandler(runtime, wake)
    return await asyncio.get_running_loop().create_server(
        lambda: SMTP(handler, hostname=settings.hostname, data_size_limit=settings.max_message_bytes),
        host,
        port,
    )


async def serve(runtime: Runtime) -> None:
    """Listen, process and deliver until SIGTERM or SIGINT."""
    host, _, port = runtime.settings.listen.rpartition(":")
    worker = Worker(runtime)
    worker.start()  # picks up mail left pending by an earlier crash at once
    server = await start_listener(runtime, worker.wake, host or "127.0.0.1", int(port))
    log.info("pbmserv listening on %s for %s", runtime.settings.listen, runtime.settings.address)
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stopping.set)
    try:
        await stopping.wait()
    finally:
        server.close()
        await server.wait_closed()
        await asyncio.to_thread(worker.stop)
        log.info("pbmserv stopped")
