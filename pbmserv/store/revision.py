"""The newest schema revision, known without Alembic or SQLAlchemy (see
docs/decisions/0092-receive-imports.md)."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[1]
#: Alembic's scripts: beside the package in the wheel (pyproject.toml maps them there), at the top of a checkout
MIGRATIONS = next(
    (folder for folder in (_PACKAGE / "migrations", _PACKAGE.parent / "migrations") if (folder / "versions").is_dir()),
    _PACKAGE / "migrations",
)

_REVISION_LINE = re.compile(r"""^revision = ['"]([^'"]+)['"]$""", re.MULTILINE)


@cache
def newest_revision() -> str:
    """The newest schema revision: that of the migration whose file's name
    sorts last (they are numbered `NNNN_what_it_does.py`; a test makes
    sure that this is Alembic's head). Reading it costs a
    directory listing and one file, where Alembic's `ScriptDirectory` reads
    and compiles every migration."""
    newest = max((MIGRATIONS / "versions").glob("[0-9]*.py"))
    found = _REVISION_LINE.search(newest.read_text())
    if found is None:
        raise RuntimeError(f"{newest} names no revision")
    return found.group(1)
