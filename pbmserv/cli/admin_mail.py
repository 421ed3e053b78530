"""`pbmserv-admin inbound` and `outbox`: received and outgoing mail."""

from __future__ import annotations

from functools import partial

import click

from pbmserv.cli.admin_common import (
    change_each,
    echo,
    emit_record,
    emit_rows,
    iso_time,
    json_option,
    mail_text,
    runtime_of,
)
from pbmserv.service import operator
from pbmserv.service.play.reply_addresses import mask_addresses
from pbmserv.store import operator as stored
from pbmserv.store.database import reading
from pbmserv.store.key import is_sealed, server_key
from pbmserv.store.states import Inbound, Outbox


@click.group()
def inbound() -> None:
    """Received mail: list and show it, fail a mail that holds up the queue, retry failed mail."""


@inbound.command("list")
@click.option(
    "--status", type=click.Choice(list(Inbound)), default=None, help="Only mail in this state.",
)
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True, help="At most this many, newest first.")
@json_option
@click.pass_context
def inbound_list(ctx: click.Context, status: str | None, limit: int) -> None:
    """List received mail, newest first.

    Columns: id, received, sender (the envelope sender), status (pending,
    done, failed or dropped) and error (why it failed or was dropped)."""
    with reading(runtime_of(ctx).engine) as connection:
        rows = [
            {"id": m.id, "received": iso_time(m.received_at), "sender": m.envelope_sender, "status": m.status,
             "error": m.error}
            for m in stored.inbound_mails(connection, status, limit)
        ]
    emit_rows(ctx, rows, ["id", "received", "sender", "status", "error"])


@inbound.command("show")
@click.argument("row_id", type=int)
@json_option
@click.pass_context
def inbound_show(ctx: click.Context, row_id: int) -> None:
    """One received mail: its outcome and the copy that is kept of it
    (with its passwords masked once it has been processed)."""
    with reading(runtime_of(ctx).engine) as connection:
        mail = stored.find_inbound(connection, row_id)
    if mail is None:
        raise click.ClickException(f"no inbound mail {row_id}")
    data = {
        "id": mail.id, "received": iso_time(mail.received_at), "sender": mail.envelope_sender,
        "message_id": mail.message_id, "status": mail.status, "error": mail.error or None,
        "processed": iso_time(mail.processed_at),
    }
    emit_record(ctx, data, mail_text(mail.raw))


@inbound.command("fail")
@click.argument("row_ids", type=int, nargs=-1, required=True)
@click.option("--reason", default="failed by the operator", show_default=True, help="Kept as the mail's error.")
@click.pass_context
def inbound_fail(ctx: click.Context, row_ids: tuple[int, ...], reason: str) -> None:
    """Mark pending mails failed without processing or answering them
    (e.g. a mail that holds up the queue); only a masked copy is kept."""
    processor = runtime_of(ctx).processor
    change_each("inbound", row_ids, lambda row_id: processor.fail(row_id, reason), "failed")


@inbound.command("retry")
@click.argument("row_ids", type=int, nargs=-1, required=True)
@click.pass_context
def inbound_retry(ctx: click.Context, row_ids: tuple[int, ...]) -> None:
    """Make failed or dropped mails pending again, to be processed anew
    from the copy that was kept (`serve` takes them up within a poll; else
    run `pbmserv process`). Passwords masked in that copy no longer match:
    such a mail is refused."""
    engine = runtime_of(ctx).engine
    change_each("inbound", row_ids, partial(operator.retry_inbound, engine), "pending again")


@click.group()
def outbox() -> None:
    """Mail waiting to go out, sent, or given up: list and show it, send given-up mail again."""


@outbox.command("list")
@click.option("--status", type=click.Choice(list(Outbox)), default=None, help="Only mail in this state.")
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True, help="At most this many, newest first.")
@json_option
@click.pass_context
def outbox_list(ctx: click.Context, status: str | None, limit: int) -> None:
    """List outgoing mail, newest first.

    Columns: id, recipient, status (pending, sent, or dead: given up),
    attempts (at delivery), next_try (when it is due, if not sent) and
    last_error (the last delivery failure)."""
    with reading(runtime_of(ctx).engine) as connection:
        rows = [
            {"id": m.id, "recipient": m.recipient, "status": m.status, "attempts": m.attempts,
             "next_try": iso_time(m.next_try_at), "last_error": m.last_error}
            for m in stored.outbox_mails(connection, status, limit)
        ]
    emit_rows(ctx, rows, ["id", "recipient", "status", "attempts", "next_try", "last_error"])


@outbox.command("show")
@click.argument("mail_id", type=int)
@json_option
@click.pass_context
def outbox_show(ctx: click.Context, mail_id: int) -> None:
    """One outgoing mail: its delivery (status, attempts, next try, last
    error) and the mail itself, headers and body. What it quotes of a
    player's mail has its passwords masked already; the code of a player's
    reply address is masked here (the mail waits sealed in the outbox)."""
    with reading(runtime_of(ctx).engine) as connection:
        mail = stored.find_outbox(connection, mail_id)
    if mail is None:
        raise click.ClickException(f"no outbox mail {mail_id}")
    data = {
        "id": mail.id, "created": iso_time(mail.created_at), "recipient": mail.recipient, "kind": mail.kind,
        "message_id": mail.message_id, "answers_inbound": mail.inbound_id, "status": mail.status,
        "attempts": mail.attempts, "next_try": iso_time(mail.next_try_at), "last_error": mail.last_error or None,
    }
    raw = server_key(runtime_of(ctx).settings).unseal(mail.raw) if is_sealed(mail.raw) else mail.raw
    emit_record(ctx, data, mask_addresses(mail_text(raw)))


@outbox.command("retry")
@click.argument("ids", type=int, nargs=-1)
@click.option("--all-dead", is_flag=True, help="Retry every mail that was given up.")
@click.pass_context
def outbox_retry(ctx: click.Context, ids: tuple[int, ...], all_dead: bool) -> None:
    """Make given-up (or waiting) mail due again now, its attempts counted
    anew; exit 1 if any named mail is not there or was sent already."""
    if all_dead == bool(ids):
        raise click.UsageError("name mail ids or give --all-dead")
    runtime = runtime_of(ctx)
    if all_dead:
        echo(f"{operator.retry_dead_outbox(runtime.engine, runtime.clock())} mail(s) due again")
        return
    change_each("outbox", ids, lambda mail_id: operator.retry_outbox(runtime.engine, mail_id, runtime.clock()), "due again")
