"""The commands a player can mail, as typed values."""

from __future__ import annotations

from dataclasses import dataclass

MASK = "********"


@dataclass(frozen=True)
class Command:
    """A command read from a mail."""


# -- global commands --------------------------------------------------------
@dataclass(frozen=True)
class Help(Command):
    topic: tuple[str, ...] = ()


@dataclass(frozen=True)
class Signup(Command):
    userid: str
    password: str
    addresses: tuple[str, ...] = ()


@dataclass(frozen=True)
class ChangePassword(Command):
    userid: str
    password: str
    new_password: str


@dataclass(frozen=True)
class ChangeAddress(Command):
    userid: str
    password: str
    addresses: tuple[str, ...] = ()


@dataclass(frozen=True)
class Signoff(Command):
    userid: str
    password: str


@dataclass(frozen=True)
class ListGames(Command):
    games: tuple[str, ...] = ()


# -- per-game commands ------------------------------------------------------
@dataclass(frozen=True)
class GameCommand(Command):
    game: str


@dataclass(frozen=True)
class GameHelp(GameCommand):
    pass


@dataclass(frozen=True)
class Challenge(GameCommand):
    userids: tuple[str, ...]
    options: tuple[tuple[str, str | None], ...] = ()
    timers: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class Move(GameCommand):
    board: int
    userid: str
    password: str
    move: str
    guard: int | None = None


@dataclass(frozen=True)
class Resign(GameCommand):
    board: int
    userid: str
    password: str
    guard: int | None = None


@dataclass(frozen=True)
class BoardRef:
    board: int
    at_move: int | None = None  # `show 101#12`: the board as it was after move 12

    def __str__(self) -> str:
        return f"{self.board}" if self.at_move is None else f"{self.board}#{self.at_move}"


@dataclass(frozen=True)
class ShowBoards(GameCommand):
    boards: tuple[BoardRef, ...]


#: which of a user's boards `show uid ...` and `games uid ...` mean
BOARD_FILTERS = ("active", "inactive", "next", "all")


@dataclass(frozen=True)
class ShowUsers(GameCommand):
    userids: tuple[str, ...]
    which: str = "active"


@dataclass(frozen=True)
class ListBoards(GameCommand):
    userids: tuple[str, ...] = ()
    which: str = "active"
