"""`pbmserv-admin`: the operator's tool."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from pbmserv.cli import Tool, config_option
from pbmserv.cli.admin_common import (
    change_each,
    echo,
    emit_record,
    emit_rows,
    iso_time,
    json_option,
    printable,
    progress_of,
    runtime_of,
)
from pbmserv.cli.admin_mail import inbound, outbox
from pbmserv.config import ConfigError, load_settings
from pbmserv.gamekit import Game
from pbmserv.runtime import Runtime
from pbmserv.service import operator
from pbmserv.service.play.board import Board, replay
from pbmserv.service.play.views import board_mail, names_and
from pbmserv.store import operator as stored
from pbmserv.store import records
from pbmserv.store.database import reading, schema_revision
from pbmserv.store.handles import Connection
from pbmserv.store.key import key_path, make_key
from pbmserv.store.records import BoardRecord


@click.group(cls=Tool)
@click.version_option(package_name="pbmserv")
@config_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables (also after a subcommand).")
@click.pass_context
def cli(ctx: click.Context, config_path: str | None, as_json: bool) -> None:
    """Look after a pbmserv server: its database, accounts, boards and mail.

    Times are printed in ISO 8601 with their offset from UTC."""
    ctx.obj = {"settings": load_settings(config_path), "json": as_json}


# -- db ----------------------------------------------------------------------
@cli.group()
def db() -> None:
    """The database schema."""


@db.command()
@click.pass_context
def upgrade(ctx: click.Context) -> None:
    """Bring the database to the newest schema (making it if there is none)."""
    runtime = runtime_of(ctx, may_make_database=True)
    before = schema_revision(runtime.engine)
    runtime.upgrade_schema()
    after = schema_revision(runtime.engine)
    if before == after:
        echo(f"the database is at the newest schema ({after}) already: nothing to do")
    else:
        echo(f"database upgraded from schema {before or 'nothing (a new database)'} to {after}")


# -- key ---------------------------------------------------------------------
@cli.group()
def key() -> None:
    """The server's secret key."""


@key.command("new")
@click.pass_context
def key_new(ctx: click.Context) -> None:
    """Make a new server key where there is none: to start over when the
    key is lost for good. Every reply address mailed so far stops working
    (a mail to one is refused), and mail that waits sealed with the lost
    key is answered with an apology asking to send it again."""
    path = key_path(ctx.obj["settings"])
    if path.exists():
        raise ConfigError(f"there is a server key at {path} already; `key new` only makes one where there is none")
    make_key(path)
    echo(f"made a new server key at {path}: keep it apart from the backups")


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
    runtime = runtime_of(ctx)
    with reading(runtime.engine) as connection:
        rows = [
            {"userid": u.userid, "addresses": ", ".join(a.address for a in u.addresses), "since": iso_time(u.created_at),
             "disabled": iso_time(u.disabled_at)}
            for u in stored.accounts(connection)
        ]
    emit_rows(ctx, rows, ["userid", "addresses", "since", "disabled"])


@users.command("show")
@click.argument("userid")
@json_option
@click.pass_context
def users_show(ctx: click.Context, userid: str) -> None:
    """One account: its addresses and whether each is confirmed, when it was
    made, its boards, its vacation, whether it is disabled, and when the
    last mail from one of its addresses came."""
    view = operator.account(runtime_of(ctx).engine, userid)
    if view is None:
        raise click.ClickException(f"no account {userid}")
    emit_record(ctx, {
        "userid": view.userid,
        "addresses": [
            f"{address} (confirmed {iso_time(confirmed)})" if confirmed else f"{address} (not confirmed)"
            for address, confirmed in view.addresses
        ],
        "since": iso_time(view.created_at),
        "boards_active": view.boards_active,
        "boards_finished": view.boards_finished,
        "vacation_since": iso_time(view.on_vacation_since),
        "disabled_since": iso_time(view.disabled_at),
        "disabled_reason": view.disabled_reason or None,
        "last_mail": iso_time(view.last_mail_at),
    })


@users.command("disable")
@click.argument("userid")
@click.option("--reason", default="", help="Why; the account's owner reads it in the refusal of their commands.")
@click.pass_context
def users_disable(ctx: click.Context, userid: str, reason: str) -> None:
    """Refuse every command of the account (with a reply that says it is
    disabled and whom to write to). Its boards go on: the other players
    wait for its moves, with reminders and forfeits as usual."""
    runtime = runtime_of(ctx)
    change_each("user", [userid], lambda u: operator.disable(runtime.engine, u, reason.strip(), runtime.clock()), "disabled")


@users.command("enable")
@click.argument("userid")
@click.pass_context
def users_enable(ctx: click.Context, userid: str) -> None:
    """Take the account's commands again after `users disable`."""
    runtime = runtime_of(ctx)
    change_each("user", [userid], lambda u: operator.enable(runtime.engine, u), "enabled")


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
    runtime = runtime_of(ctx)
    change_each(
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
    runtime = runtime_of(ctx)
    change_each(
        "user", [userid], lambda u: operator.set_addresses(runtime.engine, u, addresses, runtime.clock()), "addresses set",
    )


# -- games -------------------------------------------------------------------
@cli.group()
def games() -> None:
    """Boards: list, show, export and replay them."""


def _game(runtime: Runtime, game_type: str) -> Game:
    if game_type not in runtime.processor.catalog:
        raise click.ClickException(f"no such game type {game_type}; known: {', '.join(runtime.processor.catalog.names())}")
    return runtime.processor.catalog.get(game_type)


@games.command("list")
@click.argument("game_type", required=False)
@json_option
@click.pass_context
def games_list(ctx: click.Context, game_type: str | None) -> None:
    """List the boards (of one game type, with GAME_TYPE).

    Columns: game, board, players, moves (made so far), status (active or
    finished) and updated (the time of the last move)."""
    runtime = runtime_of(ctx)
    with reading(runtime.engine) as connection:
        rows = [
            {"game": b.game_type, "board": b.board, "players": " vs ".join(b.seats), "moves": b.move_count,
             "status": b.status, "updated": iso_time(b.updated_at)}
            for b in _boards(connection, runtime, game_type)
        ]
    emit_rows(ctx, rows, ["game", "board", "players", "moves", "status", "updated"])


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
    runtime = runtime_of(ctx)
    game = _game(runtime, game_type)
    with reading(runtime.engine) as connection:
        board = _board(connection, game, number)
        viewer = _viewer(board, seat)
        moves = records.board_moves(connection, board.id)
    echo(board_mail(game, board, moves, Board.of(game, board).state, viewer, recent=None), nl=False)


def _replay_problem(runtime: Runtime, connection: Connection, board: BoardRecord) -> str | None:
    """Why replaying the board's moves does not give its stored state, or None if it does."""
    if board.game_type not in runtime.processor.catalog:
        return f"its game {board.game_type} is not installed"
    game = runtime.processor.catalog.get(board.game_type)
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
    runtime = runtime_of(ctx)
    with reading(runtime.engine) as connection:
        if not every:
            assert game_type is not None and number is not None  # the usage check above
            board = _board(connection, _game(runtime, game_type), number)
            problem = _replay_problem(runtime, connection, board)
            if problem is not None:
                raise click.ClickException(printable(f"board {number}: {problem}", lines=False))
            echo(f"board {number}: {board.move_count} moves replay to the stored state")
            return
        boards = _boards(connection, runtime, game_type)
        differing = 0
        with progress_of(boards, "replaying") as progress:
            for board in progress:
                problem = _replay_problem(runtime, connection, board)
                if problem is not None:
                    differing += 1
                    echo(printable(f"{board.game_type} board {board.board}: {problem}", lines=False))
    echo(f"{len(boards) - differing} of {len(boards)} board(s) replay to the stored state")
    if differing:
        raise SystemExit(1)


def _export(connection: Connection, board: BoardRecord) -> dict[str, Any]:
    return {
        "game": board.game_type, "board": board.board, "options": board.options, "timers": board.timers,
        "seats": board.seats, "status": board.status, "result": board.result, "state": board.state,
        "created": iso_time(board.created_at, "auto"), "updated": iso_time(board.updated_at, "auto"),
        "moves": [
            {"number": m.number, "seat": m.seat, "text": m.text, "secret": m.secret,
             "time": iso_time(m.created_at, "auto"), "comment": m.comment}
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
    runtime = runtime_of(ctx)
    with reading(runtime.engine) as connection:
        if not every:
            assert game_type is not None and number is not None  # the usage check above
            echo(json.dumps(_export(connection, _board(connection, _game(runtime, game_type), number)), indent=2))
            return
        boards = _boards(connection, runtime, game_type)
        if output is not None:
            output.mkdir(parents=True, exist_ok=True)
        with progress_of(boards, "exporting") as progress:
            for board in progress:
                data = _export(connection, board)
                if output is None:
                    echo(json.dumps(data))
                else:
                    (output / f"{board.game_type}-{board.board}.json").write_text(json.dumps(data, indent=2) + "\n")
    if output is not None:
        echo(f"{len(boards)} board(s) written to {output}")


@cli.command()
@click.pass_context
def cleanup(ctx: click.Context) -> None:
    """One pass of reminders and forfeits for late moves; prints what it did.

    The mails wait in the outbox for `pbmserv deliver` (or `serve`)."""
    report = runtime_of(ctx).processor.run_timers()
    for line in report:
        echo(printable(line, lines=False))
    echo(f"{len(report)} reminder(s), forfeit(s) and vacation end(s)")


@cli.command()
@json_option
@click.pass_context
def stats(ctx: click.Context) -> None:
    """Counts of users, boards and mail."""
    with reading(runtime_of(ctx).engine) as connection:
        data = stored.counts(connection)
    if ctx.obj["json"]:
        echo(json.dumps(data, indent=2))
    else:
        for key, value in data.items():
            echo(f"{key:<16} {value}")


cli.add_command(inbound)
cli.add_command(outbox)


def main() -> None:
    cli(prog_name="pbmserv-admin")
