"""What the web site reads that no command does: the boards that ended
last, a player's boards of every game, a player's ratings. Only reads;
the site's engine is read-only besides (`database.make_engine`)."""

from __future__ import annotations

from dataclasses import fields

from sqlalchemy import Connection, String, cast, select

from pbmserv.store.following import RATINGS, RatingRecord
from pbmserv.store.records import BOARDS, USERS, BoardRecord

_BOARD_COLUMNS = [BOARDS.c[f.name] for f in fields(BoardRecord)]
_RATING_COLUMNS = [RATINGS.c[f.name] for f in fields(RatingRecord)]


def recent_results(connection: Connection, most: int) -> list[BoardRecord]:
    """The last `most` boards to end, of every game, the last to end first."""
    query = (
        select(*_BOARD_COLUMNS).where(BOARDS.c.status == "finished")
        .order_by(BOARDS.c.updated_at.desc(), BOARDS.c.id.desc()).limit(most)
    )
    return [BoardRecord(*row) for row in connection.execute(query)]


def boards_of_player(connection: Connection, userid: str) -> list[BoardRecord]:
    """Every board, of every game, on which `userid` has a seat, the last changed first."""
    seats = cast(BOARDS.c.seats, String)
    query = select(*_BOARD_COLUMNS).where(seats.like(f'%"{userid}"%')).order_by(BOARDS.c.updated_at.desc(), BOARDS.c.id.desc())
    return [board for row in connection.execute(query) if userid in (board := BoardRecord(*row)).seats]  # LIKE's '_' is any character


def user_id_of(connection: Connection, userid: str) -> int | None:
    """The account's row id, None for no such account."""
    return connection.scalar(select(USERS.c.id).where(USERS.c.userid == userid))


def ratings_of(connection: Connection, user_id: int) -> list[RatingRecord]:
    """The account's rating in every game type it has one in, by game type."""
    query = select(*_RATING_COLUMNS).where(RATINGS.c.user_id == user_id).order_by(RATINGS.c.game_type)
    return [RatingRecord(*row) for row in connection.execute(query)]


def ratings_of_players(connection: Connection, game_type: str, userids: list[str]) -> dict[str, int]:
    """The ratings in `game_type` of those of `userids` that have one, by userid (a board's players: not the game's every rating)."""
    query = (
        select(USERS.c.userid, RATINGS.c.rating).join(USERS, USERS.c.id == RATINGS.c.user_id)
        .where(RATINGS.c.game_type == game_type, USERS.c.userid.in_(userids))
    )
    return {userid: rating for userid, rating in connection.execute(query)}
