"""`pbmserv-admin`: the operator's tool."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import click
from sqlalchemy import func, select

from pbmserv.cli import Tool, config_option
from pbmserv.config import load_settings
from pbmserv.runtime import Runtime
from pbmserv.service.boards import replay
from pbmserv.service.views import board_mail
from pbmserv.store import records
from pbmserv.store.database import require_current_schema
from pbmserv.store.models import Board, InboundMail, OutboxMail, User
from pbmserv.store.records import BoardRecord


@click.group(cls=Tool)
@config_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
@click.pass_context
def cli(ctx: click.Context, config_path: str | None, as_json: bool) -> None:
    """Look after a pbmserv server."""
    ctx.obj = {"settings": load_settings(config_path), "json": as_json}


def _runtime(ctx: click.Context) -> Runtime:
    settings = ctx.obj["settings"]
    if ctx.command is not upgrade:  # only `db upgrade` may make a database; the others need one, and current
        require_current_schema(settings.database_url, settings.database_busy_seconds)
    return Runtime(settings)


def _emit(ctx: click.Context, rows: list[dict[str, Any]], columns: list[str]) -> None:
    if ctx.obj["json"]:
        click.echo(json.dumps(rows, indent=2, default=str))
        return
    if not rows:
        click.echo("(none)")
        return
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in columns}
    click.echo("  ".join(c.ljust(widths[c]) for c in columns).rstrip())
    for row in rows:
        click.echo("  ".join(str(row[c]).ljust(widths[c]) for c in columns).rstrip())


# -- db ----------------------------------------------------------------------
@cli.group()
def db() -> None:
    """The database schema."""


@db.command()
@click.pass_context
def upgrade(ctx: click.Context) -> None:
    """Bring the database to the newest schema."""
    _runtime(ctx).upgrade_schema()
    click.echo("database is at the newest schema")


# -- users -------------------------------------------------------------------
@cli.group()
def users() -> None:
    """Player accounts."""


@users.command("list")
@click.pass_context
def users_list(ctx: click.Context) -> None:
    runtime = _runtime(ctx)
    with runtime.sessions() as session:
        rows = [
            {"userid": u.userid, "addresses": ", ".join(a.address for a in u.addresses), "since": f"{u.created_at:%Y-%m-%d}"}
            for u in session.scalars(select(User).order_by(User.userid))
        ]
    _emit(ctx, rows, ["userid", "addresses", "since"])


# -- games -------------------------------------------------------------------
@cli.group()
def games() -> None:
    """Boards."""


@games.command("list")
@click.argument("game_type", required=False)
@click.pass_context
def games_list(ctx: click.Context, game_type: str | None) -> None:
    runtime = _runtime(ctx)
    query = select(Board).order_by(Board.game_type, Board.board)
    if game_type:
        query = query.where(Board.game_type == game_type.lower())
    with runtime.sessions() as session:
        rows = [
            {"game": b.game_type, "board": b.board, "players": " vs ".join(b.seats), "moves": b.move_count,
             "status": b.status, "updated": f"{b.updated_at:%Y-%m-%d %H:%M}"}
            for b in session.scalars(query)
        ]
    _emit(ctx, rows, ["game", "board", "players", "moves", "status", "updated"])


def _board(connection, game_type: str, number: int) -> BoardRecord:  # type: ignore[no-untyped-def]
    board = records.find_board(connection, game_type.lower(), number)
    if board is None:
        raise click.ClickException(f"no {game_type} board {number}")
    return board


@games.command("show")
@click.argument("game_type")
@click.argument("number", type=int)
@click.option("--seat", type=int, default=None, help="Show the board as this seat sees it (default: public).")
@click.pass_context
def games_show(ctx: click.Context, game_type: str, number: int, seat: int | None) -> None:
    runtime = _runtime(ctx)
    with runtime.engine.connect() as connection:
        board = _board(connection, game_type, number)
        moves = records.board_moves(connection, board.id)
    game = runtime.catalog.get(board.game_type)
    click.echo(board_mail(game, board, moves, game.decode(board.state), seat, recent=None), nl=False)


@games.command("replay")
@click.argument("game_type")
@click.argument("number", type=int)
@click.pass_context
def games_replay(ctx: click.Context, game_type: str, number: int) -> None:
    """Rebuild a board from its moves and compare it with the stored state."""
    runtime = _runtime(ctx)
    with runtime.engine.connect() as connection:
        board = _board(connection, game_type, number)
        moves = records.board_moves(connection, board.id)
    game = runtime.catalog.get(board.game_type)
    rebuilt = game.encode(replay(game, board, moves))
    if rebuilt != board.state:
        raise click.ClickException(f"board {number}: replaying {board.move_count} moves does not give the stored state")
    click.echo(f"board {number}: {board.move_count} moves replay to the stored state")


@games.command("export")
@click.argument("game_type")
@click.argument("number", type=int)
@click.pass_context
def games_export(ctx: click.Context, game_type: str, number: int) -> None:
    """The board and its moves as JSON."""
    runtime = _runtime(ctx)
    with runtime.engine.connect() as connection:
        board = _board(connection, game_type, number)
        data = {
            "game": board.game_type, "board": board.board, "options": board.options, "timers": board.timers,
            "seats": board.seats, "status": board.status, "result": board.result, "state": board.state,
            "moves": [
                {"number": m.number, "seat": m.seat, "text": m.text, "secret": m.secret,
                 "time": m.created_at.isoformat(), "comment": m.comment}
                for m in records.board_moves(connection, board.id)
            ],
        }
    click.echo(json.dumps(data, indent=2))


# -- mail --------------------------------------------------------------------
@cli.group()
def inbound() -> None:
    """Received mail."""


@inbound.command("list")
@click.option("--status", type=click.Choice(["pending", "done", "failed", "dropped"]), default=None)
@click.option("--limit", default=50, show_default=True)
@click.pass_context
def inbound_list(ctx: click.Context, status: str | None, limit: int) -> None:
    runtime = _runtime(ctx)
    query = select(InboundMail).order_by(InboundMail.id.desc()).limit(limit)
    if status:
        query = query.where(InboundMail.status == status)
    with runtime.sessions() as session:
        rows = [
            {"id": m.id, "received": f"{m.received_at:%Y-%m-%d %H:%M:%S}", "sender": m.envelope_sender,
             "status": m.status, "error": m.error}
            for m in session.scalars(query)
        ]
    _emit(ctx, rows, ["id", "received", "sender", "status", "error"])


@inbound.command("show")
@click.argument("row_id", type=int)
@click.pass_context
def inbound_show(ctx: click.Context, row_id: int) -> None:
    """One received mail: its outcome and the copy that is kept of it
    (with its passwords masked once it has been processed)."""
    runtime = _runtime(ctx)
    with runtime.sessions() as session:
        mail = session.get(InboundMail, row_id)
        if mail is None:
            raise click.ClickException(f"no inbound mail {row_id}")
        data = {
            "id": mail.id, "received": mail.received_at.isoformat(), "sender": mail.envelope_sender,
            "message_id": mail.message_id, "status": mail.status, "error": mail.error,
            "processed": mail.processed_at.isoformat() if mail.processed_at else None,
            "mail": mail.raw.decode("utf-8", "replace").replace("\r\n", "\n"),
        }
    if ctx.obj["json"]:
        click.echo(json.dumps(data, indent=2))
        return
    for key in ("id", "received", "sender", "message_id", "status", "error", "processed"):
        click.echo(f"{key + ':':<12} {data[key] if data[key] is not None else '-'}")
    click.echo("")
    click.echo(data["mail"], nl=False)


@inbound.command("fail")
@click.argument("row_ids", type=int, nargs=-1, required=True)
@click.option("--reason", default="failed by the operator", show_default=True, help="Kept as the mail's error.")
@click.pass_context
def inbound_fail(ctx: click.Context, row_ids: tuple[int, ...], reason: str) -> None:
    """Mark pending mails failed without processing or answering them
    (e.g. a mail that holds up the queue); only a masked copy is kept."""
    processor = _runtime(ctx).processor
    _each(row_ids, lambda row_id: processor.fail(row_id, reason), "failed")


@inbound.command("retry")
@click.argument("row_ids", type=int, nargs=-1, required=True)
@click.pass_context
def inbound_retry(ctx: click.Context, row_ids: tuple[int, ...]) -> None:
    """Make failed or dropped mails pending again, to be processed anew
    from the copy that was kept (`serve` takes them up within a poll; else
    run `pbmserv process`). Passwords masked in that copy no longer match:
    such a mail is refused."""
    processor = _runtime(ctx).processor
    _each(row_ids, processor.retry, "pending again")


def _each(row_ids: tuple[int, ...], change: Callable[[int], str | None], done: str) -> None:
    """Apply `change` to each mail, saying what became of it; exit 1 if any could not be changed."""
    refused = 0
    for row_id in row_ids:
        why = change(row_id)
        if why is None:
            click.echo(f"inbound {row_id}: {done}")
        else:
            refused += 1
            click.echo(f"inbound {row_id}: not changed: {why}", err=True)
    if refused:
        raise SystemExit(1)


@cli.group()
def outbox() -> None:
    """Mail waiting to go out, sent, or given up."""


@outbox.command("list")
@click.option("--status", type=click.Choice(["pending", "sent", "dead"]), default=None)
@click.option("--limit", default=50, show_default=True)
@click.pass_context
def outbox_list(ctx: click.Context, status: str | None, limit: int) -> None:
    runtime = _runtime(ctx)
    query = select(OutboxMail).order_by(OutboxMail.id.desc()).limit(limit)
    if status:
        query = query.where(OutboxMail.status == status)
    with runtime.sessions() as session:
        rows = [
            {"id": m.id, "recipient": m.recipient, "status": m.status, "attempts": m.attempts,
             "next_try": f"{m.next_try_at:%Y-%m-%d %H:%M:%S}", "last_error": m.last_error}
            for m in session.scalars(query)
        ]
    _emit(ctx, rows, ["id", "recipient", "status", "attempts", "next_try", "last_error"])


@outbox.command("retry")
@click.argument("ids", type=int, nargs=-1)
@click.option("--all-dead", is_flag=True, help="Retry every mail that was given up.")
@click.pass_context
def outbox_retry(ctx: click.Context, ids: tuple[int, ...], all_dead: bool) -> None:
    """Make given-up (or waiting) mail due again now."""
    runtime = _runtime(ctx)
    with runtime.sessions.begin() as session:
        query = select(OutboxMail).where(OutboxMail.status != "sent")
        if all_dead:
            query = query.where(OutboxMail.status == "dead")
        elif ids:
            query = query.where(OutboxMail.id.in_(ids))
        else:
            raise click.UsageError("name mail ids or give --all-dead")
        rows = list(session.scalars(query))
        for row in rows:
            row.status, row.attempts, row.next_try_at = "pending", 0, runtime.clock()
    click.echo(f"{len(rows)} mail(s) due again")


@cli.command()
@click.pass_context
def cleanup(ctx: click.Context) -> None:
    """One pass of reminders and forfeits for late moves; prints what it did.

    The mails wait in the outbox for `pbmserv deliver` (or `serve`)."""
    report = _runtime(ctx).processor.run_timers()
    for line in report:
        click.echo(line)
    click.echo(f"{len(report)} reminder(s), forfeit(s) and vacation end(s)")


@cli.command()
@click.pass_context
def stats(ctx: click.Context) -> None:
    """Counts of users, boards and mail."""
    runtime = _runtime(ctx)
    with runtime.sessions() as session:
        def count(column, *where):  # type: ignore[no-untyped-def]
            return session.scalar(select(func.count(column)).where(*where)) or 0

        data = {
            "users": count(User.id),
            "boards_active": count(Board.id, Board.status == "active"),
            "boards_finished": count(Board.id, Board.status == "finished"),
            **{f"inbound_{s}": count(InboundMail.id, InboundMail.status == s) for s in ("pending", "done", "failed", "dropped")},
            **{f"outbox_{s}": count(OutboxMail.id, OutboxMail.status == s) for s in ("pending", "sent", "dead")},
        }
    if ctx.obj["json"]:
        click.echo(json.dumps(data, indent=2))
    else:
        for key, value in data.items():
            click.echo(f"{key:<16} {value}")


def main() -> None:
    cli(prog_name="pbmserv-admin")
