"""Boards, their moves and queued moves, and what every move needs of
accounts, as plain records read and written with Core statements built once.

A move is what the server does most, and on its path the ORM's identity
map, unit of work and per-query machinery cost more than the move itself.
So no command goes through the ORM: a `BoardRecord` is loaded, changed in
Python (a frozen record, changed with `dataclasses.replace` by the
service's `Board` value) and written back with one version-guarded UPDATE
(`save_board`).
The statements of every move are run as `Prepared` ones, on the driver's
cursor (see `store.prepared`). The ORM models in `models` are the schema;
the rarer commands have records and functions of their own in `users`,
`following` and `operator`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from datetime import datetime
from functools import cache
from typing import Any, NamedTuple

from sqlalchemy import (
    BindParameter,
    ColumnElement,
    Connection,
    String,
    bindparam,
    cast,
    delete,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.orm.exc import StaleDataError

from pbmserv.store.models import Address, Board, Move, QueuedMove, User
from pbmserv.store.prepared import Prepared

BOARDS = Board.__table__
MOVES = Move.__table__
QUEUED = QueuedMove.__table__
USERS = User.__table__
ADDRESSES = Address.__table__


@dataclass(frozen=True, eq=False)
class BoardRecord:
    """One row of `boards`; see `models.Board` for what the columns hold."""

    id: int
    game_type: str
    board: int
    options: dict[str, Any]
    timers: dict[str, Any]
    seats: list[str]
    state: Any
    move_count: int
    status: str
    result: dict[str, Any] | None
    created_at: datetime
    updated_at: datetime
    version: int
    nagged_at: datetime | None
    proposal: dict[str, Any] | None


class MoveRecord(NamedTuple):
    """One row of `moves` (a tuple: its fields read many times faster than a Row's)."""

    number: int
    seat: int
    text: str
    secret: bool
    auto: bool
    created_at: datetime
    comment: str


class QueuedRecord(NamedTuple):
    """One row of `queued_moves`."""

    id: int
    seat: int
    text: str


@dataclass(frozen=True)
class Account:
    """What checking a player's password needs of `users`, and what a board
    mail to the player needs: whether it carries a picture, the time zone
    its deadlines are shown in ("": UTC alone), and which board mails the
    player gets (`notifications`) with the hour of their digest."""

    id: int
    userid: str
    password_hash: str
    disabled_at: datetime | None
    disabled_reason: str
    reply_secret: str
    pictures: bool = False
    timezone: str = ""
    notifications: str = "every"
    digest_hour: int = 8


#: the board columns a command may change (`save_board` writes them all)
CHANGEABLE = ("state", "move_count", "status", "result", "updated_at", "nagged_at", "proposal")
_BOARD_COLUMNS = [BOARDS.c[f.name] for f in fields(BoardRecord)]
_FIND_BOARD = select(*_BOARD_COLUMNS).where(
    BOARDS.c.game_type == bindparam("game_type"), BOARDS.c.board == bindparam("number")
)
_FIND = Prepared(_FIND_BOARD)
_FIND_LOCKED = Prepared(_FIND_BOARD.with_for_update())
_INSERT_BOARD = insert(BOARDS)
_SAVE_BOARD = Prepared(
    update(BOARDS)
    .where(BOARDS.c.id == bindparam("board_id"), BOARDS.c.version == bindparam("old_version"))
    .values(version=bindparam("new_version"), **{name: bindparam(name) for name in CHANGEABLE})
)
_MOVE_COLUMNS = [MOVES.c[name] for name in MoveRecord._fields]
_MOVES = Prepared(select(*_MOVE_COLUMNS).where(MOVES.c.board_id == bindparam("board_id")).order_by(MOVES.c.number))
_FIRST_MOVES = Prepared(
    select(*_MOVE_COLUMNS)
    .where(MOVES.c.board_id == bindparam("board_id"), MOVES.c.number <= bindparam("upto"))
    .order_by(MOVES.c.number)
)
_PLAYED = Prepared(
    select(MOVES.c.seat, MOVES.c.text)
    .where(MOVES.c.board_id == bindparam("board_id"), MOVES.c.number <= bindparam("upto"))
    .order_by(MOVES.c.number)
)
#: by the range of numbers, not ORDER BY number DESC LIMIT: PostgreSQL may
#: read that with a bitmap scan and a sort, which reads a long game's every move
_RECENT_MOVES = Prepared(
    select(*_MOVE_COLUMNS)
    .where(
        MOVES.c.board_id == bindparam("board_id"), MOVES.c.number > bindparam("after"),
        MOVES.c.number <= bindparam("upto"),
    )
    .order_by(MOVES.c.number)
)
_RECORD_MOVE = Prepared(insert(MOVES))
_REMOVE_MOVES_AFTER = delete(MOVES).where(MOVES.c.board_id == bindparam("board_id"), MOVES.c.number > bindparam("number"))
_QUEUED = Prepared(
    select(*(QUEUED.c[name] for name in QueuedRecord._fields)).where(QUEUED.c.board_id == bindparam("board_id"))
)
_UNQUEUE = delete(QUEUED).where(QUEUED.c.id == bindparam("queued_id"))
_CLEAR_QUEUE = delete(QUEUED).where(QUEUED.c.board_id == bindparam("board_id"))
_QUEUED_FOR_SEAT = Prepared(
    select(QUEUED.c.id, QUEUED.c.text).where(QUEUED.c.board_id == bindparam("board_id"), QUEUED.c.seat == bindparam("seat"))
)
_QUEUE = Prepared(insert(QUEUED))
_REQUEUE = Prepared(
    update(QUEUED).where(QUEUED.c.id == bindparam("queued_id")).values(text=bindparam("text"), created_at=bindparam("created_at"))
)
_ACCOUNT = Prepared(
    select(*(USERS.c[f.name] for f in fields(Account))).where(USERS.c.userid == bindparam("userid"))
)


# -- boards ----------------------------------------------------------------------
def find_board(connection: Connection, game_type: str, number: int, *, lock: bool = False) -> BoardRecord | None:
    """The board, locked against other writers until the transaction ends with `lock`."""
    rows = (_FIND_LOCKED if lock else _FIND).rows(connection, {"game_type": game_type, "number": number})
    return BoardRecord(*rows[0]) if rows else None


def _boards(connection: Connection, *criteria: ColumnElement[bool], lock: bool = False,
            order_by: tuple[ColumnElement[Any], ...] = (BOARDS.c.game_type, BOARDS.c.board)) -> list[BoardRecord]:
    query = select(*_BOARD_COLUMNS).where(*criteria).order_by(*order_by)
    return [BoardRecord(*row) for row in connection.execute(query.with_for_update() if lock else query)]


def all_boards(connection: Connection, game_type: str | None = None) -> list[BoardRecord]:
    """Every board (of one game type, if given), by game type and number."""
    return _boards(connection, *([BOARDS.c.game_type == game_type] if game_type is not None else []))


def running_boards(connection: Connection, game_type: str | None = None, *, lock: bool = False) -> list[BoardRecord]:
    """The boards in play (of one game type, if given), by game type and number."""
    criteria = [BOARDS.c.status == "active"] + ([BOARDS.c.game_type == game_type] if game_type is not None else [])
    return _boards(connection, *criteria, lock=lock)


def boards_in_game(connection: Connection, game_type: str, status: str | None = None) -> list[BoardRecord]:
    """The game type's boards (those with the status, if given: active or finished), by number."""
    criteria = [BOARDS.c.game_type == game_type] + ([BOARDS.c.status == status] if status is not None else [])
    return _boards(connection, *criteria)


def finished_boards(connection: Connection, game_type: str) -> list[BoardRecord]:
    """The game type's finished boards, the last to end first."""
    criteria = (BOARDS.c.game_type == game_type, BOARDS.c.status == "finished")
    return _boards(connection, *criteria, order_by=(BOARDS.c.updated_at.desc(), BOARDS.c.board.desc()))


def running_board_ids(connection: Connection) -> list[int]:
    """The ids of the running boards, by game type and number."""
    return list(connection.scalars(
        select(BOARDS.c.id).where(BOARDS.c.status == "active").order_by(BOARDS.c.game_type, BOARDS.c.board)
    ))


def running_boards_seating(connection: Connection, prefix: str) -> list[BoardRecord]:
    """The running boards with a player whose userid starts with `prefix`
    (and perhaps some more: the seats are matched as JSON text)."""
    seats = cast(BOARDS.c.seats, String)
    return _boards(connection, BOARDS.c.status == "active", seats.like(f'%"{prefix}%'))


def running_boards_of_all(connection: Connection, userids: Sequence[str]) -> list[BoardRecord]:
    """The running boards on which each of `userids` has a seat."""
    seats = cast(BOARDS.c.seats, String)
    boards = _boards(connection, BOARDS.c.status == "active", *(seats.like(f'%"{userid}"%') for userid in userids))
    return [board for board in boards if all(userid in board.seats for userid in userids)]  # LIKE's '_' is any character


def running_boards_among(connection: Connection, board_ids: list[int]) -> list[BoardRecord]:
    """Those of the boards that are still running, locked until the transaction ends."""
    return _boards(connection, BOARDS.c.id.in_(board_ids), BOARDS.c.status == "active", lock=True)


def newest_board_number(connection: Connection, game_type: str) -> int | None:
    return connection.scalar(select(func.max(BOARDS.c.board)).where(BOARDS.c.game_type == game_type))


def insert_board(connection: Connection, **values: Any) -> BoardRecord:
    """A new board row (version 1) from every column but `id` and `version`."""
    values = {"version": 1, "nagged_at": None, "proposal": None, **values}
    key = connection.execute(_INSERT_BOARD, values).inserted_primary_key
    assert key is not None
    return BoardRecord(id=key[0], **values)


def save_board(connection: Connection, board: BoardRecord) -> BoardRecord:
    """Write the changeable columns back, if the row is still the version
    that was read (a second writer's change raises StaleDataError: on
    PostgreSQL the board is read FOR UPDATE, so that would be a bug); the
    record as written, its next version."""
    written = _SAVE_BOARD.run(connection, {
        **{name: getattr(board, name) for name in CHANGEABLE},
        "board_id": board.id, "old_version": board.version, "new_version": board.version + 1,
    })
    if written != 1:
        raise StaleDataError(f"board {board.id} changed under this command (version {board.version})")
    return replace(board, version=board.version + 1)


# -- moves -----------------------------------------------------------------------
def board_moves(connection: Connection, board_id: int, upto: int | None = None) -> list[MoveRecord]:
    """The board's moves in order (the first `upto` of them, if given)."""
    if upto is None:
        return [MoveRecord(*row) for row in _MOVES.rows(connection, {"board_id": board_id})]
    return [MoveRecord(*row) for row in _FIRST_MOVES.rows(connection, {"board_id": board_id, "upto": upto})]


def recent_moves(connection: Connection, board_id: int, move_count: int, count: int) -> list[MoveRecord]:
    """The last `count` of the board's first `move_count` moves, in order."""
    rows = _RECENT_MOVES.rows(connection, {"board_id": board_id, "after": move_count - count, "upto": move_count})
    return [MoveRecord(*row) for row in rows]


def played_moves(connection: Connection, board_id: int, upto: int) -> list[tuple[int, str]]:
    """The seat and text of the board's first `upto` moves in order: all that replaying them needs."""
    return [(seat, text) for seat, text in _PLAYED.rows(connection, {"board_id": board_id, "upto": upto})]


def record_moves(connection: Connection, board_id: int, moves: Sequence[MoveRecord]) -> None:
    for move in moves:
        _RECORD_MOVE.run(connection, {"board_id": board_id, **move._asdict()})


def remove_moves_after(connection: Connection, board_id: int, number: int) -> None:
    """Delete the board's moves numbered above `number` (moves taken back)."""
    connection.execute(_REMOVE_MOVES_AFTER, {"board_id": board_id, "number": number})


def queued_moves(connection: Connection, board_id: int) -> list[QueuedRecord]:
    return [QueuedRecord(*row) for row in _QUEUED.rows(connection, {"board_id": board_id})]


def queue_move(connection: Connection, board_id: int, seat: int, text: str, now: datetime) -> str | None:
    """Keep `text` as the seat's queued move; returns the text of the one it replaces, if any."""
    found = _QUEUED_FOR_SEAT.rows(connection, {"board_id": board_id, "seat": seat})
    if not found:
        _QUEUE.run(connection, {"board_id": board_id, "seat": seat, "text": text, "created_at": now})
        return None
    [(queued_id, earlier)] = found
    _REQUEUE.run(connection, {"queued_id": queued_id, "text": text, "created_at": now})
    return earlier


def unqueue(connection: Connection, queued_id: int) -> None:
    connection.execute(_UNQUEUE, {"queued_id": queued_id})


def clear_queue(connection: Connection, board_id: int) -> None:
    connection.execute(_CLEAR_QUEUE, {"board_id": board_id})


# -- accounts --------------------------------------------------------------------
def find_account(connection: Connection, userid: str) -> Account | None:
    rows = _ACCOUNT.rows(connection, {"userid": userid})
    return Account(*rows[0]) if rows else None


#: the most userids one query of `confirmed_addresses` names
MOST_USERIDS_A_QUERY = 512


@cache
def _confirmed_addresses(count: int) -> Prepared:
    """The query for `count` userids. An expanding IN would make its SQL anew
    for each execution, which cannot be prepared; one bind per userid can."""
    userids: list[BindParameter[str]] = [bindparam(f"userid_{number}") for number in range(count)]
    return Prepared(
        select(USERS.c.userid, ADDRESSES.c.address)
        .join(USERS, ADDRESSES.c.user_id == USERS.c.id)
        .where(USERS.c.userid.in_(userids), ADDRESSES.c.confirmed_at.is_not(None))
        .order_by(ADDRESSES.c.position)
    )


def confirmed_addresses(connection: Connection, userids: list[str] | tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """Each user's confirmed addresses, in their order (a user without any,
    or unknown: none), in one query for up to MOST_USERIDS_A_QUERY users. The
    userids are padded to a power of two by repeating the last one, so that
    a few statements serve every number of users."""
    found: dict[str, list[str]] = {userid: [] for userid in userids}
    wanted = list(found)
    for start in range(0, len(wanted), MOST_USERIDS_A_QUERY):
        group = wanted[start:start + MOST_USERIDS_A_QUERY]
        size = 1 << (len(group) - 1).bit_length()
        padded = group + group[-1:] * (size - len(group))
        params = {f"userid_{number}": userid for number, userid in enumerate(padded)}
        for userid, address in _confirmed_addresses(size).rows(connection, params):
            found[userid].append(address)
    return {userid: tuple(addresses) for userid, addresses in found.items()}
