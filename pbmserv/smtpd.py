"""The SMTP listener: a thin aiosmtpd handler that stores each mail durably
before it answers 250. Everything slow (database, argon2) runs in threads."""

from __future__ import annotations

import asyncio
import logging
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


def run_worker(runtime: Runtime, wake: threading.Event, stop: threading.Event) -> None:
    """Process inbound mail in arrival order and work the outbox until stopped."""
    while not stop.is_set():
        try:
            runtime.processor.process_pending()
            runtime.delivery.deliver_due()
        except Exception:
            log.exception("worker round failed; retrying")
        wake.wait(runtime.settings.poll_seconds)
        wake.clear()


async def serve(runtime: Runtime, ready: threading.Event | None = None) -> None:
    settings = runtime.settings
    host, _, port = settings.listen.rpartition(":")
    wake, stop = threading.Event(), threading.Event()
    worker = threading.Thread(target=run_worker, args=(runtime, wake, stop), name="pbmserv-worker", daemon=True)
    worker.start()
    loop = asyncio.get_running_loop()
    handler = IntakeHandler(runtime, wake)
    server = await loop.create_server(
        lambda: SMTP(handler, hostname=settings.hostname, data_size_limit=settings.max_message_bytes),
        host or "127.0.0.1",
        int(port),
    )
    log.info("pbmserv listening on %s for %s", settings.listen, settings.address)
    if ready is not None:
        ready.set()
    try:
        async with server:
            await server.serve_forever()
    finally:
        stop.set()
        wake.set()
        worker.join(timeout=10)
