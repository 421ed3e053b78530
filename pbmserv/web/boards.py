"""A board as the site shows it: the public view of its position after
any number of its moves, its public move list, its players and what
waits for them. Plain functions over a read-only connection; the
handlers (`web.routes`) only lay them out.

Every position is the game's `draw(state, None)`, the public drawing,
and every move list shows a secret move as `(secret)` until the game is
over, as `show` does: nothing here is any player's own view.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pbmserv.gamekit import Drawing, Game
from pbmserv.service.bots.seats import is_bot
from pbmserv.service.play import replays, views
from pbmserv.service.play.deadlines import Deadline, deadline
from pbmserv.service.play.game_record import ListedMove, public_moves
from pbmserv.service.processing.catalog import Catalog
from pbmserv.service.processing.context import as_utc
from pbmserv.store import records, site
from pbmserv.store.handles import Connection
from pbmserv.store.records import BoardRecord


class NotFound(Exception):
    """What a page asked for is not there; the message says what is, for the 404 page."""


@dataclass(frozen=True)
class BoardLine:
    """A board in a list: its game, number, players and state in a few words."""

    game: str
    title: str
    board: int
    players: tuple[str, ...]
    status: str
    moves: int
    updated_at: datetime
    running: bool


@dataclass(frozen=True)
class SeatLine:
    """A player of a board: their side, their rating in the game (None: not rated yet), whether they are to move."""

    userid: str
    side: str
    rating: int | None
    to_move: bool


@dataclass(frozen=True)
class Position:
    """A board's public position after its first `at` moves."""

    game: Game
    record: BoardRecord
    at: int
    state: Any
    drawing: Drawing

    @property
    def text(self) -> str:
        """The public text board (`Game.render` of the same drawing)."""
        return self.game.text(self.drawing).rstrip("\n")

    @property
    def latest(self) -> bool:
        return self.at == self.record.move_count

    @property
    def to_move(self) -> list[str]:
        """Who is to move in this position (nobody once the board is over)."""
        if self.record.result is not None and self.latest:
            return []
        return views.to_move_names(self.game, self.record, self.state)

    @property
    def status(self) -> str:
        """How a finished board ended, at its last position; else whose turn it is."""
        if self.latest:
            return views.status_line(self.game, self.record, self.state)
        return f"It is {views.names_and([name + chr(39) + 's' for name in self.to_move])} turn."  # as status_line words it


@dataclass(frozen=True)
class BoardView:
    """All the board page shows."""

    position: Position
    seats: tuple[SeatLine, ...]
    moves: tuple[ListedMove, ...]
    #: what waits for the players to move, at a running board's latest position (bots have none)
    deadlines: tuple[Deadline, ...]

    @property
    def title(self) -> str:
        return views.title_line(self.position.game, self.position.record)


def shown_time(moment: datetime | None) -> str:
    """A time as the pages show it: to the minute, in UTC."""
    return f"{as_utc(moment):%Y-%m-%d %H:%M} UTC" if moment is not None else ""


def game_of(catalog: Catalog, name: str) -> Game:
    if name not in catalog:
        raise NotFound(f"This server has no game called {name!r}. The games it offers are listed on the first page.")
    return catalog.get(name)


def board_record(connection: Connection, game: Game, number: int) -> BoardRecord:
    record = records.find_board(connection, game.name, number)
    if record is None:
        raise NotFound(f"There is no {game.title} board {number}. The {game.title} page lists the boards there are.")
    return record


def checked_move(record: BoardRecord, at: int | None) -> int:
    """The position asked for, as a number of moves: the latest when None."""
    if at is None:
        return record.move_count
    if not 0 <= at <= record.move_count:
        raise NotFound(f"Board {record.board} has {record.move_count} moves, so there is no position after move {at}.")
    return at


def position(connection: Connection, game: Game, record: BoardRecord, at: int) -> Position:
    """The board's public position after its first `at` moves (0 to its move count)."""
    if at == record.move_count:
        state = game.decode(record.state)
    else:
        state = replays.replay(game, record, records.played_moves(connection, record.id, at))
    return Position(game, record, at, state, game.draw(state, None))


@dataclass(frozen=True)
class PageFacts:
    """What a board page shows that can change, read in a few small reads
    and before the page is made: the board's row, whose version moves on
    with every change of the board (its moves, an undo, a reminder, the
    end and so the secrets shown), the position asked for, the players'
    ratings (which other boards change) and what waits for them (which
    vacations and the clock change). `key` names the page: what else it
    shows is the game's, the same while the server runs."""

    record: BoardRecord
    at: int
    ratings: tuple[int | None, ...]
    #: what waits for the players to move, at a running board's latest position (bots have none)
    deadlines: tuple[Deadline, ...]

    @property
    def key(self) -> tuple[Any, ...]:
        """The facts as the page shows them: deadlines to the minute, so that the page of a minute is one page."""
        record = self.record
        times = [(d.userid, d.paused or (shown_time(d.reminder), shown_time(d.forfeit))) for d in self.deadlines]
        return (record.id, record.version, record.move_count, self.at, self.ratings, times)


def page_facts(connection: Connection, game: Game, number: int, at: int | None, now: datetime) -> PageFacts:
    """The facts of board `number`'s page at position `at` (None: the latest) at `now`."""
    record = board_record(connection, game, number)
    at = checked_move(record, at)
    seats = {userid: site.seat(connection, game.name, userid) for userid in record.seats}
    waiting: tuple[Deadline, ...] = ()
    if record.result is None and at == record.move_count:
        waiting = tuple(
            deadline(record, userid, seats[userid].vacations, now)
            for userid in views.to_move_names(game, record, game.decode(record.state))
            if seats[userid].user_id is not None and not is_bot(userid)  # a bot is never reminded nor forfeits
        )
    return PageFacts(record, at, tuple(seats[userid].rating for userid in record.seats), waiting)


def board_view(connection: Connection, game: Game, facts: PageFacts) -> BoardView:
    record = facts.record
    shown = position(connection, game, record, facts.at)
    moving = set(shown.to_move)
    seats = tuple(
        SeatLine(userid, game.side_names[seat] if seat < len(game.side_names) else "", facts.ratings[seat], userid in moving)
        for seat, userid in enumerate(record.seats)
    )
    moves = public_moves(game, record, records.board_moves(connection, record.id))
    return BoardView(shown, seats, moves, facts.deadlines)


def board_line(catalog: Catalog, record: BoardRecord) -> BoardLine | None:
    """A board in a list (None for a board of a game this server no longer offers)."""
    if record.game_type not in catalog:
        return None
    game = catalog.get(record.game_type)
    status = views.short_status(game, record, game.decode(record.state) if record.result is None else None)
    return BoardLine(
        game.name, game.title, record.board, tuple(record.seats), status, record.move_count, record.updated_at,
        record.result is None,
    )


def board_lines(catalog: Catalog, found: list[BoardRecord]) -> list[BoardLine]:
    return [line for record in found if (line := board_line(catalog, record)) is not None]
