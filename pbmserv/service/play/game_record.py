"""A board's whole game as anybody may see it, for the `record` mail and
the web site's `/GAME/BOARD/record` alike: every move with its number,
player, text and time, a secret move as `(secret)` until the game is over
(as `show` lists it), as text and as JSON
(docs/decisions/0148-game-records.md)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pbmserv.gamekit import Game
from pbmserv.service.play import views
from pbmserv.service.processing.context import as_utc
from pbmserv.store.records import BoardRecord, MoveRecord

#: what the JSON record says it is, and the version of its shape (a field added keeps it; one changed moves it on)
RECORD_FORMAT = "pbmserv game record"
RECORD_VERSION = 1


@dataclass(frozen=True)
class ListedMove:
    """A move as everybody may see it (a secret one as `(secret)` until the game is over)."""

    number: int
    player: str
    text: str
    played_at: datetime


def public_moves(game: Game, record: BoardRecord, moves: list[MoveRecord]) -> tuple[ListedMove, ...]:
    over = record.result is not None
    return tuple(
        ListedMove(move.number, record.seats[move.seat], views.move_text_for(move, None, over), move.created_at)
        for move in moves
    )


def options_text(record: BoardRecord) -> str:
    return " ".join(f"-{name}" + ("" if value is None else f"={value}") for name, value in sorted(record.options.items())) or "(none)"


def public_record(game: Game, record: BoardRecord, moves: tuple[ListedMove, ...], status: str) -> str:
    """The game record as text: the board, its options, players and result, and every move with its time."""
    lines = [
        views.title_line(game, record),
        f"Game: {game.name}    Board: {record.board}    Options: {options_text(record)}",
        f"Started: {record.created_at:%Y-%m-%d %H:%M} UTC    Moves: {record.move_count}",
        status,
        "",
        *(f"{move.number:>4}. {move.played_at:%Y-%m-%d %H:%M}  {move.player} {move.text}" for move in moves),
    ]
    return "\n".join(lines) + "\n"


def record_data(game: Game, record: BoardRecord, moves: tuple[ListedMove, ...], status: str) -> dict[str, Any]:
    """The same record for programs (the JSON attachment of a `record` mail): times in ISO 8601, UTC."""
    return {
        "format": RECORD_FORMAT, "version": RECORD_VERSION,
        "game": game.name, "title": game.title, "board": record.board,
        "options": {name: True if value is None else value for name, value in sorted(record.options.items())},
        "players": players_data(game, record),
        "started_at": as_utc(record.created_at).isoformat(),
        "status": status,
        "result": result_data(record),
        "move_count": record.move_count,
        "moves": moves_data(moves),
    }


def players_data(game: Game, record: BoardRecord) -> list[dict[str, str]]:
    return [
        {"userid": userid, "side": game.side_names[seat] if seat < len(game.side_names) else ""}
        for seat, userid in enumerate(record.seats)
    ]


def result_data(record: BoardRecord) -> dict[str, Any] | None:
    result = record.result
    return None if result is None else {
        "winners": [record.seats[seat] for seat in result["winners"]], "reason": result["reason"],
        "scores": result.get("scores"),
    }


def moves_data(moves: tuple[ListedMove, ...]) -> list[dict[str, Any]]:
    return [
        {"number": move.number, "player": move.player, "text": move.text, "played_at": as_utc(move.played_at).isoformat()}
        for move in moves
    ]
