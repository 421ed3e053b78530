"""Open challenges (`GAME open`), as records: posted, listed, taken or
withdrawn (deleted), and expired."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, delete, func, insert, select

from pbmserv.store.models import OpenChallenge
from pbmserv.store.records import USERS

OPEN_CHALLENGES = OpenChallenge.__table__


@dataclass(frozen=True)
class OpenRecord:
    """An open challenge; `number` is its id, `userid` its poser's."""

    number: int
    game_type: str
    userid: str
    options: dict[str, Any]
    timers: dict[str, Any]
    created_at: datetime


_COLUMNS = (
    OPEN_CHALLENGES.c.id, OPEN_CHALLENGES.c.game_type, USERS.c.userid, OPEN_CHALLENGES.c.options,
    OPEN_CHALLENGES.c.timers, OPEN_CHALLENGES.c.created_at,
)
_JOINED = select(*_COLUMNS).join(USERS, USERS.c.id == OPEN_CHALLENGES.c.user_id).order_by(OPEN_CHALLENGES.c.id)


def post(
    connection: Connection, game_type: str, user_id: int, options: dict[str, Any], timers: dict[str, Any], now: datetime,
) -> int:
    """Store a new open challenge; returns its number."""
    values = {"game_type": game_type, "user_id": user_id, "options": options, "timers": timers, "created_at": now}
    return int(connection.execute(insert(OPEN_CHALLENGES).values(values).returning(OPEN_CHALLENGES.c.id)).scalar_one())


def find(connection: Connection, game_type: str, number: int) -> OpenRecord | None:
    query = _JOINED.where(OPEN_CHALLENGES.c.game_type == game_type, OPEN_CHALLENGES.c.id == number)
    row = connection.execute(query).first()
    return None if row is None else OpenRecord(*row)


def in_game(connection: Connection, game_type: str) -> list[OpenRecord]:
    """The open challenges of the game type, oldest first."""
    return [OpenRecord(*row) for row in connection.execute(_JOINED.where(OPEN_CHALLENGES.c.game_type == game_type))]


def count_of(connection: Connection, game_type: str, user_id: int) -> int:
    """How many open challenges of the game type the user has posted."""
    query = select(func.count()).where(OPEN_CHALLENGES.c.game_type == game_type, OPEN_CHALLENGES.c.user_id == user_id)
    return int(connection.execute(query).scalar_one())


def posted_before(connection: Connection, moment: datetime) -> list[OpenRecord]:
    """The open challenges of every game type posted before `moment`, oldest first."""
    return [OpenRecord(*row) for row in connection.execute(_JOINED.where(OPEN_CHALLENGES.c.created_at < moment))]


def remove(connection: Connection, number: int) -> None:
    connection.execute(delete(OPEN_CHALLENGES).where(OPEN_CHALLENGES.c.id == number))
