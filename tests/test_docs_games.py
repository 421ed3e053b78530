"""The whole game in docs/games.md runs as it stands and keeps the contract."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pbmserv.gamekit import Game, IllegalMove
from tests.game_invariants import check_random_game

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "games.md"


def _nim() -> Game:
    [source] = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), re.S)
    namespace: dict[str, object] = {}
    exec(compile(source, str(GUIDE), "exec"), namespace)
    nim = namespace["Nim"]
    assert isinstance(nim, type) and issubclass(nim, Game)
    return nim()


def test_the_guide_s_game_plays_to_the_end_and_keeps_the_contract() -> None:
    for seed in range(20):
        check_random_game(_nim(), {"heap": "12"}, seed)


def test_the_guide_s_game_reads_a_move_once_into_a_value_that_prints_canonically() -> None:
    nim = _nim()
    state = nim.new({"heap": "5"}, ["alice", "bob"])
    move = nim.read_move(state, 0, "  TAKE   3 ")
    assert (str(move), move.secret) == ("take 3", False)
    assert nim.read_move(state, 0, str(move)) == move
    assert str(nim.read_move(state, 0, "Take 3")) == "take 3"
    after = nim.apply(state, 0, move)
    assert after == nim.play(state, 0, "take 3")
    assert nim.to_move(after) == {1}
    with pytest.raises(IllegalMove, match="Only 2 counters are left"):
        nim.read_move(after, 1, "take 3")
