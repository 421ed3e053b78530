"""What the commands of `pbmserv-admin` share: the server's parts, output
as a table or JSON, and changes made to one id after another."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, TypeVar

import click

from pbmserv.runtime import Runtime
from pbmserv.service.context import as_utc
from pbmserv.store.database import require_current_schema

T = TypeVar("T")


def runtime_of(ctx: click.Context, *, may_make_database: bool = False) -> Runtime:
    """The server's parts for a command; only `db upgrade` may make a database: the others need one, and current."""
    settings = ctx.obj["settings"]
    if not may_make_database:
        require_current_schema(settings.database_url, settings.database_busy_seconds)
    return Runtime(settings)


def _json_requested(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        ctx.obj["json"] = True


#: `--json` after a subcommand, as before it
json_option = click.option(
    "--json", is_flag=True, expose_value=False, callback=_json_requested, help="Print JSON instead of a table."
)


def iso_time(moment: datetime | None, timespec: str = "seconds") -> str | None:
    """A stored time in ISO 8601, in UTC with its offset (SQLite gives stored times back without a zone)."""
    return as_utc(moment).astimezone(UTC).isoformat(timespec=timespec) if moment is not None else None


def emit_rows(ctx: click.Context, rows: list[dict[str, Any]], columns: list[str]) -> None:
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


def emit_record(ctx: click.Context, data: dict[str, Any], text: str | None = None) -> None:
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


def mail_text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace").replace("\r\n", "\n")


@contextmanager
def progress_of(items: list[T], label: str) -> Iterator[Iterable[T]]:
    """`items`, with a progress bar on stderr while a person watches it there (never in a script's output)."""
    if not sys.stderr.isatty():
        yield items
        return
    with click.progressbar(items, label=label, file=sys.stderr) as bar:
        yield bar


def change_each(kind: str, ids: Iterable[Any], change: Callable[[Any], str | None], done: str) -> None:
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
