"""What the commands of `pbmserv-admin` share: the server's parts, output
as a table or JSON (through `echo`, which shows control characters as
escapes), and changes made to one id after another."""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, TypeVar

import click

from pbmserv.runtime import Runtime
from pbmserv.service.processing.context import as_utc
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


#: what may reach a terminal as it is: printable ASCII, and in a text its
#: newlines and tabs (everything else is looked at one character at a time)
_NOT_PLAIN_TEXT = re.compile(r"[^\t\n\x20-\x7e]")
_NOT_PLAIN_FIELD = re.compile(r"[^\x20-\x7e]")
#: the Unicode categories shown as escapes: controls (C0, C1 and DEL), format
#: characters (bidi overrides, zero-width ones, the soft hyphen), surrogates,
#: unassigned code points and the line and paragraph separators
_UNSHOWN = frozenset({"Cc", "Cf", "Cs", "Cn", "Zl", "Zp"})


def printable(text: str, *, lines: bool = True) -> str:
    """`text` as it may reach the operator's terminal: every control or
    invisible format character written out as an escape (`\\x1b`,
    `\\u202e`), so that what a stranger wrote in a mail cannot clear the
    screen, set the window's title, fill the clipboard (OSC 52) or turn
    what is shown around. With `lines`, newlines and tabs are kept (a
    mail's text); without, they are escaped too (a field, a table's cell)."""
    return (_NOT_PLAIN_TEXT if lines else _NOT_PLAIN_FIELD).sub(_visible, text)


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    return char.encode("unicode_escape").decode("ascii") if unicodedata.category(char) in _UNSHOWN else char


def echo(text: str = "", *, nl: bool = True, err: bool = False) -> None:
    """What every display of `pbmserv-admin` prints goes through here: its
    newlines and tabs kept, any other control character escaped."""
    click.echo(printable(text), nl=nl, err=err)


def emit_rows(ctx: click.Context, rows: list[dict[str, Any]], columns: list[str]) -> None:
    if ctx.obj["json"]:  # JSON escapes every control and non-ASCII character itself
        echo(json.dumps(rows, indent=2))
        return
    if not rows:
        echo("(none)")
        return
    shown = [{c: "-" if row[c] is None else printable(str(row[c]), lines=False) for c in columns} for row in rows]
    widths = {c: max(len(c), *(len(row[c]) for row in shown)) for c in columns}
    echo("  ".join(c.ljust(widths[c]) for c in columns).rstrip())
    for row in shown:
        echo("  ".join(row[c].ljust(widths[c]) for c in columns).rstrip())


def emit_record(ctx: click.Context, data: dict[str, Any], text: str | None = None) -> None:
    """One record: as JSON, or a line for each field and then `text` (a mail) after a blank line."""
    if ctx.obj["json"]:
        echo(json.dumps(data if text is None else {**data, "mail": text}, indent=2))
        return
    width = max(len(key) for key in data) + 2  # as inbound show has always lined them up
    for key, value in data.items():
        if isinstance(value, list):
            value = ", ".join(value) or None
        shown = "-" if value in (None, "") else printable(str(value), lines=False)
        echo(f"{key + ':':<{width}} {shown}")
    if text is not None:
        echo("")
        echo(text, nl=False)


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
            echo(printable(f"{kind} {item}: {done}", lines=False))
        else:
            refused += 1
            echo(printable(f"{kind} {item}: not changed: {why}", lines=False), err=True)
    if refused:
        raise SystemExit(1)
