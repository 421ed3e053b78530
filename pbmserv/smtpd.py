"""The SMTP listener: a thin aiosmtpd handler that stores each mail durably
before it answers 250. Everything slow (database, argon2) runs in threads."""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from typing import Protocol

from aiosmtpd.smtp import SMTP, Envelope, Session

from pbmserv.config import Settings
from pbmserv.runtime import Runtime

log = logging.getLogger(__name__)


WATCHDOG_SECONDS = 5.0


class EventLike(Protocol):
    def set(self) -> None: ...
    def clear(self) -> None: ...
    def is_set(self) -> bool: ...
    def wait(self, timeout: float | None = None) -> bool: ...


class IntakeHandler:
    def __init__(self, runtime: Runtime, wake: EventLike):
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
    """Processes inbound mail in arrival order, works the outbox and, every
    `timer_seconds`, sends reminders and forfeits late games; woken by
    `wake` (set on new mail) or every `poll_seconds`, until `stop` is set;
    in a process of its own, until that process is terminated."""

    def __init__(self, runtime: Runtime, wake: EventLike | None = None):
        self.runtime = runtime
        self.wake = wake if wake is not None else threading.Event()
        self.stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Run in a thread of this process (tests, `receive`-style use)."""
        self._thread = threading.Thread(target=self.run, name="pbmserv-worker", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.stopping.set()
        self.wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def run(self, parent_pid: int | None = None) -> None:
        timers_due = time.monotonic()
        while not self.stopping.is_set():
            if parent_pid is not None and os.getppid() != parent_pid:
                log.warning("the serving process is gone; worker stops")
                return
            try:
                self.runtime.processor.process_pending()
                if time.monotonic() >= timers_due:
                    timers_due = time.monotonic() + self.runtime.settings.timer_seconds
                    for line in self.runtime.processor.run_timers():
                        log.info("timers: %s", line)
                self.runtime.delivery.deliver_due()
            except Exception:
                log.exception("worker round failed; retrying")
            self.wake.wait(self.runtime.settings.poll_seconds)
            self.wake.clear()


class WakePipe:
    """Wakes the worker process with a byte down a pipe. Unlike a
    multiprocessing.Event it holds no lock that a killed worker could leave
    taken (which would hang the SMTP side for good), and setting it never
    blocks the event loop."""

    def __init__(self, context: multiprocessing.context.BaseContext):
        self._reader, self._writer = context.Pipe(duplex=False)
        os.set_blocking(self._writer.fileno(), False)

    def set(self) -> None:
        try:
            os.write(self._writer.fileno(), b"!")
        except (BlockingIOError, BrokenPipeError):
            pass  # a wake-up is already waiting, or the worker is gone (the watchdog restarts it)

    def wait(self, timeout: float | None = None) -> bool:
        return self._reader.poll(timeout)

    def is_set(self) -> bool:
        return self._reader.poll(0)

    def clear(self) -> None:
        descriptor = self._reader.fileno()
        os.set_blocking(descriptor, False)
        try:
            while os.read(descriptor, 4096):
                pass
        except BlockingIOError:
            pass


def _worker_process(settings: Settings, wake: WakePipe, parent_pid: int) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s[worker]: %(message)s")
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the serving process decides when to stop
    # SIGTERM unwinds: an unfinished transaction is rolled back, nothing half-applied
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    runtime = Runtime(settings)
    try:
        Worker(runtime, wake).run(parent_pid)
    finally:
        runtime.close()


async def start_listener(runtime: Runtime, wake: EventLike, host: str, port: int) -> asyncio.Server:
    """The SMTP server on (host, port); port 0 picks a free port."""
    settings = runtime.settings
    handler = IntakeHandler(runtime, wake)
    return await asyncio.get_running_loop().create_server(
        lambda: SMTP(handler, hostname=settings.hostname, data_size_limit=settings.max_message_bytes),
        host,
        port,
    )


async def serve(runtime: Runtime) -> None:
    """Listen in this process; process and deliver in a worker process (a
    second core: Python threads would share one). Runs until SIGTERM or SIGINT."""
    host, _, port = runtime.settings.listen.rpartition(":")
    context = multiprocessing.get_context("spawn")
    wake = WakePipe(context)

    def start_worker() -> multiprocessing.process.BaseProcess:
        process = context.Process(
            target=_worker_process, args=(runtime.settings, wake, os.getpid()), name="pbmserv-worker"
        )
        process.start()  # it picks up mail left pending by an earlier crash at once
        return process

    worker = start_worker()
    server = await start_listener(runtime, wake, host or "127.0.0.1", int(port))
    log.info("pbmserv listening on %s for %s", runtime.settings.listen, runtime.settings.address)
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stopping.set)
    try:
        while not stopping.is_set():
            try:
                await asyncio.wait_for(stopping.wait(), timeout=WATCHDOG_SECONDS)
            except asyncio.TimeoutError:
                if not worker.is_alive():
                    log.error("the worker process died (exit code %s); starting a new one", worker.exitcode)
                    worker = start_worker()
    finally:
        server.close()
        await server.wait_closed()
        worker.terminate()
        await asyncio.to_thread(worker.join, 30)
        log.info("pbmserv stopped")
