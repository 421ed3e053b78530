"""The Board value (issue 36): its operations return a changed board and
leave the one they were called on as it was; `board.save` writes what
changed, and nothing is written before it."""

from __future__ import annotations

import dataclasses

import pytest

from pbmserv.gamekit import Game, IllegalMove
from pbmserv.runtime import Runtime
from pbmserv.service.play.board import load, save
from pbmserv.store import records


def _toy(runtime: Runtime) -> Game:
    assert runtime.catalog is not None
    return runtime.catalog.get("toy")


def test_a_move_is_a_new_board_written_by_save_alone(toy_boards: Runtime) -> None:
    game = _toy(toy_boards)
    with toy_boards.engine.begin() as connection:
        board = load(connection, game, 101, lock=True)  # alice played b2; bob is to move
        played = board.play(1, "a1", toy_boards.clock(), "your turn")
        assert (board.record.move_count, played.record.move_count) == (1, 2)
        assert [(move.number, move.seat, move.text, move.comment) for move in played.new_moves] == [(2, 1, "a1", "your turn")]
        assert played.state != board.state and played.record.state == game.encode(played.state)
        assert len(records.board_moves(connection, board.record.id)) == 1, "nothing is written before save"

        saved = save(connection, played)
        assert saved.record.version == board.record.version + 1 and saved.new_moves == ()
        assert [move.text for move in records.board_moves(connection, board.record.id)] == ["b2", "a1"]
        stored = records.find_board(connection, "toy", 101)
        assert stored is not None and (stored.state, stored.move_count) == (played.record.state, 2)


def test_an_illegal_move_changes_nothing(toy_boards: Runtime) -> None:
    with toy_boards.engine.begin() as connection:
        board = load(connection, _toy(toy_boards), 101)
        with pytest.raises(IllegalMove):
            board.play(1, "b2", toy_boards.clock(), "")  # alice's square
        assert board.record.move_count == 1 and board.new_moves == ()


def test_the_record_is_changed_by_replacing_it(toy_boards: Runtime) -> None:
    with toy_boards.engine.begin() as connection:
        board = load(connection, _toy(toy_boards), 101)
        with pytest.raises(dataclasses.FrozenInstanceError):
            board.record.move_count = 5  # type: ignore[misc]


def test_moves_taken_back_are_deleted_when_saved(toy_boards: Runtime) -> None:
    game = _toy(toy_boards)
    with toy_boards.engine.begin() as connection:
        first = load(connection, game, 101, lock=True)
        board = save(connection, first.play(1, "a1", toy_boards.clock(), "").play(0, "c3", toy_boards.clock(), ""))
        assert board.record.move_count == 3
        taken_back = board.take_back(2, first.state, toy_boards.clock())
        assert (taken_back.record.move_count, taken_back.state) == (1, first.state)
        save(connection, taken_back)
        assert [move.text for move in records.board_moves(connection, board.record.id)] == ["b2"]


def test_an_ended_board_loses_its_queued_moves_when_saved(toy_boards: Runtime) -> None:
    with toy_boards.engine.begin() as connection:
        board = load(connection, _toy(toy_boards), 101, lock=True)
        records.queue_move(connection, board.record.id, 0, "c3", toy_boards.clock())
        ended = board.finish([0], None, "a test", {"unrated": "a test"})
        assert board.record.result is None and ended.record.status == "finished"
        assert records.queued_moves(connection, board.record.id) != [], "nothing is written before save"
        save(connection, ended)
        assert records.queued_moves(connection, board.record.id) == []
        stored = records.find_board(connection, "toy", 101)
        assert stored is not None and stored.result == {"winners": [0], "scores": None, "reason": "a test", "unrated": "a test"}

