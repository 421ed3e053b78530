"""A board's state after its first moves (`show N#k`, `preview N#k`, an
undo), rebuilt from the moves, with the work kept: the state after every
CHECKPOINT_MOVES-th move is kept in the worker's memory (`memo`), keyed by
a digest of all it follows from (the game, the board's options and seats,
each move's seat and text), so that a replay starts from the latest such
state instead of from the first move. The first `show N#3600` of a long
board replays 3,600 moves; every later one on that board, whatever its k,
at most CHECKPOINT_MOVES.

A replay within a mail checks the mail's time (`deadline`) as it goes:
past it, the command is refused, and the states reached so far are kept,
so the same command sent again goes on from there.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from pbmserv.gamekit import Game
from pbmserv.service.processing import deadline
from pbmserv.service.processing.errors import ServiceError
from pbmserv.service.processing.memo import Memo
from pbmserv.store.records import BoardRecord

#: moves the server records itself; games never see them
SERVER_MOVES = ("resign", "forfeit")
#: a state is kept after every this many moves
CHECKPOINT_MOVES = 100
#: the moves replayed between two looks at the mail's time
MOVES_BETWEEN_LOOKS = 25
#: the states kept, as their games encode them (a 26x26 synch state is 1 KB)
STATES = Memo(32_000_000)


def replay(game: Game, board: BoardRecord, moves: Sequence[tuple[int, str]]) -> Any:
    """The state after `moves`, the board's first moves in order, each as its seat and text."""
    marks = _checkpoints(game, board, moves)
    start, state = 0, None
    for done, key in reversed(marks):
        kept = STATES.get(key)
        if kept is not None:
            start, state = done, game.decode(json.loads(kept))
            break
    if state is None:
        state = game.new(board.options, board.seats)
    keys = dict(marks)
    for done, (seat, text) in enumerate(moves[start:], start=start + 1):
        if text not in SERVER_MOVES:
            state = game.play(state, seat, text)
        if done in keys:
            STATES.put(keys[done], json.dumps(game.encode(state)))
        if done % MOVES_BETWEEN_LOOKS == 0 and done < len(moves) and deadline.passed():
            raise _too_long(game, board, len(moves))
    return state


def _checkpoints(game: Game, board: BoardRecord, moves: Sequence[tuple[int, str]]) -> list[tuple[int, bytes]]:
    """The key of the state after every CHECKPOINT_MOVES-th move and after
    the last: a running digest of the game, the board's options and seats,
    and each move's seat and text (its length first: no two lists of moves
    read the same)."""
    running = hashlib.blake2b(json.dumps([game.name, board.options, board.seats], sort_keys=True).encode(), digest_size=20)
    marks = []
    for done, (seat, text) in enumerate(moves, start=1):
        running.update(f"{seat}:{len(text)}:{text}".encode())
        if done % CHECKPOINT_MOVES == 0 or done == len(moves):
            marks.append((done, running.copy().digest()))
    return marks


def _too_long(game: Game, board: BoardRecord, count: int) -> ServiceError:
    return ServiceError(
        f"Replaying the {count} moves of {game.title} board {board.board} takes more of the server's time "
        f"than one mail may have ({deadline.seconds():g} s).",
        "send the same command again in a mail of its own: what was replayed is kept, so it goes on from there",
        game=game.name, board=board.board,
    )
