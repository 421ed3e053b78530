"""`pbmserv-admin`: the operator's tool."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import click

from pbmserv.cli import Tool, config_option
from pbmserv.config import load_settings
from pbmserv.gamekit import Game
from pbmserv.runtime import Runtime
from pbmserv.service import operator
from pbmserv.service.boards import replay
from pbmserv.service.context import as_utc
from pbmserv.service.views import board_mail, names_and
from pbmserv.store import operator as stored
from pbmserv.store import records
from pbmserv.store.database import reading, require_current_schema
from pbmserv.store.handles import Connection
from pbmserv.store.records import BoardRecord

T = TypeVar("T")


@click.group(cls=Tool)
@click.version_option(package_name="pbmserv")
@config_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables (also after a subcommand).")
@click.pass_context
def cli(ctx: click.Context, config_path: str | None, as_json: bool) -> None:
    """Look after a pbmserv server: its database, accounts, boards and mail.

    Times are printed in ISO 8601 with their offset from UTC."""
    ctx.obj = {"settings": load_settings(config_path), "json": as_json}


def _runtime(ctx: click.Context) -> Runtime:
    settings = ctx.obj["settings"]
    if ctx.command is not upgrade:  # only `db upgrade` may make a database; the others need one, and current
        require_current_schema(settings.database_url, settings.database_busy_seconds)
    return Runtime(settings)


def _json_requested(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        ctx.obj["json"] = True


#: `--json` after a subcommand, as before it
json_option = click.option(
    "--json", is_flag=True, expose_value=False, callback=_json_requested, help="Print JSON instead of a table."
)


def _time(moment: datetime | None, timespec: str = "seconds") -> str | None:
    """A stored time in ISO 8601, in UTC with its offset (SQLite gives stored times back without a zone)."""
    return as_utc(moment).astimezone(UTC).isoformat(timespec=timespec) if moment is not None else None


def _emit(ctx: click.Context, rows: list[dict[str, Any]], columns: list[str]) -> None:
    if ctx.obj["json"]:
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo("(none)")
        return
    shown = [{c: "-" if row[c] is None else str(row[c]) for c in columns} for row in rows]
    widths = {c: max(len(c), *(len(row[c]) for row in shown)) for c in columns}
    click.echo("  ".join(c.ljust(widths[c]) for c in columns).rstrip())
    for row in shown:
        click.echo("  ".join(row[c].ljust(widths[c]) for c in columns).rstrip())


def _emit_record(ctx: click.Context, data: dict[str, Any], text: str | None = None) -> None:
    """One record: as JSON, or a line for each field and then `text` (a mail) after a blank line."""
    if ctx.obj["json"]:
        click.echo(json.dumps(data if text is None else {**data, "mail": text}, indent=2))
        return
    width = max(len(key) for key in data) + 2  # as inbound show has always lined them up
    for key, value in data.items():
        if isinstance(value, list):
            value = ", ".join(value) or None
        click.echo(f"{key + ':':<{width}} {'-' if value in (None, '') else value}")
    if text is not None:
        click.echo("")
        click.echo(text, nl=False)


def _mail_text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace").replace("\r\n", "\n")


@contextmanager
def _progress(items: list[T], label: str) -> Iterator[Iterable[T]]:
    """`items`, with a progress bar on stderr while a person watches it there (never in a script's output)."""
    if not sys.stderr.isatty():
        yield items
        return
    with click.progressbar(items, label=label, file=sys.stderr) as bar:
        yield bar


def _each(kind: str, ids: Iterable[Any], change: Callable[[Any], str | None], done: str) -> None:
    """Apply `change` to each of `ids`, saying what became of it; exit 1 if any could not be changed."""
    refused = 0
    for item in ids:
        why = change(item)
        if why is None:
            click.echo(f"{kind} {item}: {done}")
        else:
            refused += 1
            click.echo(f"{kind} {item}: not changed: {why}", err=True)
    if refused:
        raise SystemExit(1)


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
    """Player accounts: list, show, disable and enable them, set their password or addresses."""


@users.command("list")
@json_option
@click.pass_context
def users_list(ctx: click.Context) -> None:
    """List every account, by userid.

    Columns: userid, addresses (all of them, confirmed or not), since (when
    the account was made) and disabled (since when, if it is)."""
    runtime = _runtime(ctx)
    with reading(runtime.engine) as connection:
        rows = [
            {"userid": u.userid, "addresses": ", ".join(a.address for a in u.addresses), "since": _time(u.created_at),
             "disabled": _time(u.disabled_at)}
            for u in stored.accounts(connection)
        ]
    _emit(ctx, rows, ["userid", "addresses", "since", "disabled"])


@users.command("show")
@click.argument("userid")
@json_option
@click.pass_context
def users_show(ctx: click.Context, userid: str) -> None:
    """One account: its addresses and whether each is confirmed, when it was
    made, its boards, its vacation, whether it is disabled, and when the
    last mail from one of its addresses came."""
    view = operator.account(_runtime(ctx).engine, userid)
    if view is None:
        raise click.ClickException(f"no account {userid}")
    _emit_record(ctx, {
        "userid": view.userid,
        "addresses": [
            f"{address} (confirmed {_time(confirmed)})" if confirmed else f"{address} (not confirmed)"
            for address, confirmed in view.addresses
        ],
        "since": _time(view.created_at),
        "boards_active": view.boards_active,
        "boards_finished": view.boards_finished,
        "vacation_since": _time(view.on_vacation_since),
        "disabled_since": _time(view.disabled_at),
        "disabled_reason": view.disabled_reason or None,
        "last_mail": _time(view.last_mail_at),
    })


@users.command("disable")
@click.argument("userid")
@click.option("--reason", default="", help="Why; the account's owner reads it in the refusal of their commands.")
@click.pass_context
def users_disable(ctx: click.Context, userid: str, reason: str) -> None:
    """Refuse every command of the account (with a reply that says it is
    disabled and whom to write to). Its boards go on: the other players
    wait for its moves, with reminders and forfeits as usual."""
    runtime = _runtime(ctx)
    _each("user", [userid], lambda u: operator.disable(runtime.engine, u, reason.strip(), runtime.clock()), "disabled")


@users.command("enable")
@click.argument("userid")
@click.pass_context
def users_enable(ctx: click.Context, userid: str) -> None:
    """Take the account's commands again after `users disable`."""
    runtime = _runtime(ctx)
    _each("user", [userid], lambda u: operator.enable(runtime.engine, u), "enabled")


@users.command("set-password")
@click.argument("userid")
@click.option(
    "--stdin", "from_stdin", is_flag=True, help="Read the password from the first line of standard input (for scripts).",
)
@click.pass_context
def users_set_password(ctx: click.Context, userid: str, from_stdin: bool) -> None:
    """Give the account a new password, asked for twice without echoing it
    (never on the command line, where other users could read it)."""
    if from_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = click.prompt("New password", hide_input=True, confirmation_prompt=True)
    runtime = _runtime(ctx)
    _each(
        "user", [userid], lambda u: operator.set_password(runtime.engine, runtime.processor.passwords, u, password),
        "password changed",
    )


@users.command("set-address")
@click.argument("userid")
@click.argument("addresses", nargs=-1, required=True)
@click.pass_context
def users_set_address(ctx: click.Context, userid: str, addresses: tuple[str, ...]) -> None:
    """Replace the account's addresses with ADDRESSES (at most 5), in that
    order; they get its mail at once, without a mail to confirm them."""
    runtime = _runtime(ctx)
    _each(
        "user", [userid], lambda u: operator.set_addresses(runtime.engine, u, addresses, runtime.clock()), "addresses set",
    )


# -- games -------------------------------------------------------------------
@cli.group()
def games() -> None:
    """Boards: list, show, export and replay them."""


def _game(runtime: Runtime, game_type: str) -> Game:
    if game_type not in runtime.catalog:
        raise click.ClickException(f"no such game type {game_type}; known: {', '.join(runtime.catalog.names())}")
    return runtime.catalog.get(game_type)


@games.command("list")
@click.argument("game_type", required=False)
@json_option
@click.pass_context
def games_list(ctx: click.Context, game_type: str | None) -> None:
    """List the boards (of one game type, with GAME_TYPE).

    Columns: game, board, players, moves (made so far), status (active or
    finished) and updated (the time of the last move)."""
    runtime = _runtime(ctx)
    with reading(runtime.engine) as connection:
        rows = [
            {"game": b.game_type, "board": b.board, "players": " vs ".join(b.seats), "moves": b.move_count,
             "status": b.status, "updated": _time(b.updated_at)}
            for b in _boards(connection, runtime, game_type)
        ]
    _emit(ctx, rows, ["game", "board", "players", "moves", "status", "updated"])


def _board(connection: Connection, game: Game, number: int) -> BoardRecord:
    board = records.find_board(connection, game.name, number)
    if board is None:
        raise click.ClickException(f"no {game.name} board {number}")
    return board


def _boards(connection: Connection, runtime: Runtime, game_type: str | None) -> list[BoardRecord]:
    """Every board (of one game type)."""
    return records.all_boards(connection, _game(runtime, game_type).name if game_type else None)


def _viewer(board: BoardRecord, seat: str | None) -> int | None:
    """The seat (0 for the first) that `seat` names: its number from 1, or its player's userid."""
    if seat is None:
        return None
    if seat.isdigit() and 1 <= int(seat) <= len(board.seats):
        return int(seat) - 1
    if seat.lower() in board.seats:
        return board.seats.index(seat.lower())
    numbers = names_and([str(number) for number in range(1, len(board.seats) + 1)])
    raise click.ClickException(
        f"board {board.board} has no seat {seat}: it has seats {numbers} ({', '.join(board.seats)})"
    )


@games.command("show")
@click.argument("game_type")
@click.argument("number", type=int)
@click.option(
    "--seat", default=None,
    help="Show the board as this seat sees it: its number from 1, or its player's userid (default: what everybody sees).",
)
@click.pass_context
def games_show(ctx: click.Context, game_type: str, number: int, seat: str | None) -> None:
    """A board as its mails show it, with everything it has hidden hidden
    (or as one player sees it, with --seat)."""
    runtime = _runtime(ctx)
    game = _game(runtime, game_type)
    with reading(runtime.engine) as connection:
        board = _board(connection, game, number)
        viewer = _viewer(board, seat)
        moves = records.board_moves(connection, board.id)
    click.echo(board_mail(game, board, moves, game.decode(board.state), viewer, recent=None), nl=False)


def _replay_problem(runtime: Runtime, connection: Connection, board: BoardRecord) -> str | None:
    """Why replaying the board's moves does not give its stored state, or None if it does."""
    if board.game_type not in runtime.catalog:
        return f"its game {board.game_type} is not installed"
    game = runtime.catalog.get(board.game_type)
    try:
        rebuilt = game.encode(replay(game, board, records.board_moves(connection, board.id)))
    except Exception as error:  # a move that no longer replays is what this looks for
        return f"replaying its moves fails: {type(error).__name__}: {error}"
    if rebuilt != board.state:
        return f"replaying {board.move_count} moves does not give the stored state"
    return None


@games.command("replay")
@click.argument("game_type", required=False)
@click.argument("number", type=int, required=False)
@click.option("--all", "every", is_flag=True, help="Every board (of GAME_TYPE, if given); prints those that do not match.")
@click.pass_context
def games_replay(ctx: click.Context, game_type: str | None, number: int | None, every: bool) -> None:
    """Rebuild a board from its moves and compare it with the stored state;
    exit 1 if they differ. With --all, every board (of GAME_TYPE)."""
    if every == (number is not None) or (not every and game_type is None):
        raise click.UsageError("name GAME_TYPE and NUMBER, or give --all [GAME_TYPE]")
    runtime = _runtime(ctx)
    with reading(runtime.engine) as connection:
        if not every:
            board = _board(connection, _game(runtime, game_type), number)
            problem = _replay_problem(runtime, connection, board)
            if problem is not None:
                raise click.ClickException(f"board {number}: {problem}")
            click.echo(f"board {number}: {board.move_count} moves replay to the stored state")
            return
        boards = _boards(connection, runtime, game_type)
        differing = 0
        with _progress(boards, "replaying") as progress:
            for board in progress:
                problem = _replay_problem(runtime, connection, board)
                if problem is not None:
                    differing += 1
                    click.echo(f"{board.game_type} board {board.board}: {problem}")
    click.echo(f"{len(boards) - differing} of {len(boards)} board(s) replay to the stored state")
    if differing:
        raise SystemExit(1)


def _export(connection: Connection, board: BoardRecord) -> dict[str, Any]:
    return {
        "game": board.game_type, "board": board.board, "options": board.options, "timers": board.timers,
        "seats": board.seats, "status": board.status, "result": board.result, "state": board.state,
        "created": _time(board.created_at, "auto"), "updated": _time(board.updated_at, "auto"),
        "moves": [
            {"number": m.number, "seat": m.seat, "text": m.text, "secret": m.secret,
             "time": _time(m.created_at, "auto"), "comment": m.comment}
            for m in records.board_moves(connection, board.id)
        ],
    }


@games.command("export")
@click.argument("game_type", required=False)
@click.argument("number", type=int, required=False)
@click.option("--all", "every", is_flag=True, help="Every board (of GAME_TYPE, if given).")
@click.option(
    "--output", type=click.Path(file_okay=False, writable=True, path_type=Path), default=None,
    help="With --all: write GAME-BOARD.json files into this directory instead of JSON lines to standard output.",
)
@click.pass_context
def games_export(ctx: click.Context, game_type: str | None, number: int | None, every: bool, output: Path | None) -> None:
    """A board with its moves as JSON (seats counted from 0, times in UTC).
    With --all, every board (of GAME_TYPE): one JSON line each, or one file
    each with --output."""
    if every == (number is not None) or (not every and game_type is None):
        raise click.UsageError("name GAME_TYPE and NUMBER, or give --all [GAME_TYPE]")
    if output is not None and not every:
        raise click.UsageError("--output goes with --all")
    runtime = _runtime(ctx)
    with reading(runtime.engine) as connection:
        if not every:
            click.echo(json.dumps(_export(connection, _board(connection, _game(runtime, game_type), number)), indent=2))
            return
        boards = _boards(connection, runtime, game_type)
        if output is not None:
            output.mkdir(parents=True, exist_ok=True)
        with _progress(boards, "exporting") as progress:
            for board in progress:
                data = _export(connection, board)
                if output is None:
                    click.echo(json.dumps(data))
                else:
                    (output / f"{board.game_type}-{board.board}.json").write_text(json.dumps(data, indent=2) + "\n")
    if output is not None:
        click.echo(f"{len(boards)} board(s) written to {output}")


# -- mail --------------------------------------------------------------------
@cli.group()
def inbound() -> None:
    """Received mail: list and show it, fail a mail that holds up the queue, retry failed mail."""


@inbound.command("list")
@click.option(
    "--status", type=click.Choice(["pending", "done", "failed", "dropped"]), default=None, help="Only mail in this state.",
)
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True, help="At most this many, newest first.")
@json_option
@click.pass_context
def inbound_list(ctx: click.Context, status: str | None, limit: int) -> None:
    """List received mail, newest first.

    Columns: id, received, sender (the envelope sender), status (pending,
    done, failed or dropped) and error (why it failed or was dropped)."""
    with reading(_runtime(ctx).engine) as connection:
        rows = [
            {"id": m.id, "received": _time(m.received_at), "sender": m.envelope_sender, "status": m.status,
             "error": m.error}
            for m in stored.inbound_mails(connection, status, limit)
        ]
    _emit(ctx, rows, ["id", "received", "sender", "status", "error"])


@inbound.command("show")
@click.argument("row_id", type=int)
@json_option
@click.pass_context
def inbound_show(ctx: click.Context, row_id: int) -> None:
    """One received mail: its outcome and the copy that is kept of it
    (with its passwords masked once it has been processed)."""
    with reading(_runtime(ctx).engine) as connection:
        mail = stored.find_inbound(connection, row_id)
    if mail is None:
        raise click.ClickException(f"no inbound mail {row_id}")
    data = {
        "id": mail.id, "received": _time(mail.received_at), "sender": mail.envelope_sender,
        "message_id": mail.message_id, "status": mail.status, "error": mail.error or None,
        "processed": _time(mail.processed_at),
    }
    _emit_record(ctx, data, _mail_text(mail.raw))


@inbound.command("fail")
@click.argument("row_ids", type=int, nargs=-1, required=True)
@click.option("--reason", default="failed by the operator", show_default=True, help="Kept as the mail's error.")
@click.pass_context
def inbound_fail(ctx: click.Context, row_ids: tuple[int, ...], reason: str) -> None:
    """Mark pending mails failed without processing or answering them
    (e.g. a mail that holds up the queue); only a masked copy is kept."""
    processor = _runtime(ctx).processor
    _each("inbound", row_ids, lambda row_id: processor.fail(row_id, reason), "failed")


@inbound.command("retry")
@click.argument("row_ids", type=int, nargs=-1, required=True)
@click.pass_context
def inbound_retry(ctx: click.Context, row_ids: tuple[int, ...]) -> None:
    """Make failed or dropped mails pending again, to be processed anew
    from the copy that was kept (`serve` takes them up within a poll; else
    run `pbmserv process`). Passwords masked in that copy no longer match:
    such a mail is refused."""
    processor = _runtime(ctx).processor
    _each("inbound", row_ids, processor.retry, "pending again")


@cli.group()
def outbox() -> None:
    """Mail waiting to go out, sent, or given up: list and show it, send given-up mail again."""


@outbox.command("list")
@click.option("--status", type=click.Choice(["pending", "sent", "dead"]), default=None, help="Only mail in this state.")
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True, help="At most this many, newest first.")
@json_option
@click.pass_context
def outbox_list(ctx: click.Context, status: str | None, limit: int) -> None:
    """List outgoing mail, newest first.

    Columns: id, recipient, status (pending, sent, or dead: given up),
    attempts (at delivery), next_try (when it is due, if not sent) and
    last_error (the last delivery failure)."""
    with reading(_runtime(ctx).engine) as connection:
        rows = [
            {"id": m.id, "recipient": m.recipient, "status": m.status, "attempts": m.attempts,
             "next_try": _time(m.next_try_at), "last_error": m.last_error}
            for m in stored.outbox_mails(connection, status, limit)
        ]
    _emit(ctx, rows, ["id", "recipient", "status", "attempts", "next_try", "last_error"])


@outbox.command("show")
@click.argument("mail_id", type=int)
@json_option
@click.pass_context
def outbox_show(ctx: click.Context, mail_id: int) -> None:
    """One outgoing mail: its delivery (status, attempts, next try, last
    error) and the mail itself, headers and body. What it quotes of a
    player's mail has its passwords masked already."""
    with reading(_runtime(ctx).engine) as connection:
        mail = stored.find_outbox(connection, mail_id)
    if mail is None:
        raise click.ClickException(f"no outbox mail {mail_id}")
    data = {
        "id": mail.id, "created": _time(mail.created_at), "recipient": mail.recipient, "kind": mail.kind,
        "message_id": mail.message_id, "answers_inbound": mail.inbound_id, "status": mail.status,
        "attempts": mail.attempts, "next_try": _time(mail.next_try_at), "last_error": mail.last_error or None,
    }
    _emit_record(ctx, data, _mail_text(mail.raw))


@outbox.command("retry")
@click.argument("ids", type=int, nargs=-1)
@click.option("--all-dead", is_flag=True, help="Retry every mail that was given up.")
@click.pass_context
def outbox_retry(ctx: click.Context, ids: tuple[int, ...], all_dead: bool) -> None:
    """Make given-up (or waiting) mail due again now, its attempts counted
    anew; exit 1 if any named mail is not there or was sent already."""
    if all_dead == bool(ids):
        raise click.UsageError("name mail ids or give --all-dead")
    runtime = _runtime(ctx)
    if all_dead:
        click.echo(f"{operator.retry_dead_outbox(runtime.engine, runtime.clock())} mail(s) due again")
        return
    _each("outbox", ids, lambda mail_id: operator.retry_outbox(runtime.engine, mail_id, runtime.clock()), "due again")


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
@json_option
@click.pass_context
def stats(ctx: click.Context) -> None:
    """Counts of users, boards and mail."""
    with reading(_runtime(ctx).engine) as connection:
        data = stored.counts(connection)
    if ctx.obj["json"]:
        click.echo(json.dumps(data, indent=2))
    else:
        for key, value in data.items():
            click.echo(f"{key:<16} {value}")


def main() -> None:
    cli(prog_name="pbmserv-admin")
