"""`pbmserv`: receive, process, deliver and serve. Each command imports what
it needs: `serve`'s listening process loads no game."""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING

import click

from pbmserv import logs
from pbmserv.cli import EX_DATAERR, EX_NOUSER, EX_TEMPFAIL, Tool, check_database, check_key, config_option
from pbmserv.config import LOG_FORMATS, ConfigError, Settings, load_settings

if TYPE_CHECKING:
    from pbmserv.drainer import DrainLock

#: `ctx.meta` key of the options of `pbmserv` that a drainer started by `receive` is given
DRAINER_OPTIONS = "pbmserv.drainer_options"


@click.group(cls=Tool, mail_taking=("receive",))
@click.version_option(package_name="pbmserv")
@config_option
@click.option("-v", "--verbose", is_flag=True, help="Log more.")
@click.option(
    "--log-format", type=click.Choice(LOG_FORMATS), default=None,
    help="text, or json: one JSON object a line (or [log] format, $PBMSERV_LOG_FORMAT).",
)
@click.pass_context
def cli(ctx: click.Context, config_path: str | None, verbose: bool, log_format: str | None) -> None:
    """pbmserv: a play-by-email board game server."""
    ctx.obj = load_settings(config_path)
    logs.configure(logs.LogSetup(log_format or ctx.obj.log_format, verbose))
    ctx.meta[DRAINER_OPTIONS] = [
        *(["--config", config_path] if config_path else []), *(["-v"] if verbose else []),
        *(["--log-format", log_format] if log_format else []),
    ]


@cli.command()
@click.option("--sender", default=None, help="The envelope sender (as an MTA pipe passes it).")
@click.option(
    "--recipient", default=None,
    help="The envelope recipient (as an MTA pipe passes it); without it, the mail's X-Original-To, "
    "Delivered-To or Envelope-To header.",
)
@click.option(
    "--wait", is_flag=True,
    help="Process the mail and deliver its replies before exiting (after any drainer running now), "
    "instead of leaving that to a drainer in the background.",
)
@click.pass_context
def receive(ctx: click.Context, sender: str | None, recipient: str | None, wait: bool) -> None:
    """Take one mail on standard input: store it, and see that it is
    processed and its replies delivered, by a drainer (`pbmserv drain`)
    started in the background unless one runs; with --wait, here.

    A mail to a player's reply address (a board mail's Reply-To) plays as
    that player; any other recipient is taken for the server's. Exits 65 (refused: the MTA bounces it) for a
    mail that SMTP intake would refuse with a 5xx, 67 (no such user) for
    a reply address that is not, or no longer, genuine, 75 (try again
    later) for anything else that kept the mail from being stored, a
    setting included (see `Tool`)."""
    from pbmserv.drainer import DrainLock, lock_path, start_drainer
    from pbmserv.service.intake.piped import NotStored, Verdict, store_piped

    settings: Settings = ctx.obj
    try:
        store_piped(settings, sys.stdin.buffer.read(settings.max_message_bytes + 1), sender, recipient)
    except NotStored as refused:
        said = "the mail was not stored, try again later" if refused.verdict is Verdict.TRY_LATER else "mail refused"
        click.echo(f"pbmserv: {said}: {refused}", err=True)
        exit_codes = {Verdict.BOUNCE: EX_DATAERR, Verdict.NO_SUCH_USER: EX_NOUSER, Verdict.TRY_LATER: EX_TEMPFAIL}
        sys.exit(exit_codes[refused.verdict])
    lock = DrainLock.at(lock_path(settings))
    try:
        if wait:
            lock.take(wait=True)
            drain_here(settings, lock)
        elif lock.take(wait=False):
            try:
                start_drainer(settings, lock, ctx.meta[DRAINER_OPTIONS])
            except OSError:  # the mail is safe: the next receive, or a drain from cron, processes it
                logging.getLogger("pbmserv").exception("the mail is stored, but no drainer could be started")
    finally:
        lock.close()


def drain_here(settings: Settings, lock: DrainLock) -> None:
    """Drain in this process, holding `lock`: the mail is safe already, so
    whatever happens here, the next drain takes it up again."""
    from pbmserv.drainer import drain
    from pbmserv.runtime import Runtime

    runtime = Runtime(settings)
    try:
        runtime.upgrade_schema()
        drain(runtime, lock, report=False)  # the mail's own line says it all
    except Exception:
        logging.getLogger("pbmserv").exception("the mail is stored, but processing stopped; the next drain goes on")
    finally:
        runtime.close()


@cli.command(name="drain")
@click.option("--lock-fd", type=int, default=None, hidden=True, help="The drainers' lock, taken (from `receive`).")
@click.pass_obj
def drain_command(settings: Settings, lock_fd: int | None) -> None:
    """Process every pending mail and deliver what is due, until nothing
    is pending; done at once if another drain runs (that one takes the
    mail). `receive` starts one in the background; run it from cron or a
    systemd timer too, so that delivery is retried while no mail comes in."""
    from pbmserv.drainer import LINGER_SECONDS, DrainLock, drain, lock_path
    from pbmserv.runtime import Runtime

    check_database(settings)
    lock = DrainLock(lock_fd) if lock_fd is not None else DrainLock.at(lock_path(settings))
    try:
        if lock_fd is None and not lock.take(wait=False):
            return
        runtime = Runtime(settings)
        try:
            check_key(settings)
            runtime.upgrade_schema()
            drain(runtime, lock, LINGER_SECONDS if lock_fd is not None else 0.0)
        finally:
            runtime.close()
    finally:
        lock.close()


@cli.command()
@click.option("--once", is_flag=True, help="Play the turns due now, then stop.")
@click.pass_obj
def bots(settings: Settings, once: bool) -> None:
    """Play the bots' turns: each bot to move thinks within its strength's
    time budget, and its move is stored, played and mailed like a player's.
    Without --once it keeps looking for turns every poll_seconds. For a
    server run by `receive` from an MTA pipe (a service of its own, or cron
    or a systemd timer with --once); `serve` plays the bots itself."""
    import time

    from pbmserv.runtime import Runtime
    from pbmserv.service.bots.queue import BotQueue

    check_database(settings)
    runtime = Runtime(settings)
    check_key(settings)
    assert runtime.catalog is not None, "a Runtime loads its catalog"
    looked = time.monotonic()

    def woken() -> bool:
        """Whether to look for cheaper turns come due during a think: every poll_seconds."""
        nonlocal looked
        if time.monotonic() - looked < settings.poll_seconds:
            return False
        looked = time.monotonic()
        return True

    def play() -> None:  # each answer and move as it is handed in
        runtime.processor.process_pending()
        runtime.delivery.deliver_due()

    queue = BotQueue(runtime.engine, runtime.intake, runtime.catalog, runtime.clock, woken=woken, on_hand_in=play)
    try:
        while True:
            queue.run(only_due_now=once)
            if once:
                return
            time.sleep(settings.poll_seconds)
    finally:
        runtime.close()


@cli.command()
@click.pass_obj
def process(settings: Settings) -> None:
    """Process every pending inbound mail."""
    from pbmserv.runtime import Runtime

    check_database(settings)
    runtime = Runtime(settings)
    check_key(settings)
    runtime.upgrade_schema()
    click.echo(f"processed {runtime.processor.process_pending()} mail(s)")


@cli.command()
@click.option("--once", is_flag=True, help="Send what is due now and stop.")
@click.option("--interval", default=5.0, show_default=True, help="Seconds between rounds without --once.")
@click.pass_obj
def deliver(settings: Settings, once: bool, interval: float) -> None:
    """Work the outbox."""
    import time

    from pbmserv.runtime import Runtime

    check_database(settings)
    runtime = Runtime(settings)
    check_key(settings)
    runtime.upgrade_schema()
    while True:
        sent = runtime.delivery.deliver_due()
        if once:
            click.echo(f"delivered {sent} mail(s)")
            return
        time.sleep(interval)


@cli.command()
@click.pass_obj
def serve(settings: Settings) -> None:
    """Listen for SMTP; process mail and deliver replies in two worker
    processes, play the bots in a third and serve the web site on
    [web] listen (PBMSERV_WEB_LISTEN; "" for none) in a fourth."""
    import asyncio

    from pbmserv.store.database import upgrade
    from pbmserv.supervisor import listening_intake
    from pbmserv.supervisor import serve as serve_forever

    intake = listening_intake(settings)  # this process loads no game: the worker does
    try:
        check_key(settings)
        upgrade(settings.database_url, settings.database_busy_seconds)
        asyncio.run(serve_forever(intake))
    finally:
        intake.close()


@cli.command()
@click.option("--timeout", default=4.0, show_default=True, help="Seconds to wait for the listener's answers.")
@click.pass_obj
def health(settings: Settings, timeout: float) -> None:
    """Exit 0 if `serve`'s SMTP listener ([smtp] listen, PBMSERV_LISTEN)
    answers a NOOP; else say why in one line and exit 1. For a
    container's health check or a supervisor's watchdog: it reads the
    listener from the same settings as `serve`."""
    import smtplib

    host, _, port = settings.listen.rpartition(":")
    host = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "[::]": "::1"}.get(host, host.strip("[]"))  # a wildcard: ask on loopback
    try:
        with smtplib.SMTP(host, int(port), timeout=timeout) as smtp:
            code, said = smtp.noop()
    except (OSError, smtplib.SMTPException) as error:
        click.echo(f"pbmserv: no SMTP answer at {host}:{port} ({settings.listen}): {error or type(error).__name__}", err=True)
        sys.exit(1)
    if code != 250:
        click.echo(f"pbmserv: the SMTP listener at {host}:{port} answers NOOP with {code} {said.decode(errors='replace')}", err=True)
        sys.exit(1)
    click.echo(f"the SMTP listener at {host}:{port} answers")


@cli.command()
@click.pass_obj
def web(settings: Settings) -> None:
    """Serve the read-only web site alone, on [web] listen
    (PBMSERV_WEB_LISTEN): the boards, players, standings and rules, as
    anybody may see them. For a server fed by `receive`, or a machine of
    its own reading the database; `serve` runs the site itself."""
    from pbmserv.store.database import require_current_schema
    from pbmserv.store.urls import without_password
    from pbmserv.web.serving import listen, run, site_address

    if not settings.web_listen:
        raise ConfigError("[web] listen (PBMSERV_WEB_LISTEN) is empty: set it to host:port, e.g. 127.0.0.1:8080")
    require_current_schema(settings.database_url, settings.database_busy_seconds)
    listening = listen(settings)
    logging.getLogger("pbmserv").info(
        "pbmserv web site on %s; database %s", site_address(settings), without_password(settings.database_url),
        extra={"web": site_address(settings), "database": without_password(settings.database_url)},
    )
    run(settings, listening)


def main() -> None:
    cli(prog_name="pbmserv")
