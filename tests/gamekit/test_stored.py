"""The default stored form of a state (`pbmserv.gamekit.stored`)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from pbmserv.gamekit import from_data, to_data

Cell = tuple[int, int]


@dataclass(frozen=True)
class Last:
    seat: int
    cells: tuple[Cell, ...] = ()


@dataclass(frozen=True)
class Position:
    players: tuple[str, ...]
    board: str
    over: bool
    markers: tuple[Cell | None, Cell | None]
    last: Last | None


@dataclass(frozen=True)
class Scored:
    score: float


POSITION = Position(("alice", "bob"), "x.o", False, ((0, 1), None), Last(1, ((2, 2), (0, 0))))


def test_a_frozen_dataclass_is_stored_as_its_fields_in_order_and_read_back() -> None:
    data = to_data(POSITION)
    assert json.dumps(data) == (
        '{"players": ["alice", "bob"], "board": "x.o", "over": false, "markers": [[0, 1], null],'
        ' "last": {"seat": 1, "cells": [[2, 2], [0, 0]]}}'
    )
    assert from_data(Position, json.loads(json.dumps(data))) == POSITION
    assert from_data(Position, to_data(Position((), "", True, (None, None), None))) == Position((), "", True, (None, None), None)


def test_a_field_given_is_taken_as_it_is() -> None:
    data = to_data(POSITION) | {"board": ["a1", "c1"]}
    assert from_data(Position, data, board="x.o") == POSITION


@pytest.mark.parametrize(
    ("field", "stored"),
    [("over", 0), ("board", None), ("players", "alice"), ("markers", [[0, 1]]), ("last", {"seat": True, "cells": []})],
)
def test_data_of_another_type_than_the_field_is_refused(field: str, stored: object) -> None:
    with pytest.raises(ValueError):
        from_data(Position, to_data(POSITION) | {field: stored})


def test_a_type_without_a_default_stored_form_is_named() -> None:
    with pytest.raises(TypeError, match="float"):
        to_data(Scored(1.5))
    with pytest.raises(TypeError, match="float"):
        from_data(Scored, {"score": 1.5})


def test_a_field_added_since_takes_its_default() -> None:
    data = to_data(POSITION)
    del data["last"]["cells"]
    assert from_data(Position, data) == Position(("alice", "bob"), "x.o", False, ((0, 1), None), Last(1))
