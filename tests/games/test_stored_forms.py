"""The stored form of every game's state never changes: boards in
operators' databases hold it. Each literal below was encoded by the game as
it was before the default `encode`/`decode` (from random play); it must
decode and encode again to the very same text."""

from __future__ import annotations

import json

import pytest

from pbmserv.gamekit import get_game

STORED = [
    ("majorities", '{"size": 3, "players": ["alice", "bob"], "board": "1...-1.11--..-..000", "last_move": ["b3", "c2"]}'),
    (
        "majority",
        '{"players": ["alice", "bob"], "size": 6, "stones": 14, "hidden_variant": false,'
        ' "board": "W.WB...W.W..W..B.B.W..B....B........", "placed": 11, "hidden": [null, null],'
        ' "revealed_at": [null, null], "completed_at": [[null, null, null, null, null, null, null, null, null,'
        ' null, null, null], [null, null, null, null, null, null, null, null, null, 9, null, null]],'
        ' "last": [0, "place", 2]}',
    ),
    (
        "psychomachia",
        '{"players": ["alice", "bob"], "size": 6, "stones": 14, "hidden_variant": true,'
        ' "board": "WBWBWBB.BWBWWB.BWBBW.W.WW.WBW.B.B...", "placed": 26, "hidden": [35, 25],'
        ' "revealed_at": [26, null], "completed_at": [[22, null, null, 18, 24, null, 20, null, null, null, 24, 16],'
        ' [25, 19, 23, null, null, null, 19, 15, null, 25, null, null]], "last": [0, "reveal", 35]}',
    ),
    (
        "plurality",
        '{"players": ["alice", "bob"], "board": "hex", "size": 5, "ties": "neutral",'
        ' "black": ["c5", "d7", "d8", "e3", "e5", "f3", "g2", "h4"], "white": ["c7", "d1", "d5", "e2", "e4", "f6",'
        ' "g5"], "turn": 1, "passes": 0, "last_move": "c5,*d5,e5"}',
    ),
    (
        "parliament",
        '{"players": ["alice", "bob"], "boards": "upper", "preferences": [[71], [31]],'
        ' "board": "BBBBRBR.B.R...BB.B.BR.BR.BRRBB.bBRRRRRRRR.RRRRRRRRR.BRRRRRRRRBRRRRRRRRRrRRRR", "next_seat": 0,'
        ' "finished_rounds": [], "last_claimer": 1, "last_events": [["claim", 72, "B"], ["surrounded", 71, "r"],'
        ' ["flip", 64, "R"], ["flip", 70, "R"], ["flip", 72, "R"], ["flip", 73, "R"]]}',
    ),
    (
        "synch",
        '{"size": 4, "order": "mode-first", "players": ["alice", "bob"], "markers": [[0, 0], [1, 2]],'
        ' "marks": "xx......oo......", "moves_done": 1, "pending": "synch", "quiet_moves": 0,'
        ' "last": {"number": 1, "seat": 0, "direction": "w", "mode": "opposition", "start": [[1, 0], [0, 2]],'
        ' "drawn": [[1, 2], [0, 0]]}}',
    ),
    (
        "synch",
        '{"size": 8, "order": "direction-first", "players": ["alice", "bob"], "markers": [[5, 1], null],'
        ' "marks": ".............x..................................................", "moves_done": 0,'
        ' "pending": null, "quiet_moves": 0, "last": {"number": 0, "seat": 0, "direction": null, "mode": null,'
        ' "start": null, "drawn": [[5, 1]]}}',
    ),
]


@pytest.mark.parametrize(("word", "stored"), STORED)
def test_a_stored_state_reads_back_and_stores_as_it_was(word: str, stored: str) -> None:
    game = get_game(word)
    state = game.decode(json.loads(stored))
    assert json.dumps(game.encode(state)) == stored
    assert game.outcome(state) is None
    assert all(game.legal_moves(state, seat) for seat in game.to_move(state))
