"""The store's repository functions, on the real database (SQLite, or PostgreSQL in CI's second run)."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from sqlalchemy import event, select

import pbmserv
from pbmserv.runtime import Runtime
from pbmserv.service.processing.context import as_utc
from pbmserv.store import following, records, users
from pbmserv.store.following import PolicyRecord
from pbmserv.store.prepared import PLAIN
from pbmserv.store.records import ADDRESSES
from pbmserv.store.users import AddressRecord
from tests.conftest import FakeClock
from tests.mailtools import send, signup


def test_the_addresses_of_many_users_are_read_in_one_query(runtime: Runtime) -> None:
    signup(runtime, "alice", "secret1")
    send(runtime, "alice@example.org", "change address alice secret1 alice@example.org alice@home.example")
    signup(runtime, "bob", "secret2")
    seen: list[str] = []
    event.listen(runtime.engine, "before_cursor_execute", lambda *args: seen.append(args[2]))
    with runtime.engine.execution_options(**{PLAIN: True}).begin() as connection:  # where events see the statements
        found = records.confirmed_addresses(connection, ["bob", "alice", "nobody"])  # three, padded to four
    assert found == {"bob": ("bob@example.org",), "alice": ("alice@example.org",), "nobody": ()}
    assert len([sql for sql in seen if sql.lstrip().upper().startswith("SELECT")]) == 1


def test_the_addresses_of_very_many_users_take_a_query_for_each_group(runtime: Runtime) -> None:
    signup(runtime, "alice", "secret1")
    seen: list[str] = []
    event.listen(runtime.engine, "before_cursor_execute", lambda *args: seen.append(args[2]))
    userids = [f"player{number}" for number in range(records.MOST_USERIDS_A_QUERY)] + ["alice"]
    with runtime.engine.execution_options(**{PLAIN: True}).begin() as connection:
        found = records.confirmed_addresses(connection, userids)
    assert list(found) == userids and found["alice"] == ("alice@example.org",) and not any(found["player7"])
    assert len([sql for sql in seen if sql.lstrip().upper().startswith("SELECT")]) == 2


def test_only_the_store_imports_sqlalchemy() -> None:
    package = Path(pbmserv.__file__).parent
    importing = {
        str(path.relative_to(package)) for path in package.rglob("*.py")
        if path.relative_to(package).parts[0] != "store" and re.search(r"^\s*(from|import) sqlalchemy", path.read_text(), re.M)
    }
    assert importing == set(), "the names of the database's types are in store.handles"


def test_an_address_kept_keeps_its_row_and_its_confirmation(runtime: Runtime, clock: FakeClock) -> None:
    signup(runtime, "alice", "secret1")
    with runtime.engine.begin() as connection:
        alice = records.find_account(connection, "alice")
        assert alice is not None
        row_of = {address: row_id for address, row_id in connection.execute(select(ADDRESSES.c.address, ADDRESSES.c.id))}
        users.write_addresses(connection, alice.id, [AddressRecord("new@example.org"), *users.addresses_of(connection, alice.id)])
        kept = users.addresses_of(connection, alice.id)
        assert [(a.address, a.confirmed_at and as_utc(a.confirmed_at)) for a in kept] == [
            ("new@example.org", None), ("alice@example.org", clock.now),
        ]
        assert connection.scalar(select(ADDRESSES.c.id).where(ADDRESSES.c.address == "alice@example.org")) == row_of["alice@example.org"]
        users.write_addresses(connection, alice.id, [AddressRecord("new@example.org")])
        assert users.addresses_of(connection, alice.id) == [AddressRecord("new@example.org")]


def test_a_policy_is_stored_once_and_then_changed(runtime: Runtime) -> None:
    signup(runtime, "alice", "secret1")
    with runtime.engine.begin() as connection:
        alice = records.find_account(connection, "alice")
        assert alice is not None
        assert following.find_policy(connection, alice.id, "toy") is None
        following.save_policy(connection, PolicyRecord(id=None, user_id=alice.id, game_type="toy", seeking=2))
        stored = following.find_policy(connection, alice.id, "toy")
        assert stored is not None and stored.seeking == 2 and stored.accepts_challenges
        following.save_policy(connection, replace(stored, accepts_challenges=False))
        assert following.policies_in_game(connection, "toy") == {"alice": replace(stored, accepts_challenges=False)}


def test_a_queued_move_replaces_the_seats_earlier_one(toy_boards: Runtime, clock: FakeClock) -> None:
    with toy_boards.engine.begin() as connection:
        board = records.find_board(connection, "toy", 101)
        assert board is not None
        assert records.queue_move(connection, board.id, 0, "c3", clock.now) is None
        assert records.queue_move(connection, board.id, 0, "d4", clock.now) == "c3"
        assert [(q.seat, q.text) for q in records.queued_moves(connection, board.id)] == [(0, "d4")]
