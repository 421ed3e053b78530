"""Statements run on the driver's cursor (`store.prepared`) give what
SQLAlchemy's own execution gives, on SQLite and on PostgreSQL."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Select, bindparam, event, insert, select, update
from sqlalchemy.exc import ArgumentError, IntegrityError

from pbmserv.gamekit import get_game
from pbmserv.mail.backends import MemoryBackend
from pbmserv.runtime import Runtime
from pbmserv.service.processing.catalog import Catalog
from pbmserv.service.processing.context import as_utc
from pbmserv.store.prepared import Prepared
from pbmserv.store.records import BOARDS, MOVES, USERS
from tests.conftest import FakeClock
from tests.toygame import Toy
from tests.transcript import read, replay


def move_row(board_id: int, number: int, **changes: object) -> dict[str, object]:
    """A row for `moves`: by default seat 1 playing c3, no secret, no comment."""
    row = {"board_id": board_id, "number": number, "seat": 1, "text": "c3", "secret": False, "auto": False,
           "created_at": datetime(2026, 11, 23, tzinfo=UTC), "comment": ""}
    return row | changes


QUERIES: dict[str, tuple[Select[Any], dict[str, object]]] = {
    "boards (JSON, datetimes, a null)": (
        select(*BOARDS.c).where(BOARDS.c.game_type == bindparam("game_type")).order_by(BOARDS.c.board),
        {"game_type": "toy"},
    ),
    "moves (booleans, a limit)": (
        select(*MOVES.c).where(MOVES.c.board_id > bindparam("above")).order_by(MOVES.c.id.desc()).limit(bindparam("most")),
        {"above": 0, "most": 5},
    ),
    "users, locked": (select(USERS.c.id, USERS.c.userid).order_by(USERS.c.userid).with_for_update(), {}),
}


@pytest.mark.parametrize("query", QUERIES, ids=list(QUERIES))
def test_rows_are_what_sqlalchemy_gives(toy_boards: Runtime, query: str) -> None:
    statement, params = QUERIES[query]
    with toy_boards.engine.begin() as connection:
        expected = [tuple(row) for row in connection.execute(statement, params)]
        assert expected, "the query finds something to compare"
        assert Prepared(statement).rows(connection, params) == expected


def test_a_write_changes_what_sqlalchemy_reads_and_says_how_many_rows(toy_boards: Runtime) -> None:
    with toy_boards.engine.begin() as connection:
        board_id = connection.execute(select(BOARDS.c.id).where(BOARDS.c.board == 101)).scalar_one()
        row = move_row(board_id, 2, secret=True, created_at=datetime(2026, 11, 23, 12, 0, tzinfo=UTC),
                       comment="\u00e9t\u00e9")
        assert Prepared(insert(MOVES)).run(connection, row) == 1
        written = connection.execute(select(*(MOVES.c[name] for name in row)).where(MOVES.c.number == 2)).one()._asdict()
        assert as_utc(written.pop("created_at")) == row.pop("created_at")
        assert written == row


def test_a_driver_error_is_sqlalchemys(toy_boards: Runtime) -> None:
    """The worker tells database trouble from a bug by SQLAlchemy's exception classes."""
    with toy_boards.engine.connect() as connection, connection.begin():
        board_id = connection.execute(select(BOARDS.c.id).where(BOARDS.c.board == 101)).scalar_one()
        taken = move_row(board_id, 1, seat=0, text="a1")
        with pytest.raises(IntegrityError):
            Prepared(insert(MOVES)).run(connection, taken)


def test_a_statement_whose_sql_changes_per_execution_is_refused(toy_boards: Runtime) -> None:
    statement = select(USERS.c.id).where(USERS.c.userid.in_(bindparam("userids", expanding=True)))
    with toy_boards.engine.begin() as connection, pytest.raises(ValueError, match="cannot be prepared"):
        Prepared(statement).rows(connection, {"userids": ["alice"]})


def test_a_connection_without_a_transaction_begins_one_as_sqlalchemy_would(toy_boards: Runtime) -> None:
    """Written in the transaction that SQLAlchemy began, so undone with it."""
    with toy_boards.engine.connect() as connection:
        board_id = connection.execute(select(BOARDS.c.id).where(BOARDS.c.board == 101)).scalar_one()
        connection.rollback()
        assert not connection.in_transaction()
        Prepared(insert(MOVES)).run(connection, move_row(board_id, 2))
        assert connection.in_transaction()
        connection.rollback()
    with toy_boards.engine.connect() as connection:
        assert connection.scalar(select(MOVES.c.id).where(MOVES.c.board_id == board_id, MOVES.c.number == 2)) is None


def test_a_missing_or_unknown_parameter_is_refused_not_bound_as_null(toy_boards: Runtime) -> None:
    rename = Prepared(update(USERS).where(USERS.c.id == bindparam("row_id")).values(userid=bindparam("new_userid")))
    with toy_boards.engine.begin() as connection:
        row_id, userid = connection.execute(select(USERS.c.id, USERS.c.userid).limit(1)).one()
        with pytest.raises(ArgumentError, match="a value is required for the parameters new_userid"):
            rename.run(connection, {"row_id": row_id, "new_useird": "mallory"})
        with pytest.raises(ArgumentError, match="the statement has no parameters extra"):
            rename.run(connection, {"row_id": row_id, "new_userid": "mallory", "extra": 1})
        assert connection.scalar(select(USERS.c.userid).where(USERS.c.id == row_id)) == userid
        assert rename.run(connection, {"row_id": row_id, "new_userid": "mallory"}) == 1


#: transcripts that between them run moves, queues, undo, subscriptions and the timer pass
SWITCHED = ["02-game", "11-subscriptions", "41-queue", "43-proposals", "32-timers-and-vacation"]


@pytest.mark.parametrize("name", SWITCHED)
@pytest.mark.parametrize("prepared", [True, False], ids=["prepared", "plain"])
def test_the_switch_routes_every_statement_through_sqlalchemy_with_the_same_mails(
    runtime: Runtime, key_file: str, name: str, prepared: bool,
) -> None:
    """`[database] prepared = false` gives the same mails, and SQLAlchemy (its
    echo, its events) sees the statements the fast path keeps from it: the
    savepoint of every mail, the board's UPDATE."""
    expected = (Path(__file__).parent / "transcripts" / f"{name}.txt").read_text(encoding="utf-8")
    transcript = read(expected)
    switched = Runtime(
        replace(runtime.settings, database_prepared=prepared, admins=tuple(transcript.admins)),
        catalog=Catalog([Toy(), *(get_game(game) for game in transcript.games)]),
        clock=FakeClock(), backend=MemoryBackend(),
    )
    seen: list[str] = []
    event.listen(switched.engine, "before_cursor_execute", lambda *args: seen.append(args[2]))
    try:
        assert replay(transcript, switched) == expected
    finally:
        switched.close()
    through_sqlalchemy = {"SAVEPOINT mail" in seen, any(sql.startswith("UPDATE boards") for sql in seen)}
    assert through_sqlalchemy == {not prepared}
