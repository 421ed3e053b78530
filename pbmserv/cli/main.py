"""`pbmserv`: receive, process, deliver and serve. Each command imports what
it needs: `serve`'s listening process loads no game."""

from __future__ import annotations

import logging
import sys
from typing import NoReturn

import click

from pbmserv import logs
from pbmserv.cli import EX_DATAERR, EX_NOUSER, Tool, check_key, config_option
from pbmserv.config import LOG_FORMATS, Settings, load_settings


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


@cli.command()
@click.option("--sender", default=None, help="The envelope sender (as an MTA pipe passes it).")
@click.option(
    "--recipient", default=None,
    help="The envelope recipient (as an MTA pipe passes it); without it, the mail's X-Original-To, "
    "Delivered-To or Envelope-To header.",
)
@click.pass_obj
def receive(settings: Settings, sender: str | None, recipient: str | None) -> None:
    """Take one mail on standard input: store it, process it, deliver the replies.

    A mail to a player's reply address (a board mail's Reply-To) plays as
    that player; any other recipient is taken for the server's. Exits 65 (refused: the MTA bounces it) for a
    mail that SMTP intake would refuse with a 5xx, 67 (no such user) for
    a reply address that is not, or no longer, genuine, 75 (try again
    later) for anything else that kept the mail from being stored, a
    setting included (see `Tool`)."""
    from pbmserv.service.intake import content_problem, path_problem
    from pbmserv.store.inbound import UNSTORABLE_ERRORS

    raw = sys.stdin.buffer.read(settings.max_message_bytes + 1)
    if len(raw) > settings.max_message_bytes:
        refuse(f"the mail is larger than {settings.max_message_bytes} bytes")
    problem = (path_problem(sender) if sender is not None else None) or content_problem(raw)
    if problem is not None:
        refuse(problem)
    from pbmserv.runtime import Runtime

    runtime = Runtime(settings)
    try:
        check_key(runtime.intake)  # a mail that holds passwords is stored sealed with it
        runtime.upgrade_schema()
        to = runtime.intake.reply_address_of(raw, recipient)
        unknown = runtime.intake.recipient_problem(to) if to else None
        if unknown is not None:
            refuse(f"<{to}>: {unknown}", EX_NOUSER)
        try:
            runtime.intake.store(raw, sender, to)  # logs a duplicate
        except UNSTORABLE_ERRORS as error:
            refuse(f"it cannot be stored as it is ({type(error).__name__})")
        try:  # the mail is safe now: whatever happens here, the next run takes it up again
            runtime.processor.process_pending()
            runtime.delivery.deliver_due()
        except Exception:
            logging.getLogger("pbmserv").exception("the mail is stored, but processing stopped; the next run goes on")
    finally:
        runtime.close()


def refuse(problem: str, code: int = EX_DATAERR) -> NoReturn:
    click.echo(f"pbmserv: mail refused: {problem}", err=True)
    sys.exit(code)


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
    from pbmserv.service.bot_turns import play_due_turns

    runtime = Runtime(settings)
    check_key(runtime.intake)
    assert runtime.catalog is not None, "a Runtime loads its catalog"
    try:
        while True:
            if play_due_turns(runtime.engine, runtime.intake, runtime.catalog, runtime.clock):
                runtime.processor.process_pending()
                runtime.delivery.deliver_due()
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

    runtime = Runtime(settings)
    check_key(runtime.intake)
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

    runtime = Runtime(settings)
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
    """Listen for SMTP; process mail and deliver replies in two worker processes."""
    import asyncio

    from pbmserv.store.database import upgrade
    from pbmserv.supervisor import listening_intake
    from pbmserv.supervisor import serve as serve_forever

    intake = listening_intake(settings)  # this process loads no game: the worker does
    try:
        check_key(intake)
        upgrade(settings.database_url, settings.database_busy_seconds)
        asyncio.run(serve_forever(intake))
    finally:
        intake.close()


def main() -> None:
    cli(prog_name="pbmserv")
