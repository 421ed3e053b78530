"""The store's repository functions, on the real database (SQLite, or PostgreSQL in CI's second run)."""

from __future__ import annotations

from sqlalchemy import event

from pbmserv.runtime import Runtime
from pbmserv.store import records
from tests.mailtools import send


def test_the_addresses_of_many_users_are_read_in_one_query(runtime: Runtime) -> None:
    send(runtime, "alice@example.org", "signup alice secret1 alice@example.org alice@home.example")
    send(runtime, "bob@example.org", "signup bob secret2")
    seen: list[str] = []
    event.listen(runtime.engine, "before_cursor_execute", lambda *args: seen.append(args[2]))
    with runtime.engine.begin() as connection:
        found = records.confirmed_addresses(connection, ["bob", "alice", "nobody"])
    assert found == {"bob": ("bob@example.org",), "alice": ("alice@example.org",), "nobody": ()}
    assert len([sql for sql in seen if sql.lstrip().upper().startswith("SELECT")]) == 1
