"""A board as the service handles it: `Board`, the game, the board's frozen
record and its state, decoded once.

Every change to a board is an operation of `Board` that returns the
changed board: a move played, a server move recorded (resign, forfeit), the
result, a proposal made or answered, moves taken back, a reminder sent.
Nothing else sets a record's state, move count or result (`tests/test_layout`
holds to it). `save` writes a changed board in one place: the record's
changeable columns (one version-guarded UPDATE), the moves taken back and
the moves recorded since it was read, and an ended board's queued moves
cleared. The board mails are composed after it, from what is written.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from pbmserv.gamekit import Game, Outcome
from pbmserv.service.play import replays, views
from pbmserv.service.processing.errors import ServiceError
from pbmserv.store import records
from pbmserv.store.handles import Connection
from pbmserv.store.records import BoardRecord, MoveRecord


@dataclass(frozen=True, eq=False)
class Board:
    """A board and what was done to it since it was read, not written yet."""

    game: Game
    record: BoardRecord
    state: Any
    #: moves recorded since the board was read, written by `save`
    new_moves: tuple[MoveRecord, ...] = ()
    #: the moves numbered above this were taken back since the board was read (None: none)
    kept_moves: int | None = None
    #: the board ended since it was read: `save` clears its queued moves
    ended: bool = False

    @classmethod
    def of(cls, game: Game, record: BoardRecord) -> Board:
        return cls(game, record, game.decode(record.state))

    @property
    def outcome(self) -> Outcome | None:
        """How the game has ended, if the state says it has (the record may not say so yet)."""
        return self.game.outcome(self.state)

    def play(self, seat: int, text: str, now: datetime, comment: str, *, auto: bool = False) -> Board:
        """The board after `seat`'s move `text`, read once into the game's
        own value and applied; raises IllegalMove and then changes nothing."""
        move = self.game.read_move(self.state, seat, text)
        state = self.game.apply(self.state, seat, move)
        return self._recorded(seat, str(move), move.secret, now, comment, auto=auto, state=state)

    def server_move(self, seat: int, text: str, now: datetime, comment: str) -> Board:
        """The board with a move the server records and the game never sees (`replays.SERVER_MOVES`)."""
        return self._recorded(seat, text, False, now, comment, auto=False)

    def _recorded(
        self, seat: int, text: str, secret: bool, now: datetime, comment: str, *, auto: bool, state: Any = None,
    ) -> Board:
        """The board with the move recorded as the next; with `state`, the state it leads to."""
        number = self.record.move_count + 1
        move = MoveRecord(number, seat, text, secret, auto, now, comment)
        # an open draw offer or undo request lapses with any move
        changes: dict[str, Any] = {"move_count": number, "updated_at": now, "proposal": None}
        if state is not None:
            changes["state"] = self.game.encode(state)
        return replace(
            self, record=replace(self.record, **changes), state=self.state if state is None else state,
            new_moves=(*self.new_moves, move),
        )

    def finish(self, winners: list[int], scores: list[Any] | None, reason: str, rating: dict[str, Any]) -> Board:
        """The board is over: its result, with what it did to the players'
        ratings (`ratings.finish` works it out: `ratings` or `unrated`)."""
        result = {"winners": winners, "scores": scores, "reason": reason, **rating}
        record = replace(self.record, status="finished", proposal=None, result=result)
        return replace(self, record=record, ended=True)

    def propose(self, proposal: dict[str, Any], now: datetime) -> Board:
        """A new proposal open on the board (a change of the board a bot's mail names, `bot_turns.Turn.key`)."""
        return replace(self, record=replace(self.record, proposal=proposal, updated_at=now))

    def with_proposal(self, proposal: dict[str, Any] | None) -> Board:
        """The open proposal as the players' answers leave it: accepted by one more, or gone."""
        return replace(self, record=replace(self.record, proposal=proposal))

    def take_back(self, first: int, state: Any, now: datetime) -> Board:
        """The board with move `first` and every move after it taken back; `state` is where the moves before lead."""
        kept = first - 1
        record = replace(self.record, move_count=kept, state=self.game.encode(state), updated_at=now)
        return replace(
            self, record=record, state=state, new_moves=tuple(move for move in self.new_moves if move.number <= kept),
            kept_moves=kept if self.kept_moves is None else min(kept, self.kept_moves),
        )

    def nagged(self, now: datetime) -> Board:
        return replace(self, record=replace(self.record, nagged_at=now))


def create(
    connection: Connection, game: Game, number: int, options: dict[str, Any], timers: dict[str, Any], seats: list[str],
    state: Any, now: datetime,
) -> Board:
    """A new board, written, with no move made."""
    record = records.insert_board(
        connection, game_type=game.name, board=number, options=options, timers=timers, seats=seats,
        state=game.encode(state), move_count=0, status="active", result=None, created_at=now, updated_at=now,
    )
    return Board(game, record, state)


def load(connection: Connection, game: Game, number: int, *, lock: bool = False) -> Board:
    """The board, locked against other writers until the transaction ends with `lock`."""
    record = records.find_board(connection, game.name, number, lock=lock)
    if record is None:
        raise ServiceError(
            f"There is no {game.title} board {number}.",
            f"'{game.name} games' lists the boards in play",
            game=game.name,
        )
    return Board.of(game, record)


def save(connection: Connection, board: Board) -> Board:
    """Write what changed on the board; the board as written (its record's next version, nothing left to write)."""
    record = records.save_board(connection, board.record)
    if board.kept_moves is not None:
        records.remove_moves_after(connection, record.id, board.kept_moves)
    records.record_moves(connection, record.id, board.new_moves)
    if board.ended:
        records.clear_queue(connection, record.id)
    return Board(board.game, record, board.state)


def played_moves(connection: Connection, board: Board) -> list[tuple[int, str]]:
    """The seat and text of every move on the board, those not saved yet included."""
    stored = board.record.move_count - len(board.new_moves)
    return records.played_moves(connection, board.record.id, stored) + [(move.seat, move.text) for move in board.new_moves]


# -- a board's earlier positions ---------------------------------------------------
def replay(game: Game, record: BoardRecord, moves: list[MoveRecord]) -> Any:
    """The state after `moves` (the board's first moves), from the latest state kept on the way (`replays`)."""
    return replays.replay(game, record, [(move.seat, move.text) for move in moves])


def position(connection: Connection, board: Board, at: int | None) -> tuple[Any, list[MoveRecord]]:
    """The state after move `at` (as it stands when None) and the moves that led there."""
    moves = records.board_moves(connection, board.record.id, at)
    if at is None or at == board.record.move_count:
        return board.state, moves
    return replay(board.game, board.record, moves), moves


def listed_position(connection: Connection, board: Board, at: int | None) -> tuple[Any, list[MoveRecord]]:
    """The state after move `at` (as it stands when None) and the last of
    the moves that led there, as many as a move list shows: a long game's
    whole history is not loaded to be left out (a replay reads only who
    played what)."""
    record = board.record
    if at is None or at == record.move_count:
        state, at = board.state, record.move_count
    else:
        state = replays.replay(board.game, record, records.played_moves(connection, record.id, at))
    return state, records.recent_moves(connection, record.id, at, views.MOST_LISTED_MOVES)


# -- checks ------------------------------------------------------------------------
def playing_seat(board: Board, userid: str) -> int:
    record = board.record
    if userid not in record.seats:
        raise ServiceError(
            f"{userid} is not a player on {board.game.title} board {record.board}.",
            f"'{board.game.name} show {record.board}' shows who plays there",
            game=board.game.name, board=record.board,
        )
    return record.seats.index(userid)


def check_running(board: Board) -> None:
    game, record = board.game, board.record
    if record.result is not None:
        raise ServiceError(
            f"{game.title} board {record.board} is over. {views.status_line(game, record, board.state)}",
            f"start a new game with '{game.name} challenge'",
            game=game.name, board=record.board,
        )
