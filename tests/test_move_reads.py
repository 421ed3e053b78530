"""The service reads a move once: one `read_move`, one `decode` of the board
and one `apply` for a move mail; the move list keeps the value's text."""

from __future__ import annotations

from collections import Counter
from typing import Any

from pbmserv.runtime import Runtime
from pbmserv.service.processing.catalog import Catalog
from tests.mailtools import body, send, signup
from tests.toygame import Toy, ToyMove, ToyState


class CountingToy(Toy):
    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()

    def read_move(self, state: ToyState, seat: int, text: str) -> ToyMove:
        self.calls["read_move"] += 1
        return super().read_move(state, seat, text)

    def apply(self, state: ToyState, seat: int, move: ToyMove) -> ToyState:
        self.calls["apply"] += 1
        return super().apply(state, seat, move)

    def decode(self, data: Any) -> ToyState:
        self.calls["decode"] += 1
        return super().decode(data)


def test_a_move_mail_reads_the_move_and_the_board_once(runtime: Runtime) -> None:
    toy = CountingToy()
    runtime.processor.catalog = Catalog([toy])
    signup(runtime, "alice", "secret1")
    signup(runtime, "bob", "secret2")
    send(runtime, "alice@example.org", "toy challenge alice bob -secret")
    send(runtime, "alice@example.org", "toy move 101 alice secret1 Bonus  C3")
    toy.calls.clear()

    replies = send(runtime, "bob@example.org", "toy move 101 bob secret2 BONUS a1")

    assert toy.calls == {"read_move": 1, "decode": 1, "apply": 1}
    assert "bonus a1" in body(dict(replies)["bob@example.org"])
    assert "bonus a1" not in body(dict(replies)["alice@example.org"]), "a secret move is shown as (secret) to others"
