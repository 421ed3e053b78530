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
STOP_GRACE_SECONDS = 10.0
GIL_SWITCH_SECONDS = 0.0005


class EventLike(Protocol):
    def set(self) -> None: ...
    def clear(self) -> None: ...
    def is_set(self) -> bool: ...
    def wait(self, timeout: float | None = None) -> bool: ...


class IntakeHandler:
    """Answers 250 once the mail is committed (`Processor.accept`: into the
    arrival spool on SQLite, else into the database). Mails that arrive
    while a commit is under way wait for the next one, and are stored
    together by one thread in one transaction (group commit)."""

    def __init__(self, runtime: Runtime, wake: EventLike):
        self.runtime = runtime
        self.wake = wake
        self.address = runtime.settings.address.lower()
        self._waiting: list[tuple[bytes, str, asyncio.Future[None]]] = []
        self._storer: asyncio.Task[None] | None = None

    async def handle_RCPT(self, server: SMTP, session: Session, envelope: Envelope, address: str, rcpt_options: list[str]) -> str:
        if address.lower() != self.address:
            return f"550 5.1.1 <{address}>: no such mailbox here"
        envelope.rcpt_tos.append(address)
        return "250 2.1.5 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        stored: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append((envelope.original_content or b"", envelope.mail_from or "", stored))
        if self._storer is None:
            self._storer = asyncio.create_task(self._store_waiting())
        try:
            await stored
        except Exception:  # the mail is not safe with us: the sender must retry
            return "451 4.3.0 cannot store the mail now, try again later"
        return "250 2.0.0 OK"

    async def _store_waiting(self) -> None:
        try:
            while self._waiting:
                group, self._waiting = self._waiting, []
                try:
                    await asyncio.to_thread(self.runtime.processor.accept, [(raw, sender) for raw, sender, _ in group])
                except Exception as error:
                    log.exception("could not store %s inbound mail(s)", len(group))
                    for *_, stored in group:
                        stored.set_exception(error)
                    continue
                self.wake.set()
                for *_, stored in group:
                    stored.set_result(None)
        finally:
            self._storer = None


class Progress:
    """What the worker process is doing, shared with `serve`: the dedup key
    of the inbound mail it is processing ("": none; the row id would not
    do, as a killed worker's admission of spooled mail is undone with its
    transaction) and since when, by `time.monotonic()` (one clock for
    every process on the machine)."""

    def __init__(self, context: multiprocessing.context.BaseContext):
        self._mail = context.Array("c", 64, lock=False)
        self._since = context.Value("d", 0.0, lock=False)

    def begin(self, key: str) -> None:
        self._since.value = time.monotonic()
        self._mail.value = key.encode()

    def end(self) -> None:
        self._mail.value = b""

    def stuck_on(self, seconds: float) -> str | None:
        """The mail the worker has been processing for more than `seconds`."""
        mail = self._mail.value.decode()
        return mail if mail and time.monotonic() - self._since.value > seconds else None


class Worker:
    """Processes inbound mail in arrival order and, every `timer_seconds`,
    sends reminders and forfeits late games; woken by `wake` (set on new
    mail) or every `poll_seconds`, until `stop` is set; in a process of its
    own, until that process is terminated. It hands the replies it writes
    to the deliverer through `deliver`; without one it delivers them itself."""

    def __init__(
        self, runtime: Runtime, wake: EventLike | None = None, deliver: Handover | None = None,
        progress: Progress | None = None,
    ):
        self.runtime = runtime
        self.wake = wake if wake is not None else threading.Event()
        self.deliver = deliver
        self.progress = progress
        self.stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._timers_due = time.monotonic()

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
        while not self.stopping.is_set():
            if parent_pid is not None and os.getppid() != parent_pid:
                log.warning("the serving process is gone; %s stops", type(self).__name__.lower())
                return
            try:
                self.work_round()
            except Exception:
                log.exception("%s round failed; retrying", type(self).__name__.lower())
            self.pause()

    def pause(self) -> None:
        self.wake.wait(self.runtime.settings.poll_seconds)
        self.wake.clear()

    def work_round(self) -> None:
        more = True
        while more and not self.stopping.is_set():  # mail stored meanwhile wakes the worker again
            try:
                _, more = self.runtime.processor.process_batch(
                    on_mail=self.progress.begin if self.progress is not None else None,
                    hand_over=self.deliver.send if self.deliver is not None else None,
                )
            finally:
                if self.progress is not None:
                    self.progress.end()
        if time.monotonic() >= self._timers_due:
            self._timers_due = time.monotonic() + self.runtime.settings.timer_seconds
            for line in self.runtime.processor.run_timers():
                log.info("timers: %s", line)
        if self.deliver is None:  # in a thread: deliver here, retries that came due too
            self.runtime.delivery.deliver_due()


class Deliverer(Worker):
    """Sends the replies the worker hands over (`wake`, a Handover) as soon
    as they come, and every `poll_seconds` what has come due otherwise:
    retries, the timer pass's mails, mail left by a process that died."""

    def __init__(self, runtime: Runtime, wake: Handover, deliver: None = None, progress: None = None):
        super().__init__(runtime, wake)
        self.handed_over = wake
        self._due_check = time.monotonic()

    def pause(self) -> None:
        self.handed_over.wait(self.runtime.settings.poll_seconds)

    def stop(self) -> None:
        self.stopping.set()  # seen at the end of the pause, within poll_seconds

    def work_round(self) -> None:
        # every round, also without new ids: what a round before could
        # neither write down nor read is done first
        self.runtime.delivery.deliver_handed_over(self.handed_over.take())
        if time.monotonic() >= self._due_check:
            self._due_check = time.monotonic() + self.runtime.settings.poll_seconds
            self.runtime.delivery.deliver_due()


class Handover:
    """The ids of the inbound mails whose replies the worker has written
    for the deliverer, down a pipe as lines of text. Writes never block:
    each line is written whole or not at all (at most PIPE_BUF bytes), and
    when the pipe is full (a deliverer far behind, or gone) the ids are
    dropped; those replies are sent once their claim runs out. Like
    WakePipe it holds no lock that a killed process could leave taken."""

    IDS_PER_LINE = 400  # at most 10 digits and a space each: within PIPE_BUF

    def __init__(self, context: multiprocessing.context.BaseContext):
        self._reader, self._writer = context.Pipe(duplex=False)
        os.set_blocking(self._writer.fileno(), False)
        self._unfinished = b""

    def send(self, inbound_ids: list[int]) -> None:
        for start in range(0, len(inbound_ids), self.IDS_PER_LINE):
            line = " ".join(map(str, inbound_ids[start:start + self.IDS_PER_LINE])) + "\n"
            try:
                os.write(self._writer.fileno(), line.encode())
            except BlockingIOError:
                log.warning("the deliverer is far behind: %s replies wait for their claim to run out", len(inbound_ids))
                return
            except BrokenPipeError:
                return

    def wait(self, timeout: float | None = None) -> bool:
        return self._reader.poll(timeout)

    def take(self) -> list[int]:
        """Every id sent so far and not yet taken."""
        descriptor = self._reader.fileno()
        os.set_blocking(descriptor, False)
        received = self._unfinished
        try:
            while chunk := os.read(descriptor, 65536):
                received += chunk
        except BlockingIOError:
            pass
        *lines, self._unfinished = received.split(b"\n")
        return [int(inbound_id) for line in lines for inbound_id in line.split()]


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


def _child_process(
    role: type[Worker], settings: Settings, wake: WakePipe | Handover, deliver: Handover | None, parent_pid: int,
    progress: Progress | None,
) -> None:
    logging.basicConfig(
        level=logging.INFO, format=f"%(asctime)s %(levelname)s %(name)s[{role.__name__.lower()}]: %(message)s",
    )
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the serving process decides when to stop
    runtime = Runtime(settings)
    worker = role(runtime, wake, deliver, progress)  # type: ignore[arg-type]
    # SIGTERM asks the loop to stop after the round under way. An exception
    # raised from the handler would surface wherever the process happens to
    # be, and where the database driver or the pool catches it while
    # cleaning up, it turns into an ordinary error and the stop is lost.
    signal.signal(signal.SIGTERM, lambda *_: worker.stop())
    try:
        worker.run(parent_pid)
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


async def _give_up_stuck_mail(runtime: Runtime, worker: multiprocessing.process.BaseProcess, progress: Progress) -> None:
    """A worker that has spent `stuck_seconds` on one mail (a game caught
    in an endless loop, say) would hold up every later mail for good: it
    is killed, which rolls its transaction back, and the mail is marked
    failed with an apology, so that the new worker does not take it up
    again. The watchdog then starts that new worker."""
    seconds = runtime.settings.stuck_seconds
    mail = progress.stuck_on(seconds)
    if mail is None or not worker.is_alive():
        return
    log.error("the worker has spent over %gs on the mail with dedup key %s; restarting it", seconds, mail)
    worker.kill()
    await asyncio.to_thread(worker.join)
    progress.end()
    try:
        await asyncio.to_thread(runtime.processor.give_up, mail, f"not processed within {seconds:g}s: given up")
    except Exception:  # the new worker takes the mail up again, and the watchdog tries once more
        log.exception("could not give up the mail with dedup key %s", mail)


async def serve(runtime: Runtime) -> None:
    """Listen in this process; process mail in a worker process and deliver
    in a third (each a core of its own: Python threads would share one).
    Runs until SIGTERM or SIGINT."""
    host, _, port = runtime.settings.listen.rpartition(":")
    # The senders of the mails a thread is storing wait for its commit, with
    # a write lock held (the spool's); were it to wait the default 5 ms for
    # the GIL while the event loop runs, their 250s would come as much later.
    sys.setswitchinterval(GIL_SWITCH_SECONDS)
    context = multiprocessing.get_context("spawn")
    wake, deliver = WakePipe(context), Handover(context)
    progress = Progress(context)

    def start(role: type[Worker]) -> multiprocessing.process.BaseProcess:
        process = context.Process(
            target=_child_process,
            args=(
                role, runtime.settings, wake if role is Worker else deliver, deliver if role is Worker else None,
                os.getpid(), progress if role is Worker else None,
            ),
            name=f"pbmserv-{role.__name__.lower()}",
        )
        process.start()  # it picks up mail left pending (or undelivered) by an earlier crash at once
        return process

    children = {role: start(role) for role in (Worker, Deliverer)}
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
                await _give_up_stuck_mail(runtime, children[Worker], progress)
                for role, child in children.items():
                    if not child.is_alive():
                        log.error("the %s process died (exit code %s); starting a new one", role.__name__.lower(), child.exitcode)
                        children[role] = start(role)
    finally:
        server.close()
        try:  # sessions still sending are given a moment to get their answer
            await asyncio.wait_for(server.wait_closed(), STOP_GRACE_SECONDS)
        except asyncio.TimeoutError:
            log.warning("SMTP sessions still open at stop; closing them")
        for child in children.values():
            child.terminate()
        for child in children.values():
            await asyncio.to_thread(child.join, STOP_GRACE_SECONDS)
            if child.is_alive():  # stuck: killing it rolls its transaction back, and loses nothing
                log.warning("the %s process did not stop in time; killing it", child.name)
                child.kill()
                await asyncio.to_thread(child.join)
        log.info("pbmserv stopped")
