"""`pbmserv`: receive, process, deliver and serve."""

from __future__ import annotations

import logging
import sys
from typing import NoReturn

import click
from sqlalchemy.exc import SQLAlchemyError

from pbmserv import logs
from pbmserv.cli import EX_CONFIG, config_option, key_or_exit, settings_or_exit
from pbmserv.runtime import Runtime

EX_DATAERR = 65  # sysexits: the mail is refused for good; the MTA bounces it
EX_TEMPFAIL = 75  # sysexits: the MTA keeps the mail and tries again later

@click.group()
@config_option
@click.option("-v", "--verbose", is_flag=True, help="Log more.")
@click.option(
    "--log-format", type=click.Choice(logs.FORMATS), default=None,
    help="text, or json: one JSON object a line (or [log] format, $PBMSERV_LOG_FORMAT).",
)
@click.pass_context
def cli(ctx: click.Context, config_path: str | None, verbose: bool, log_format: str | None) -> None:
    """pbmserv: a play-by-email board game server."""
    ctx.obj = settings_or_exit(config_path, "pbmserv")
    log_format = log_format or ctx.obj.log_format
    if log_format not in logs.FORMATS:
        click.echo(f"pbmserv: the log format must be one of {', '.join(logs.FORMATS)}, not {log_format!r}", err=True)
        sys.exit(EX_CONFIG)
    logs.configure(logs.LogSetup(log_format, verbose))


@cli.command()
@click.option("--sender", default=None, help="The envelope sender (as an MTA pipe passes it).")
@click.pass_obj
def receive(settings, sender: str | None) -> None:  # type: ignore[no-untyped-def]
    """Take one mail on standard input: store it, process it, deliver the replies.

    Exits 65 (refused: the MTA bounces it) for a mail that SMTP intake would
    refuse with a 5xx, 75 (try again later) if the mail could not be stored."""
    from pbmserv.smtpd import UNSTORABLE_ERRORS, content_problem, path_problem

    raw = sys.stdin.buffer.read(settings.max_message_bytes + 1)
    if len(raw) > settings.max_message_bytes:
        refuse(f"the mail is larger than {settings.max_message_bytes} bytes")
    problem = (path_problem(sender) if sender is not None else None) or content_problem(raw)
    if problem is not None:
        refuse(problem)
    try:
        runtime = Runtime(settings)
        runtime.upgrade_schema()
        runtime.processor.store(raw, sender)  # logs a duplicate
    except UNSTORABLE_ERRORS as error:
        refuse(f"it cannot be stored as it is ({type(error).__name__})")
    except (SQLAlchemyError, OSError) as error:
        click.echo(f"pbmserv: cannot store the mail, try again later: {error}", err=True)
        sys.exit(EX_TEMPFAIL)
    key_or_exit(runtime.processor, "pbmserv")
    try:  # the mail is safe now: whatever happens here, the next run takes it up again
        runtime.processor.process_pending()
        runtime.delivery.deliver_due()
    except Exception:
        logging.getLogger("pbmserv").exception("the mail is stored, but processing stopped; the next run goes on")
    finally:
        runtime.close()


def refuse(problem: str) -> NoReturn:
    click.echo(f"pbmserv: mail refused: {problem}", err=True)
    sys.exit(EX_DATAERR)


@cli.command()
@click.pass_obj
def process(settings) -> None:  # type: ignore[no-untyped-def]
    """Process every pending inbound mail."""
    runtime = Runtime(settings)
    runtime.upgrade_schema()
    key_or_exit(runtime.processor, "pbmserv")
    click.echo(f"processed {runtime.processor.process_pending()} mail(s)")


@cli.command()
@click.option("--once", is_flag=True, help="Send what is due now and stop.")
@click.option("--interval", default=5.0, show_default=True, help="Seconds between rounds without --once.")
@click.pass_obj
def deliver(settings, once: bool, interval: float) -> None:  # type: ignore[no-untyped-def]
    """Work the outbox."""
    import time

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
def serve(settings) -> None:  # type: ignore[no-untyped-def]
    """Listen for SMTP; process mail and deliver replies in two worker processes."""
    import asyncio

    from pbmserv.smtpd import serve as serve_forever

    runtime = Runtime(settings)
    runtime.upgrade_schema()
    key_or_exit(runtime.processor, "pbmserv")
    asyncio.run(serve_forever(runtime))
    runtime.close()


def main() -> None:
    cli(prog_name="pbmserv")
