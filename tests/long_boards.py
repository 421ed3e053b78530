"""Long boards made fast: a seeded random game of Move In Synch, In
Opposition on the 26x26 board, its moves written straight into the
tables as the server would have written them one mail at a time."""

from __future__ import annotations

import random
from dataclasses import replace

from pbmserv.runtime import Runtime
from pbmserv.store import records
from tests.mailtools import send

#: a random game on 26x26 with this seed lasts 7,196 moves
SEED = 3


def long_synch_board(runtime: Runtime, moves: int, challenger: str = "alice", opponent: str = "bob") -> int:
    """A new synch board (-size=26) between two signed-up players, with
    `moves` random moves played on it; its number."""
    send(runtime, f"{challenger}@example.org", f"synch challenge -size=26 {challenger} {opponent}")
    assert runtime.catalog is not None
    game = runtime.catalog.get("synch")
    rng = random.Random(SEED)
    with runtime.engine.begin() as connection:
        number = records.newest_board_number(connection, "synch")
        assert number is not None, "the challenge made the board"
        board = records.find_board(connection, "synch", number, lock=True)
        assert board is not None and board.move_count == 0
        state = game.decode(board.state)
        played = []
        for count in range(1, moves + 1):
            [seat] = game.to_move(state)
            move = game.read_move(state, seat, rng.choice(game.legal_moves(state, seat)))
            state = game.apply(state, seat, move)
            played.append(records.MoveRecord(count, seat, str(move), False, False, runtime.clock(), ""))
        records.record_moves(connection, board.id, played)
        records.save_board(connection, replace(board, state=game.encode(state), move_count=moves))
    return number
