"""What a move reads does not grow with the board's history (issue 21,
item 6): the move list of a board mail is the board's last moves, read as
the range of their numbers, not every move of the board sorted. Asked for
them by ORDER BY number DESC LIMIT, PostgreSQL chose an index scan on
board_id and a sort for a board its statistics did not know as a long one
(a prepared statement's generic plan would for every board), and read all
of a long game's moves for every mail."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import create_engine, event, insert

from pbmserv.store import records
from pbmserv.store.database import make_engine
from pbmserv.store.models import Board, Move

BOARDS = 3000
LONG_BOARD = 1500
LONG_GAME = 300
RECENT = 12


def _boards_with_moves(database_url: str) -> int:
    """BOARDS boards of ten moves, the database's statistics taken (on
    PostgreSQL), and then one board played on to LONG_GAME moves, as a long
    game grows between two runs of autovacuum; that board's id."""
    now = datetime(2026, 1, 5, tzinfo=UTC)
    engine = create_engine(database_url)

    def add_moves(moves: list[tuple[int, int]]) -> None:
        with engine.begin() as connection:
            connection.execute(insert(Move.__table__), [
                {"board_id": board, "number": n, "seat": n % 2, "text": "a1", "secret": False, "created_at": now, "comment": "",
                 "auto": False}
                for board, n in moves
            ])

    with engine.begin() as connection:
        connection.execute(insert(Board.__table__), [
            {"id": number, "game_type": "toy", "board": 100 + number, "options": {}, "timers": {}, "seats": ["alice", "bob"],
             "state": {}, "move_count": 0, "status": "active", "result": None, "created_at": now, "updated_at": now, "version": 1}
            for number in range(1, BOARDS + 1)
        ])
    add_moves([(board, n) for n in range(1, 11) for board in range(1, BOARDS + 1)])
    if engine.dialect.name == "postgresql":
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.exec_driver_sql("VACUUM ANALYZE moves")
    add_moves([(LONG_BOARD, n) for n in range(11, LONG_GAME + 1)])
    engine.dispose()
    return LONG_BOARD


def test_a_long_games_last_moves_are_read_without_the_rest(database_url: str) -> None:
    board_id = _boards_with_moves(database_url)
    engine = make_engine(database_url, prepared=False)  # every statement through Connection.execute, where events see it
    seen: list[tuple[str, Any]] = []
    event.listen(engine, "before_cursor_execute", lambda conn, cursor, sql, params, context, many: seen.append((sql, params)))
    with engine.connect() as connection:
        moves = records.recent_moves(connection, board_id, LONG_GAME, RECENT)
        assert [move.number for move in moves] == list(range(LONG_GAME - RECENT + 1, LONG_GAME + 1))
        [(sql, params)] = seen
        if engine.dialect.name == "postgresql":
            [[plan]] = connection.exec_driver_sql(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}", params).one()
            scans = list(_nodes(plan["Plan"]))
            read = [node["Actual Rows"] for node in scans if node.get("Relation Name") == "moves"]
            assert read and max(read) <= RECENT, json.dumps(plan, indent=1)
        else:
            plan = [row[-1] for row in connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}", params)]
            assert not any("TEMP B-TREE" in step for step in plan), plan  # a sort: every move of the board read
    engine.dispose()


def _nodes(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("Plans", []):
        yield from _nodes(child)
