"""What the web site reads that no command does: the boards that ended
last, a player's boards of every game, a player's ratings. Only reads;
the site's engine is read-only besides (`database.make_engine`)."""

from __future__ import annotations

from dataclasses import dataclass, fields

from sqlalchemy import Connection, String, bindparam, cast, select

from pbmserv.store.following import RATINGS, RatingRecord
from pbmserv.store.prepared import Prepared
from pbmserv.store.records import BOARDS, USERS, BoardRecord
from pbmserv.store.users import VACATION_COLUMNS, VACATIONS, VacationRecord

_BOARD_COLUMNS = [BOARDS.c[f.name] for f in fields(BoardRecord)]
_RATING_COLUMNS = [RATINGS.c[f.name] for f in fields(RatingRecord)]
#: an account's id, its rating in a game and its vacations, a row for each vacation (or one with none)
_SEAT = Prepared(
    select(USERS.c.id, RATINGS.c.rating, *VACATION_COLUMNS)
    .outerjoin(RATINGS, (RATINGS.c.user_id == USERS.c.id) & (RATINGS.c.game_type == bindparam("game_type")))
    .outerjoin(VACATIONS, VACATIONS.c.user_id == USERS.c.id)
    .where(USERS.c.userid == bindparam("userid"))
    .order_by(VACATIONS.c.started_at)
)


@dataclass(frozen=True)
class Seat:
    """What a board page shows of one of its players that changes apart
    from the board: their rating in its game (which their other boards
    change) and their vacations (which stop their clock)."""

    user_id: int | None  # None: no account of that name (a bot's seat)
    rating: int | None  # None: not rated in the game yet
    vacations: tuple[VacationRecord, ...]


def seat(connection: Connection, game_type: str, userid: str) -> Seat:
    """Player `userid`'s facts for a board of `game_type`, in one prepared read."""
    rows = _SEAT.rows(connection, {"game_type": game_type, "userid": userid})
    if not rows:
        return Seat(None, None, ())
    user_id, rating = rows[0][:2]
    return Seat(user_id, rating, tuple(VacationRecord(*row[2:]) for row in rows if row[2] is not None))


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

