"""`serve`: listens for SMTP in this process, and runs the worker and the
deliverer in a process each (a core of its own: Python threads would share
one), the bots in a third and the web site (on `[web] listen`, unless it is
empty) in a fourth, restarting one if it dies, and the worker if it is
stuck on one mail. This process needs no game loaded: the children load them."""

from __future__ import annotations

import asyncio
import ctypes
import logging
import multiprocessing
import os
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pbmserv import logs
from pbmserv.config import Settings
from pbmserv.gamekit.registry import game_names
from pbmserv.pipes import Claims, Handover, OutcomesPipe, Progress, WakePipe
from pbmserv.service.intake.arrival import Intake
from pbmserv.smtpd import start_listener
from pbmserv.store.database import make_engine
from pbmserv.store.key import key_path
from pbmserv.store.owners import ClaimOwner
from pbmserv.store.spool import spool_of
from pbmserv.store.urls import without_password
from pbmserv.web.serving import listen, site_address
from pbmserv.web.serving import run as run_site

if TYPE_CHECKING:
    from pbmserv.runtime import Runtime

log = logging.getLogger(__name__)

WATCHDOG_SECONDS = 5.0
#: a child that died is started again at once, but not sooner than this after its last start
RESTART_SECONDS = 1.0
STOP_GRACE_SECONDS = 10.0
GIL_SWITCH_SECONDS = 0.0005


def listening_intake(settings: Settings) -> Intake:
    """Intake for the listener, knowing the games offered by name only: a
    game named in `[games] extra` is known by its commands (see `Intake`)."""
    engine = make_engine(settings.database_url, settings.database_busy_seconds)
    return Intake(engine, settings, game_names(), spool=spool_of(settings))


@dataclass(frozen=True)
class Pipes:
    wake: WakePipe
    #: wakes the bots: the worker processed mail, which may have made a bot's turn due
    wake_bots: WakePipe
    deliver: Handover
    outcomes: OutcomesPipe
    progress: Progress
    claims: Claims


def server_name(settings: Settings) -> str:
    """The name this server claims outbox mail by: the same after a
    restart, and never another live server's (no two can listen on one
    host's address and port)."""
    return f"{socket.gethostname()}:{settings.listen}"


def _die_with(parent_pid: int) -> None:
    """Be killed when the serving process dies, even by SIGKILL: a worker
    or deliverer left behind would go on claiming and sending while a
    restarted server releases the claims of the old one (Linux; elsewhere
    they stop at their next round, `Loop.run`)."""
    if sys.platform.startswith("linux"):
        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
    if os.getppid() != parent_pid:  # it died before that took effect
        os._exit(1)


def _child_process(
    role: str, settings: Settings, pipes: Pipes, parent_pid: int, log_setup: logs.LogSetup, stuck_mail: str | None,
) -> None:
    _die_with(parent_pid)
    if role == "bots":
        # the players' mail comes first: the bots think only with the CPU
        # the listener, worker and deliverer leave (Linux's idle class; `nice`
        # 19 elsewhere, which still took 14% of the mail's throughput), and
        # load their modules so too, not in the way of a restarted worker and deliverer
        if hasattr(os, "SCHED_IDLE"):
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        else:
            os.nice(19)
    logs.configure(log_setup, role)  # a spawned process starts without the parent's logging
    for ignored in (signal.SIGINT, signal.SIGHUP):  # the serving process decides when to stop
        signal.signal(ignored, signal.SIG_IGN)
    # SIGTERM asks the loop to stop after the round under way; one that comes
    # while the process is still starting (loading the games) is kept for
    # the loop. An exception raised from the handler would surface wherever
    # the process happens to be, and where the database driver or the pool
    # catches it while cleaning up, it turns into an ordinary error and the
    # stop is lost.
    stop_asked = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop_asked.set())
    from pbmserv.bot_player import BotPlayer
    from pbmserv.deliverer import Deliverer
    from pbmserv.loop import Loop
    from pbmserv.runtime import Runtime  # here, in the child: the games are loaded with it
    from pbmserv.worker import Worker

    runtime = Runtime(settings)
    if role in ("worker", "deliverer"):  # the processes that may send what this server claims
        runtime.delivery.claim_owner = ClaimOwner(pipes.claims.by, runtime.engine)
        runtime.delivery.claim_owner.keep()
    worker: Loop
    if role == "worker":
        worker = Worker(runtime, pipes.wake, pipes.deliver, pipes.outcomes, pipes.progress, pipes.claims, pipes.wake_bots)
        if stuck_mail is not None:
            _give_up(runtime, stuck_mail)
    elif role == "deliverer":
        worker = Deliverer(runtime, pipes.deliver, pipes.outcomes, pipes.wake, pipes.claims.current())
    else:
        worker = BotPlayer(runtime, pipes.wake, pipes.wake_bots)
    signal.signal(signal.SIGTERM, lambda *_: worker.stop())
    if stop_asked.is_set():
        worker.stop()
    try:
        worker.run(parent_pid)
    finally:
        if runtime.delivery.claim_owner is not None:
            runtime.delivery.claim_owner.close()
        runtime.close()


def _web_process(settings: Settings, listening: socket.socket, parent_pid: int, log_setup: logs.LogSetup) -> None:
    """The web site, on the socket `serve` listens on: it reads the
    database through an engine of its own that cannot write."""
    _die_with(parent_pid)
    logs.configure(log_setup, "web")
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # as the other children: the serving process decides when to stop
    run_site(settings, listening)


def _give_up(runtime: Runtime, mail: str) -> None:
    """Mark the mail the worker before this one was stuck on failed, with an
    apology, so that this one does not take it up again."""
    seconds = runtime.settings.stuck_seconds
    try:
        runtime.processor.give_up(mail, f"not processed within {seconds:g}s: given up")
    except Exception:  # this worker takes the mail up again, and the watchdog tries once more
        log.exception("could not give up the mail with dedup key %s", mail)


def _stuck_mail(settings: Settings, worker: multiprocessing.process.BaseProcess, progress: Progress) -> str | None:
    """A worker that has spent `stuck_seconds` on one mail (a game caught
    in an endless loop, say) would hold up every later mail for good: it
    is killed, which rolls its transaction back, and the mail it was on is
    returned, for the new worker to mark failed with an apology first."""
    seconds = settings.stuck_seconds
    mail = progress.stuck_on(seconds)
    if mail is None or not worker.is_alive():
        return None
    log.error("the worker has spent over %gs on the mail with dedup key %s; restarting it", seconds, mail)
    worker.kill()
    worker.join()
    progress.end()
    return mail


async def serve(intake: Intake) -> None:
    """Listen in this process; process mail in a worker process, deliver
    in a third and think out the bots' moves in a fourth. Runs until
    SIGTERM or SIGINT."""
    settings = intake.settings
    host, _, port = settings.listen.rpartition(":")
    # The senders of the mails a thread is storing wait for its commit, with
    # a write lock held (the spool's); were it to wait the default 5 ms for
    # the GIL while the event loop runs, their 250s would come as much later.
    sys.setswitchinterval(GIL_SWITCH_SECONDS)
    context = multiprocessing.get_context("spawn")
    pipes = Pipes(
        WakePipe(context), WakePipe(context), Handover(context), OutcomesPipe(context), Progress(context),
        Claims(context, server_name(settings)),
    )
    loop = asyncio.get_running_loop()
    #: set when serve is to stop, and when a child has exited (its sentinel is readable), to restart it at once
    attention = asyncio.Event()
    started: dict[str, float] = {}

    def start(role: str, stuck_mail: str | None = None) -> multiprocessing.process.BaseProcess:
        if role == "deliverer":  # the worker takes the claims of the one before over for it
            pipes.claims.renew()
        if role == "web":  # the site, on the socket made here (a new web process takes it over)
            process = context.Process(
                target=_web_process, args=(settings, web_socket, os.getpid(), logs.in_force()), name="pbmserv-web",
            )
        else:
            process = context.Process(
                target=_child_process, args=(role, settings, pipes, os.getpid(), logs.in_force(), stuck_mail),
                name=f"pbmserv-{role}",
            )
        # a child starts with SIGHUP blocked (the mask outlives the exec of a spawn), so that a
        # hangup while it loads cannot end it before it ignores the signal for good
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGHUP})
        try:
            process.start()  # it picks up mail left pending (or undelivered) by an earlier crash at once
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGHUP})
        loop.add_reader(process.sentinel, _exited, process.sentinel)
        started[role] = time.monotonic()
        return process

    def _exited(sentinel: int) -> None:
        loop.remove_reader(sentinel)
        attention.set()

    # listening first: a server that cannot listen starts nothing, and exits
    web_socket = listen(settings) if settings.web_listen else None
    try:
        server = await start_listener(intake, pipes.wake, host or "127.0.0.1", int(port))
    except BaseException:
        if web_socket is not None:
            web_socket.close()
        raise
    children: dict[str, multiprocessing.process.BaseProcess] = {}
    stopping = asyncio.Event()

    def stop(signum: int) -> None:
        log.info("pbmserv stopping on %s", signal.Signals(signum).name)
        stopping.set()
        attention.set()

    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop, signum)
    loop.add_signal_handler(signal.SIGHUP, _hung_up)
    try:
        for role in ("worker", "deliverer", "bots", *(("web",) if web_socket is not None else ())):
            children[role] = start(role)
        _log_start(settings, {role: child.pid for role, child in children.items()})
        log.info("outbox claims of this serve go under the name %s", pipes.claims.by, extra={"claim_owner": pipes.claims.by})
        deferred = False
        while not stopping.is_set():
            try:
                await asyncio.wait_for(attention.wait(), timeout=RESTART_SECONDS if deferred else WATCHDOG_SECONDS)
            except TimeoutError:
                pass
            attention.clear()
            if not stopping.is_set():
                stuck = await asyncio.to_thread(_stuck_mail, settings, children["worker"], pipes.progress)
                if stuck is not None:
                    children["worker"] = start("worker", stuck)
                deferred = False
                for role, child in children.items():
                    if child.is_alive():
                        continue
                    # one that dies as soon as it starts (a fault in its setup) is not started in a tight loop
                    too_soon = time.monotonic() - started[role] < RESTART_SECONDS
                    deferred = deferred or too_soon
                    if not too_soon:
                        children[role] = start(role)
                        log.error(
                            "the %s process died (exit code %s); started a new one, pid %s",
                            role, child.exitcode, children[role].pid,
                        )
    finally:
        server.close()
        try:  # sessions still sending are given a moment to get their answer
            await asyncio.wait_for(server.wait_closed(), STOP_GRACE_SECONDS)
        except TimeoutError:
            log.warning("SMTP sessions still open at stop; closing them")
        # the deliverer first: the worker writes what it handed back last before it leaves
        for role in ("web", "bots", "deliverer", "worker"):
            if role in children:
                await _stop_child(children[role])
        if web_socket is not None:
            web_socket.close()
        log.info("pbmserv stopped; %s", ", ".join(
            f"{role} pid {child.pid} exit code {child.exitcode}" for role, child in children.items()
        ))


async def _stop_child(child: multiprocessing.process.BaseProcess) -> None:
    child.terminate()
    await asyncio.to_thread(child.join, STOP_GRACE_SECONDS)
    if child.is_alive():  # stuck: killing it rolls its transaction back, and loses nothing
        log.warning("the %s process did not stop in time; killing it", child.name)
        child.kill()
        await asyncio.to_thread(child.join)


def _hung_up() -> None:
    """SIGHUP, which used to end `serve` without a word (and its children
    with it): the reflex of an operator who means "reload", or the hangup
    of the terminal it was started from. Neither should stop the players'
    mail; there is nothing to reload (the settings are read at the start,
    the log goes to standard error, which the supervisor keeps)."""
    log.warning(
        "pbmserv got SIGHUP and goes on serving: nothing is reloaded (settings are read at the start: restart to "
        "apply new ones; SIGTERM stops it)"
    )


def _log_start(settings: Settings, pids: dict[str, int | None]) -> None:
    """The settings an operator looks for first, the database password hidden."""
    database = without_password(settings.database_url)
    where = {"smtp": f" to {settings.relay}", "maildir": f" {settings.maildir}"}.get(settings.mail_backend, "")
    mail = settings.mail_backend + where
    web = f"; web site {site_address(settings)} pid {pids['web']}" if "web" in pids else ""
    log.info(
        "pbmserv listening on %s for %s; database %s; mail %s; key file %s; worker pid %s, deliverer pid %s, bots pid %s%s",
        settings.listen, settings.address, database, mail, key_path(settings), pids["worker"], pids["deliverer"], pids["bots"],
        web,
        extra={
            "listen": settings.listen, "address": settings.address, "database": database, "mail": mail,
            "key_file": str(key_path(settings)), "worker_pid": pids["worker"], "deliverer_pid": pids["deliverer"],
            "bots_pid": pids["bots"], **({"web": site_address(settings), "web_pid": pids["web"]} if "web" in pids else {}),
        },
    )
