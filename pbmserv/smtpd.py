"""The SMTP listener: a thin aiosmtpd handler that stores each mail durably
before it answers 250. Everything slow (database, argon2) runs in threads."""

from __future__ import annotations

import asyncio
import errno
import logging
import multiprocessing
import os
import re
import signal
import sqlite3
import sys
import threading
import time
from collections import Counter
from typing import Any, Protocol, cast

from aiosmtpd.smtp import SMTP, Envelope, Session
from sqlalchemy import exc
from sqlalchemy.engine import make_url

from pbmserv import logs
from pbmserv.config import ConfigError, Settings, TryAgainLater
from pbmserv.runtime import Runtime
from pbmserv.store.key import key_path

log = logging.getLogger(__name__)


WATCHDOG_SECONDS = 5.0
STOP_GRACE_SECONDS = 10.0
GIL_SWITCH_SECONDS = 0.0005
#: connections the kernel queues for the listener before it accepts them
#: (asyncio's default, 100, dropped the connections of a crowd arriving at once)
LISTEN_BACKLOG = 1024

# -- what intake refuses (SMTP intake; `receive` follows the same rules) -------

#: the longest reverse or forward path, angle brackets included (RFC 5321 4.5.3.1.3)
MAX_PATH_OCTETS = 256
_CONTROL_CHARACTER = re.compile(r"[\x00-\x1f\x7f]")
_EMPTY_LINE = re.compile(rb"\n\r?\n")

#: errors that say the database takes no mail now (an outage, a lock held past
#: the busy timeout, a full disk): every mail waits for its sender's retry
OUTAGE_ERRORS = (exc.OperationalError, exc.InterfaceError, sqlite3.OperationalError, OSError)
#: errors that say this mail can never be stored as it is: PostgreSQL refuses
#: a NUL or an over-long value in a text column, either database a string that
#: is not valid Unicode
UNSTORABLE_ERRORS = (exc.DataError, UnicodeError)


def path_problem(address: str) -> str | None:
    """Why intake refuses a sender or recipient address, or None."""
    if _CONTROL_CHARACTER.search(address):
        return "the address holds a control character"
    if len(address) + 2 > MAX_PATH_OCTETS:
        return f"the address is longer than {MAX_PATH_OCTETS} octets"
    return None


def content_problem(raw: bytes) -> str | None:
    """Why intake refuses a mail's bytes, or None. The header block is
    taken to end at the first empty line, however the lines end: where the
    mail parser ends it earlier, the block checked is only the larger. The
    body may hold anything: the raw mail is kept as bytes."""
    if b"\0" in _EMPTY_LINE.split(raw, maxsplit=1)[0]:
        return "the header holds a NUL byte"
    return None


class EventLike(Protocol):
    def set(self) -> None: ...
    def clear(self) -> None: ...
    def is_set(self) -> bool: ...
    def wait(self, timeout: float | None = None) -> bool: ...


class IntakeHandler:
    """Answers 250 once the mail is committed (`Processor.accept`: into the
    arrival spool on SQLite, else into the database). Mails that arrive
    while a commit is under way wait for the next one, and are stored
    together by one thread in one transaction (group commit). What could
    never be stored is refused before, with a 5xx for that mail alone."""

    def __init__(self, runtime: Runtime, wake: EventLike):
        self.runtime = runtime
        self.wake = wake
        self.address = runtime.settings.address.lower()
        self._waiting: list[tuple[bytes, str, asyncio.Future[None]]] = []
        self._storer: asyncio.Task[None] | None = None

    async def handle_MAIL(self, server: SMTP, session: Session, envelope: Envelope, address: str, mail_options: list[str]) -> str:
        problem = path_problem(address)
        if problem is not None:
            return f"553 5.1.7 {problem}"
        envelope.mail_from = address
        envelope.mail_options.extend(mail_options)
        return "250 2.1.0 OK"

    async def handle_RCPT(self, server: SMTP, session: Session, envelope: Envelope, address: str, rcpt_options: list[str]) -> str:
        problem = path_problem(address)
        if problem is not None:
            return f"553 5.1.3 {problem}"
        if address.lower() != self.address:
            return f"550 5.1.1 <{address}>: no such mailbox here"
        envelope.rcpt_tos.append(address)
        return "250 2.1.5 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        raw = envelope.original_content or b""
        problem = content_problem(raw)
        if problem is not None:
            return f"554 5.6.0 {problem}"
        stored: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append((raw, envelope.mail_from or "", stored))
        if self._storer is None:
            self._storer = asyncio.create_task(self._store_waiting())
        try:
            await stored
        except UNSTORABLE_ERRORS:  # it would fail the same way every time: the sender must not retry
            return "554 5.6.0 the mail cannot be stored as it is"
        except Exception:  # the mail is not safe with us: the sender must retry
            return "451 4.3.0 cannot store the mail now, try again later"
        return "250 2.0.0 OK"

    async def _store_waiting(self) -> None:
        try:
            while self._waiting:
                group, self._waiting = self._waiting, []
                await self._store_group(group)
        finally:
            self._storer = None

    async def _store_group(self, group: list[tuple[bytes, str, asyncio.Future[None]]]) -> None:
        """One transaction for the group. Should it fail for any reason but
        an outage, the mails are stored one by one, so that only a mail that
        cannot be stored is refused. In an outage they are not: each try
        could wait out the busy timeout, and all would fail the same."""
        error = await self._accept(group)
        if error is None or len(group) == 1 or isinstance(error, OUTAGE_ERRORS):
            self._answer(group, error)
            return
        log.warning("could not store %s inbound mails together (%r); storing them one by one", len(group), error)
        for position, mail in enumerate(group):
            error = await self._accept([mail])
            self._answer([mail], error)
            if isinstance(error, OUTAGE_ERRORS):
                self._answer(group[position + 1:], error)
                return

    async def _accept(self, mails: list[tuple[bytes, str, asyncio.Future[None]]]) -> Exception | None:
        try:
            await asyncio.to_thread(self.runtime.processor.accept, [(raw, sender) for raw, sender, _ in mails])
        except Exception as error:
            log.exception("could not store %s inbound mail(s)", len(mails))
            return error
        self.wake.set()
        return None

    @staticmethod
    def _answer(mails: list[tuple[bytes, str, asyncio.Future[None]]], error: Exception | None) -> None:
        for *_, stored in mails:
            if stored.done():  # its client has gone (the session's task, and with it the wait, was cancelled)
                continue
            if error is None:
                stored.set_result(None)
            else:
                stored.set_exception(error)


class SessionLimits:
    """The SMTP sessions open now, in all and by client address."""

    def __init__(self, most: int, most_per_client: int):
        self.most = most
        self.most_per_client = most_per_client
        self.open: Counter[str] = Counter()

    def enter(self, client: str) -> bool:
        """Count a new session from `client` in, if no limit is reached."""
        if self.open.total() >= self.most or self.open[client] >= self.most_per_client:
            return False
        self.open[client] += 1
        return True

    def leave(self, client: str) -> None:
        self.open[client] -= 1
        if not self.open[client]:
            del self.open[client]


class LimitedSMTP(SMTP):
    """aiosmtpd's SMTP session, with what a server open to the internet
    needs besides: at most so many sessions at once (in all and per client),
    a limit on how long a session lasts in all, and an answer (421) when it
    is closed for taking too long. aiosmtpd's own timeout (`timeout`)
    restarts with every command, so by itself a client sending one now
    and then could keep its session for ever."""

    def __init__(self, handler: Any, limits: SessionLimits, session_seconds: float, **options: Any):
        super().__init__(handler, **options)
        self.limits = limits
        self.session_seconds = session_seconds
        self.client: str | None = None  # once the session is let in
        self._session_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        client = (transport.get_extra_info("peername") or ("",))[0]
        if not self.limits.enter(client):
            # Answered here, before aiosmtpd starts a session (and a task) for
            # it: a crowd of connections costs little, and everyone is greeted.
            connection = cast(asyncio.Transport, transport)
            connection.write(f"421 4.7.0 {self.hostname} too many connections, try again later\r\n".encode())
            connection.close()
            return
        self.client = client
        self._session_timer = self.loop.call_later(self.session_seconds, self._close, "session too long")
        super().connection_made(transport)

    def connection_lost(self, error: Exception | None) -> None:
        if self.client is None:  # refused in connection_made: aiosmtpd never saw it
            return
        self.limits.leave(self.client)
        self.client = None
        assert self._session_timer is not None
        self._session_timer.cancel()
        super().connection_lost(error)

    def _timeout_cb(self) -> None:  # aiosmtpd's timeout: no command (or no end of the mail data) in time
        self._close("timeout")

    def _close(self, reason: str) -> None:
        connection = cast(asyncio.Transport | None, self.transport)
        if connection is None:
            return
        if connection.is_closing():  # a close begun before, which may wait for ever on a client that reads nothing
            connection.abort()
            return
        log.info("%r: %s, closing the session", self.session.peer if self.session else None, reason)
        connection.write(f"421 4.4.2 {self.hostname} {reason}, closing connection\r\n".encode())
        if connection.get_write_buffer_size():  # a client that reads nothing would keep a close() waiting for ever
            connection.abort()
        else:
            connection.close()


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
    progress: Progress | None, log_setup: logs.LogSetup,
) -> None:
    logs.configure(log_setup, role.__name__.lower())  # a spawned process starts without the parent's logging
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
    """The SMTP server on (host, port); port 0 picks a free port. An address
    in use is worth trying again (an earlier server may be stopping); one
    that cannot be had on this machine is a setting to change."""
    settings = runtime.settings
    handler = IntakeHandler(runtime, wake)
    limits = SessionLimits(settings.max_sessions, settings.max_sessions_per_client)
    try:
        return await asyncio.get_running_loop().create_server(
            lambda: LimitedSMTP(
                handler, limits, settings.session_seconds, hostname=settings.hostname,
                data_size_limit=settings.max_message_bytes, timeout=settings.command_seconds,
            ),
            host,
            port,
            backlog=LISTEN_BACKLOG,
        )
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            raise TryAgainLater(
                f"cannot listen on {host}:{port}: the address is in use (by another pbmserv serve?); "
                "stop that, or set [smtp] listen or PBMSERV_LISTEN to another port"
            ) from error
        reason = os.strerror(error.errno) if error.errno and error.errno > 0 else error.strerror  # gaierror's are < 0
        raise ConfigError(f"cannot listen on {host}:{port} ([smtp] listen or PBMSERV_LISTEN): {reason}") from error


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
                os.getpid(), progress if role is Worker else None, logs.in_force(),
            ),
            name=f"pbmserv-{role.__name__.lower()}",
        )
        process.start()  # it picks up mail left pending (or undelivered) by an earlier crash at once
        return process

    # listening first: a server that cannot listen starts nothing, and exits
    server = await start_listener(runtime, wake, host or "127.0.0.1", int(port))
    children: dict[type[Worker], multiprocessing.process.BaseProcess] = {}
    stopping = asyncio.Event()

    def stop(signum: int) -> None:
        log.info("pbmserv stopping on %s", signal.Signals(signum).name)
        stopping.set()

    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop, signum)
    try:
        for role in (Worker, Deliverer):
            children[role] = start(role)
        _log_start(runtime.settings, children[Worker].pid, children[Deliverer].pid)
        while not stopping.is_set():
            try:
                await asyncio.wait_for(stopping.wait(), timeout=WATCHDOG_SECONDS)
            except TimeoutError:
                await _give_up_stuck_mail(runtime, children[Worker], progress)
                for role, child in children.items():
                    if not child.is_alive():
                        children[role] = start(role)
                        log.error(
                            "the %s process died (exit code %s); started a new one, pid %s",
                            role.__name__.lower(), child.exitcode, children[role].pid,
                        )
    finally:
        server.close()
        try:  # sessions still sending are given a moment to get their answer
            await asyncio.wait_for(server.wait_closed(), STOP_GRACE_SECONDS)
        except TimeoutError:
            log.warning("SMTP sessions still open at stop; closing them")
        for child in children.values():
            child.terminate()
        for child in children.values():
            await asyncio.to_thread(child.join, STOP_GRACE_SECONDS)
            if child.is_alive():  # stuck: killing it rolls its transaction back, and loses nothing
                log.warning("the %s process did not stop in time; killing it", child.name)
                child.kill()
                await asyncio.to_thread(child.join)
        log.info("pbmserv stopped; %s", ", ".join(
            f"{role.__name__.lower()} pid {child.pid} exit code {child.exitcode}" for role, child in children.items()
        ))


def _log_start(settings: Settings, worker_pid: int | None, deliverer_pid: int | None) -> None:
    """The settings an operator looks for first, the database password hidden."""
    database = make_url(settings.database_url).render_as_string(hide_password=True)
    where = {"smtp": f" to {settings.relay}", "maildir": f" {settings.maildir}"}.get(settings.mail_backend, "")
    mail = settings.mail_backend + where
    log.info(
        "pbmserv listening on %s for %s; database %s; mail %s; key file %s; worker pid %s, deliverer pid %s",
        settings.listen, settings.address, database, mail, key_path(settings), worker_pid, deliverer_pid,
        extra={
            "listen": settings.listen, "address": settings.address, "database": database, "mail": mail,
            "key_file": str(key_path(settings)), "worker_pid": worker_pid, "deliverer_pid": deliverer_pid,
        },
    )
