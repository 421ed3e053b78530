"""Hidden information never leaks through the server (the rules `psychomachia
help` and `parliament help` give): Psychomachia's hidden stone and
Parliament's secret preferences.

A swap test. The same game is played twice through the whole server (mail
in, store, process, deliver), on two databases: run A on the test database
(PostgreSQL in CI's second half), run B on a SQLite file of its own. Every
mail is the same in both runs except one: the owner's secret set-up move
(alice hides on X in run A and on Y in run B; alice prefers the seats S in
run A and T in run B). All other moves are drawn by a seeded RNG from the
engine's `legal_moves`, leaving out the moves that touch X, Y, S or T, so the
same mail is legal in both runs. Until the first reveal in either run:

- every mail bob (the opponent) receives: board mails after either
  player's move (and after queued moves, draw offers, undo requests and
  their answers), the answers to his own `show`, `showas`, `all show`,
  `games`, `history`, `moves`, `preview` (of his moves and alice's as he
  can know them, onto her secret squares too) and `queue`, and the error
  mails of the refused commands he is made to send (wrong colour, taken or
  own hidden square/seat, out of turn, stale #n guard, malformed moves,
  set-up moves at the wrong time, wrong password, unknown board or verb,
  nothing to accept, ...);
- every mail carol, who plays no part, receives: the board mails she gets
  as a subscriber of the board, and the answers to `show BOARD`,
  `show BOARD#n`, `show USER`, `all show`, `games ...`, `history`, and to
  the commands she may not send on a board she does not play;

must be the same in both runs (Subject, text, headers but the Message-ID,
and the length of the body as delivered), the same recipients must be
mailed in both runs, and no secret square or seat label of a run appears as
a word in those mails. As a control that the comparison can see a
difference at all, the mail to bob that ends the game (a resignation, an
agreed draw, the last move) and carol's `show` after it must differ between
the runs.

The machinery is shared with proofs/leak_proof.py, which plays 1,000 such
games on every board size: tests/leak_pairs.py (the two runs),
tests/leak_match.py (one game), tests/leak_psychomachia.py and
tests/leak_parliament.py (the games' own parts).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from pbmserv.runtime import Runtime
from pbmserv.store.database import upgrade
from tests.conftest import FakeClock
from tests.leak_pairs import Pair, twin_of
from tests.leak_parliament import play_parliament
from tests.leak_psychomachia import play_psychomachia

PSYCHOMACHIA_SEEDS = range(10)
PARLIAMENT_SEEDS = range(10)


@pytest.fixture(scope="module")
def _template_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty database at the newest schema, copied for every run B."""
    path = tmp_path_factory.mktemp("leaks") / "template.db"
    upgrade(f"sqlite:///{path}")
    return path


@pytest.fixture
def twin(runtime: Runtime, tmp_path: Path, _template_database: Path) -> Iterator[Runtime]:
    """A second server like `runtime`, on a SQLite file of its own."""
    other = twin_of(runtime, _template_database, tmp_path / "run-b.db", FakeClock())
    yield other
    other.close()


@pytest.mark.parametrize("seed", PSYCHOMACHIA_SEEDS)
def test_psychomachia_hidden_stone_does_not_leak(seed: int, runtime: Runtime, twin: Runtime) -> None:
    rng = random.Random(f"psychomachia {seed}")
    match = play_psychomachia(Pair(runtime, twin, "psychomachia"), rng, {"size": "6", "stones": str(rng.randint(9, 17))})
    assert match.pair.compared >= 20 and match.pair.errors >= 3, f"only {match.pair.compared} mails compared, {match.pair.errors} errors"


@pytest.mark.parametrize("seed", PARLIAMENT_SEEDS)
def test_parliament_preferences_do_not_leak(seed: int, runtime: Runtime, twin: Runtime) -> None:
    rng = random.Random(f"parliament {seed}")
    match = play_parliament(Pair(runtime, twin, "parliament"), rng, {"boards": "upper"})
    assert match.pair.compared >= 20 and match.pair.errors >= 3, f"only {match.pair.compared} mails compared, {match.pair.errors} errors"
