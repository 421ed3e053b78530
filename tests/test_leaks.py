"""Hidden information never leaks through the server (RULES.md sections 2
and 4): Psychomachia's hidden stone and Parliament's secret preferences.

A swap test. The same game is played twice through the whole server (mail
in, store, process, deliver), on two databases: run A on the test database
(PostgreSQL in CI's second half), run B on a SQLite file of its own. Every
mail is the same in both runs except one: the owner's secret set-up move
(alice hides on X in run A and on Y in run B; alice prefers the seats S in
run A and T in run B). All other moves are drawn by a seeded RNG from the
engine's `legal_moves`, leaving out the moves that touch X, Y, S or T, so the
same mail is legal in both runs. Until the first reveal in either run:

- every mail bob (the opponent) receives: board mails after either
  player's move, the answers to his own `show`, `showas`, `all show` and
  `games`, and the error mails of the illegal moves he is made to send
  (wrong colour, taken or own hidden square/seat, out of turn, stale #n
  guard, malformed moves, set-up moves at the wrong time);
- every mail carol, who plays no part, receives: the board mails she gets
  as a subscriber of the board, and the answers to `show BOARD`,
  `show BOARD#n`, `show USER`, `all show`, `games ...` and to a move on a
  board she does not play;

must be the same in both runs (Subject and body; other headers are not
compared), the same recipients must be mailed in both runs, and no secret
square or seat label of a run appears as a word in those mails. As a
control that the comparison can see a difference at all, once alice's
secret is revealed carol's `show` must differ between the runs.

Each seed is one game: alice is White or Black (Red or Blue) at random,
the set-up comes in either order, moves are sometimes spelled in capitals,
carry a #n guard or a comment.
"""

from __future__ import annotations

import difflib
import random
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest

from games.parliament.cascade import EMPTY as EMPTY_SEAT
from pbmserv.gamekit import Game, get_game
from pbmserv.mail.backends import MemoryBackend
from pbmserv.runtime import Runtime
from pbmserv.store.database import upgrade
from tests.conftest import FakeClock
from tests.mailtools import body, make_mail, send_raw

PSYCHOMACHIA_SEEDS = range(10)
PARLIAMENT_SEEDS = range(10)

PASSWORDS = {"alice": "secret1", "bob": "secret2", "carol": "secret3"}
OBSERVERS = ("bob", "carol")
BOARD = 101
#: squares and seats the games print as fixed examples ("like e5"); kept out
#: of the secrets so that the word check below needs no exceptions for them
FIXED_EXAMPLES = frozenset({"c4", "d5", "e5", "h5"})
LABEL = re.compile(r"\b[a-z][0-9]{1,2}\b")
#: "..., like b1." — an example the game picks from the public board (the
#: parliament `Next:` line), and the example move of the line to paste at
#: the end of a board mail ("... PASSWORD b1" and "(e.g. b1)", from the
#: board and the player's own knowledge); their independence of the secret
#: is what the comparison of the two runs checks, so the word check skips them
EXAMPLE_PHRASE = re.compile(r"\b(?:like|PASSWORD|e\.g\.)\s+\S+", re.IGNORECASE)


def address(userid: str) -> str:
    return f"{userid}@example.org"


# -- the second server --------------------------------------------------------------
@pytest.fixture(scope="module")
def _template_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty database at the newest schema, copied for every run B."""
    path = tmp_path_factory.mktemp("leaks") / "template.db"
    upgrade(f"sqlite:///{path}")
    return path


@pytest.fixture
def twin(runtime: Runtime, tmp_path: Path, _template_database: Path) -> Iterator[Runtime]:
    """A second server like `runtime`, on a SQLite file of its own."""
    path = tmp_path / "run-b.db"
    shutil.copyfile(_template_database, path)
    settings = replace(runtime.settings, database_url=f"sqlite:///{path}")
    other = Runtime(settings, catalog=runtime.processor.catalog, clock=FakeClock(), backend=MemoryBackend())
    yield other
    other.close()


# -- feeding both servers, comparing what the observers get --------------------------
Delivered = list[tuple[str, EmailMessage]]


def observed(delivered: Delivered) -> list[tuple[str, str, str]]:
    return [
        (recipient, str(message["Subject"]), body(message))
        for recipient, message in delivered
        if recipient in {address(userid) for userid in OBSERVERS}
    ]


def label_words(text: str) -> set[str]:
    return set(LABEL.findall(EXAMPLE_PHRASE.sub("like", text).lower()))


@dataclass
class Pair:
    """Run A and run B, fed the same mails."""

    a: Runtime
    b: Runtime
    game: str
    #: the labels that are secret in run A and in run B
    secrets: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())
    compared: int = 0  # observer mails found equal
    errors: int = 0  # refused moves of bob's
    log: list[str] = field(default_factory=list)

    def send(self, sender: str, subject: str, text: str = "", *, subject_b: str | None = None,
             compare: bool = True) -> tuple[Delivered, Delivered]:
        for runtime in (self.a, self.b):
            assert isinstance(runtime.clock, FakeClock)
            runtime.clock.advance(minutes=10)  # under the hourly reply caps
        raw_a = make_mail(address(sender), subject, text)
        raw_b = raw_a if subject_b is None else make_mail(address(sender), subject_b, text)
        self.log.append(subject if subject_b is None else f"{subject}   |   run B: {subject_b}")
        out_a, out_b = send_raw(self.a, raw_a), send_raw(self.b, raw_b)
        if compare:
            self.check(out_a, out_b)
        return out_a, out_b

    def check(self, out_a: Delivered, out_b: Delivered) -> None:
        history = "\n".join(self.log[-12:])
        assert [r for r, _ in out_a] == [r for r, _ in out_b], (
            f"different recipients after\n{history}\nrun A: {[r for r, _ in out_a]}\n"
            f"run B: {[r for r, _ in out_b]}"
        )
        seen_a, seen_b = observed(out_a), observed(out_b)
        for run, seen, secret in (("A", seen_a, self.secrets[0]), ("B", seen_b, self.secrets[1])):
            for recipient, subject, text in seen:
                named = label_words(subject + "\n" + text) & secret
                assert not named, (
                    f"run {run}: the secret {sorted(named)} is named in a mail to {recipient} after\n"
                    f"{history}\n\nSubject: {subject}\n\n{text}"
                )
        for (recipient, subject_a, text_a), (_, subject_b, text_b) in zip(seen_a, seen_b):
            if (subject_a, text_a) != (subject_b, text_b):
                diff = "".join(difflib.unified_diff(
                    f"Subject: {subject_a}\n\n{text_a}".splitlines(keepends=True),
                    f"Subject: {subject_b}\n\n{text_b}".splitlines(keepends=True),
                    "run A", "run B",
                ))
                pytest.fail(f"the mail to {recipient} depends on the secret, after\n{history}\n\n{diff}")
        self.compared += len(seen_a)

    def expect_error(self, sender: str, subject: str) -> None:
        out_a, _ = self.send(sender, subject)
        assert [(r, str(m["Subject"]).endswith("Error")) for r, m in out_a] == [(address(sender), True)], (
            f"{subject!r} was not refused with one error mail: {[(r, m['Subject']) for r, m in out_a]}"
        )
        self.errors += 1

    def expect_move(self, sender: str, subject: str, *, text: str = "", subject_b: str | None = None,
                    compare: bool = True) -> None:
        out_a, out_b = self.send(sender, subject, text, subject_b=subject_b, compare=compare)
        for out in (out_a, out_b):
            assert out and not any(str(m["Subject"]).endswith("Error") for _, m in out), (
                f"{subject!r} was refused: {body(out[0][1]) if out else 'no mail'}"
            )

    def show_differs(self) -> bool:
        out_a, out_b = self.send("carol", f"{self.game} show {BOARD}", compare=False)
        return body(out_a[0][1]) != body(out_b[0][1])


def start(pair: Pair) -> None:
    for userid, password in PASSWORDS.items():
        pair.send(userid, f"signup {userid} {password}")


def subscribe_carol(pair: Pair) -> None:
    """carol follows the board: every board mail reaches her too (the public view)."""
    pair.send("carol", f"{pair.game} subscribe {BOARD} carol {PASSWORDS['carol']}")


def move_subject(game: str, userid: str, move: str, guard: int | None = None) -> str:
    tail = f" #{guard}" if guard is not None else ""
    return f"{game} move {BOARD} {userid} {PASSWORDS[userid]} {move}{tail}"


def spelled(rng: random.Random, move: str) -> str:
    """An equivalent spelling of a move (the server must not care)."""
    return move.upper() if rng.random() < 0.2 else move


def queries(game: str, moves_made: int) -> list[tuple[str, str]]:
    """Questions bob and carol may ask, and a move carol may not make: (sender, subject)."""
    return [
        ("carol", f"{game} move {BOARD} carol {PASSWORDS['carol']} e5"),
        ("carol", f"{game} show {BOARD}"),
        ("carol", f"{game} show {BOARD}#{moves_made}"),
        ("carol", f"{game} show {BOARD}#{max(0, moves_made - 3)}"),
        ("carol", f"{game} show alice"),
        ("carol", f"{game} show bob next"),
        ("carol", f"{game} games"),
        ("carol", f"{game} games alice next"),
        ("carol", f"{game} games all"),
        ("carol", "all show alice"),
        ("bob", f"{game} show {BOARD}"),
        ("bob", f"{game} games bob"),
        ("bob", f"{game} show {BOARD}#{max(0, moves_made - 1)}"),
        ("bob", f"{game} showas bob {PASSWORDS['bob']} {BOARD}"),
        ("bob", "all show bob next"),
    ]


def ask_something(pair: Pair, rng: random.Random, moves_made: int) -> None:
    sender, subject = rng.choice(queries(pair.game, moves_made))
    pair.send(sender, subject)


def begin(
    runtime: Runtime, twin: Runtime, game_name: str, seed: int,
) -> tuple[random.Random, Game, Pair, int, list[str], int]:
    """A run's start: its random source, the game, the two servers with the
    players signed up, alice's seat (drawn), the seats in order, bob's seat."""
    rng = random.Random(f"{game_name} {seed}")
    pair = Pair(runtime, twin, game_name)
    start(pair)
    owner = rng.randrange(2)
    players = ["alice", "bob"] if owner == 0 else ["bob", "alice"]
    return rng, get_game(game_name), pair, owner, players, 1 - owner


def turn_mail(rng: random.Random, game_name: str, userid: str, move: str, moves_made: int) -> tuple[str, str]:
    """The subject of a move mail (sometimes with the #n guard, the move
    spelled loosely) and its text (sometimes a comment)."""
    guard = moves_made + 1 if rng.random() < 0.2 else None
    comment = f"{userid} says: move {moves_made + 1}." if rng.random() < 0.1 else ""
    return move_subject(game_name, userid, spelled(rng, move), guard), comment


def common_turn(game: Game, states: list[Any], untouchable: set[str]) -> tuple[int, list[str]]:
    """The seat to move (the same in both runs) and the moves legal in both
    runs that touch none of the secrets."""
    (seat,) = game.to_move(states[0])
    assert game.to_move(states[1]) == {seat}
    theirs = set(game.legal_moves(states[1], seat))
    return seat, [m for m in game.legal_moves(states[0], seat) if m in theirs and m not in untouchable]


# -- Psychomachia ----------------------------------------------------------------------
@pytest.mark.parametrize("seed", PSYCHOMACHIA_SEEDS)
def test_psychomachia_hidden_stone_does_not_leak(seed: int, runtime: Runtime, twin: Runtime) -> None:
    rng, game, pair, owner, players, rival = begin(runtime, twin, "psychomachia", seed)  # owner: White or Black
    stones = rng.randint(9, 17)
    options = {"size": "6", "stones": str(stones)}
    states = [game.new(options, players), game.new(options, players)]
    own_squares = [m.split()[1] for m in game.legal_moves(states[0], owner)]
    rival_squares = [m.split()[1] for m in game.legal_moves(states[0], rival)]
    x, y = rng.sample([s for s in own_squares if s not in FIXED_EXAMPLES], 2)
    z = rng.choice(rival_squares)
    pair.secrets = (frozenset({x}), frozenset({y}))
    untouchable = {x, y}
    moves_made = 0
    bob_stones: list[str] = []

    def play(seat: int, text: str) -> None:
        for run in (0, 1):
            states[run] = game.play(states[run], seat, text)
        square = text.split(",")[-1]
        if seat == rival and square in rival_squares:
            bob_stones.append(square)

    def bob_errs() -> None:
        """bob sends a move the server must refuse."""
        state = states[0]
        to_move = game.to_move(state)
        wrong_colour = [s for s in own_squares if s not in untouchable]
        candidates = [
            move_subject("psychomachia", "bob", rng.choice(wrong_colour)),
            move_subject("psychomachia", "bob", f"{rng.choice(rival_squares)},{rng.choice(rival_squares)}"),
            move_subject("psychomachia", "bob", "pass"),
            move_subject("psychomachia", "bob", "k9"),
            move_subject("psychomachia", "bob", rng.choice(rival_squares), guard=moves_made + 1 + rng.randint(1, 5)),
        ]
        if rival not in to_move:  # out of turn (also while waiting for alice to hide)
            candidates.append(move_subject("psychomachia", "bob", rng.choice(rival_squares)))
            candidates.append(move_subject("psychomachia", "bob", f"hide {rng.choice(rival_squares)}"))
        elif moves_made < 2:  # bob has not hidden yet
            candidates.append(move_subject("psychomachia", "bob", "reveal"))
            candidates.append(move_subject("psychomachia", "bob", f"hide {rng.choice(wrong_colour)}"))
        else:
            candidates.append(move_subject("psychomachia", "bob", f"hide {rng.choice(rival_squares)}"))
            candidates.append(move_subject("psychomachia", "bob", z))  # his own hidden stone
            if bob_stones:  # a square holding his own stone
                candidates.append(move_subject("psychomachia", "bob", rng.choice(bob_stones)))
            if "reveal" not in game.legal_moves(state, rival):
                candidates.append(move_subject("psychomachia", "bob", "reveal"))
        pair.expect_error("bob", rng.choice(candidates))

    pair.send("alice" if rng.random() < 0.5 else "carol",
              f"psychomachia challenge -size=6 -stones={stones} {' '.join(players)}")
    subscribe_carol(pair)
    bob_errs()

    # the set-up, in either order; the hide is the one mail that differs
    for seat in rng.sample([owner, rival], 2):
        if seat == owner:
            pair.expect_move("alice", move_subject("psychomachia", "alice", f"hide {x}"),
                             subject_b=move_subject("psychomachia", "alice", f"hide {y}"))
            for run, square in enumerate((x, y)):
                states[run] = game.play(states[run], owner, f"hide {square}")
        else:
            pair.expect_move("bob", move_subject("psychomachia", "bob", f"hide {z}"))
            play(rival, f"hide {z}")
        moves_made += 1
        bob_errs()

    # alice reveals on her n-th turn, or (half the games) only at the end
    reveal_turn = rng.randint(stones // 2, stones - 1) if rng.random() < 0.5 else None
    owner_turns = 0
    revealed = False
    while game.outcome(states[0]) is None:
        if rng.random() < 0.35:
            bob_errs()
        if rng.random() < 0.35:
            ask_something(pair, rng, moves_made)
        seat, choices = common_turn(game, states, untouchable)
        userid = "alice" if seat == owner else "bob"
        squares = [m for m in choices if m != "reveal"]
        if not squares:
            break  # only the secret squares are left for alice: the comparison ends here
        if seat == owner:
            # mostly on the lines of X and Y, so that alice often completes a
            # trick with her hidden stone (a secret completion) before revealing
            near = [m for m in squares if any(m[0] == s[0] or m[1:] == s[1:] for s in untouchable)]
            wants_reveal = owner_turns == reveal_turn
            owner_turns += 1
        else:
            near = []
            wants_reveal = rng.random() < 0.15
        if "reveal" in choices and wants_reveal:
            move = "reveal" if rng.random() < 0.5 else f"reveal,{rng.choice(squares)}"
        else:
            move = rng.choice(near if near and rng.random() < 0.6 else squares)
        subject, comment = turn_mail(rng, "psychomachia", userid, move, moves_made)
        # alice revealing, or the last stone (the final reveal): her stone shows
        # now, on X in run A and on Y in run B, so this mail is not compared
        revealed = seat == owner and move.startswith("reveal")
        revealed = revealed or game.outcome(game.play(states[0], seat, move)) is not None
        pair.expect_move(userid, subject, text=comment, compare=not revealed)
        play(seat, move)
        moves_made += 1
        if revealed:
            break

    assert pair.compared >= 20 and pair.errors >= 3, f"only {pair.compared} mails compared, {pair.errors} errors"
    if revealed:
        assert pair.show_differs(), "after the reveal the two runs should show different boards"


# -- Parliament --------------------------------------------------------------------------
@pytest.mark.parametrize("seed", PARLIAMENT_SEEDS)
def test_parliament_preferences_do_not_leak(seed: int, runtime: Runtime, twin: Runtime) -> None:
    rng, game, pair, owner, players, rival = begin(runtime, twin, "parliament", seed)  # owner: Red or Blue
    options = {"boards": "upper"}
    states = [game.new(options, players), game.new(options, players)]
    labels = list(states[0].layout.labels)
    pool = [s for s in labels if s not in FIXED_EXAMPLES]
    rng.shuffle(pool)
    if rng.random() < 0.4:
        # secrets on the top rows: edge seats, and the first seats in reading
        # order, which the "Next: ..., like b1" example names once h5 is taken
        pool.sort(key=lambda label: int(label[1:]) > 2)
    # S and T: disjoint, of 0 to 3 seats each, not both empty ("prefer none" is a secret too)
    size_s, size_t = rng.choice([(a, b) for a in range(4) for b in range(4) if a + b > 0])
    s_seats, t_seats = pool[:size_s], pool[size_s : size_s + size_t]
    # bob's own preferences stay apart from S and T: a seat both name cancels, and both are told
    p_seats = pool[size_s + size_t : size_s + size_t + rng.randint(0, 3)]
    pair.secrets = (frozenset(s_seats), frozenset(t_seats))
    untouchable = set(s_seats) | set(t_seats)
    index = {label: i for i, label in enumerate(labels)}
    safe_labels = [s for s in labels if s not in untouchable]
    neighbours = states[0].layout.neighbours
    around = {n for s in untouchable for n in neighbours[index[s]]}
    #: the seats two steps from S and T: claiming them surrounds the seats next to S and T
    ring = {n for s in around for n in neighbours[s]} - around - {index[s] for s in untouchable}
    moves_made = 0

    def prefer(seats: list[str]) -> str:
        return "prefer " + (",".join(seats) if seats else "none")

    def play(seat: int, text: str) -> None:
        for run in (0, 1):
            states[run] = game.play(states[run], seat, text)

    def touched(states: list[Any]) -> bool:
        """A seat of S or T is no longer empty in a run, or a round ended (which reveals all)."""
        return any(
            state.finished_rounds or any(state.board[index[s]] != EMPTY_SEAT for s in untouchable)
            for state in states
        )

    def bob_errs() -> None:
        state = states[0]
        to_move = game.to_move(state)
        held = [labels[i] for i, mark in enumerate(state.board) if mark in "RBrb"]
        candidates = [
            move_subject("parliament", "bob", "k9"),
            move_subject("parliament", "bob", "a1"),  # a cut-off corner
            move_subject("parliament", "bob", ",".join(rng.sample(safe_labels, 2))),
            move_subject("parliament", "bob", rng.choice(safe_labels), guard=moves_made + 1 + rng.randint(1, 5)),
        ]
        if rival not in to_move:
            candidates.append(move_subject("parliament", "bob", rng.choice(safe_labels)))
        elif state.in_setup:
            candidates.append(move_subject("parliament", "bob", rng.choice(safe_labels)))
            candidates.append(move_subject("parliament", "bob", prefer(rng.sample(safe_labels, 4))))
        else:
            candidates.append(move_subject("parliament", "bob", prefer(rng.sample(safe_labels, 1))))
            candidates.append(move_subject("parliament", "bob", f"{rng.choice(safe_labels)} then"))
            if held:
                candidates.append(move_subject("parliament", "bob", rng.choice(held)))
            own_hidden = [s for s in p_seats if state.board[index[s]] == EMPTY_SEAT]
            if own_hidden:
                candidates.append(move_subject("parliament", "bob", rng.choice(own_hidden)))
        pair.expect_error("bob", rng.choice(candidates))

    pair.send("alice" if rng.random() < 0.5 else "carol", f"parliament challenge -boards=upper {' '.join(players)}")
    subscribe_carol(pair)
    bob_errs()
    for seat in rng.sample([owner, rival], 2):
        if seat == owner:
            pair.expect_move("alice", move_subject("parliament", "alice", prefer(s_seats)),
                             subject_b=move_subject("parliament", "alice", prefer(t_seats)))
            for run, seats in enumerate((s_seats, t_seats)):
                states[run] = game.play(states[run], owner, prefer(seats))
        else:
            pair.expect_move("bob", move_subject("parliament", "bob", prefer(p_seats)))
            play(rival, prefer(p_seats))
        moves_made += 1
        bob_errs()

    revealed = False
    while game.outcome(states[0]) is None:
        if rng.random() < 0.25:
            bob_errs()
        if rng.random() < 0.25:
            ask_something(pair, rng, moves_made)
        seat, choices = common_turn(game, states, untouchable)
        userid = "alice" if seat == owner else "bob"
        if not choices:
            break  # only S and T are left
        # often next to S or T, or two steps away: then seats whose neighbours are
        # all held but a hidden S or T seat (and which would flip were it an
        # ordinary seat) come up in most games, before S or T is surrounded
        roll = rng.random()
        near = [m for m in choices if index[m] in (around if roll < 0.25 else ring)]
        move = rng.choice(near if near and roll < 0.6 else choices)
        if rng.random() < 0.1:  # name an order for the flips (any seats may be named)
            move += " then " + ",".join(rng.sample(safe_labels, rng.randint(1, 2)))
        subject, comment = turn_mail(rng, "parliament", userid, move, moves_made)
        after = [game.play(state, seat, move) for state in states]
        # a claim that reveals (or flips) a seat of S or T in a run is not compared
        revealed = touched(after)
        pair.expect_move(userid, subject, text=comment, compare=not revealed)
        states[:] = after
        moves_made += 1
        if revealed:
            break

    assert pair.compared >= 20 and pair.errors >= 3, f"only {pair.compared} mails compared, {pair.errors} errors"
    if revealed:
        assert pair.show_differs(), "after the reveal the two runs should show different boards"
