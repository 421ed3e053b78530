"""One game of the swap test, the same for both games: the two runs' states
kept beside the servers' (moves, queued moves, undo), and what bob and carol
do between turns: ask, preview, queue, err, chat, offer draws and ask for
undos. The game's own part (the secret, the moves, its errors) is in
tests/leak_psychomachia.py and tests/leak_parliament.py."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pbmserv.gamekit import Game, IllegalMove
from tests.leak_pairs import BOARD, PASSWORDS, Leak, Pair, command, move_subject


class ControlFailed(AssertionError):
    """The runs did not differ where the secret shows: the comparison would see nothing."""


@dataclass
class Match:
    pair: Pair
    game: Game
    rng: random.Random
    owner: int  # alice's seat
    states: list[Any]  # run A's and run B's
    #: whether alice's secret shows in either run's state (or the game is over)
    shows_secret: Callable[[list[Any]], bool]
    #: the labels of the secrets: no move the runs share touches them
    untouchable: set[str] = field(default_factory=set)
    moves: list[tuple[int, str, str]] = field(default_factory=list)  # seat, text in run A, text in run B
    queued: dict[int, str] = field(default_factory=dict)
    proposal: str | None = None  # the open draw offer or undo request
    over: bool = False
    diverged: bool = False

    def __post_init__(self) -> None:
        self.initial = list(self.states)

    @property
    def rival(self) -> int:
        return 1 - self.owner

    @property
    def moves_made(self) -> int:
        return len(self.moves)

    def userid(self, seat: int) -> str:
        return "alice" if seat == self.owner else "bob"

    def common_moves(self, seat: int) -> list[str]:
        """The moves of `seat` legal in both runs that touch none of the secrets."""
        theirs = set(self.game.legal_moves(self.states[1], seat))
        return [m for m in self.game.legal_moves(self.states[0], seat) if m in theirs and m not in self.untouchable]

    def to_move(self) -> frozenset[int]:
        seats = self.game.to_move(self.states[0])
        if self.game.to_move(self.states[1]) != seats:
            raise Leak(f"the runs differ in who is to move after\n{self.pair.log[-1]}")
        return seats

    # -- moves ----------------------------------------------------------------------
    def after(self, seat: int, text_a: str, text_b: str) -> tuple[list[Any], list[tuple[int, str, str]], dict[int, str]]:
        """The states after the move and the queued moves the server then plays
        (as `playing.play_queued` does), the moves made and the queue left."""
        states = [self.game.play(state, seat, text) for state, text in zip(self.states, (text_a, text_b))]
        made = [(seat, text_a, text_b)]
        waiting = dict(self.queued)
        while waiting and not any(self.game.outcome(state) is not None for state in states):
            if self.shows_secret(states):
                # the runs may part from here (a seat free in one run only); the game ends
                # without another shared move, see `finish`
                self.diverged = True
                break
            ready = sorted(set(waiting) & set(self.game.to_move(states[0])))
            if not ready:
                break
            text = waiting.pop(ready[0])
            played = []
            for state in states:
                try:
                    played.append(self.game.play(state, ready[0], text))
                except IllegalMove:
                    pass
            if len(played) == 1:
                raise Leak(f"the queued move {text!r} is legal in one run only, after\n{self.pair.log[-1]}")
            if played:
                states = played
                made.append((ready[0], text, text))
        return states, made, waiting

    def move(self, seat: int, text: str, comment: str = "", *, text_b: str | None = None,
             subject: str | None = None, subject_b: str | None = None) -> bool:
        """`seat` moves (in run B `text_b`); True when a secret shows after it
        (then the mails are not compared)."""
        states, made, waiting = self.after(seat, text, text if text_b is None else text_b)
        revealed = self.shows_secret(states)
        self.pair.expect_move(
            self.userid(seat), subject or move_subject(self.pair.game, self.userid(seat), text),
            text=comment, subject_b=subject_b, compare=not revealed,
        )
        self.states, self.queued, self.proposal = states, waiting, None
        self.moves += made
        self.over = any(self.game.outcome(state) is not None for state in states)
        return revealed

    def own_moves(self, seat: int) -> list[int]:
        """The numbers of `seat`'s moves after the set-up (an undo never takes back a secret)."""
        return [number for number, (s, _, _) in enumerate(self.moves, start=1) if s == seat and number > 2]

    def has_moved(self, seat: int) -> bool:
        return any(s == seat for s, _, _ in self.moves)

    # -- between turns --------------------------------------------------------------------
    def interlude(self, errs: Callable[[], None], chance: float) -> None:
        """What bob, carol and alice may do between two moves, each with its chance."""
        rng = self.rng
        if rng.random() < chance:
            errs() if rng.random() < 0.7 else self.err_otherwise()
        if rng.random() < chance:
            self.ask()
        if rng.random() < chance / 2:
            self.preview()
        if rng.random() < chance / 3:
            self.queue()
        if rng.random() < 0.05:
            self.chat()
        if rng.random() < 0.05 and self.moves_made >= 8:
            self.propose()  # after the set-up; a draw accepted ends the game

    def ask(self) -> None:
        sender, subject = self.rng.choice(queries(self.pair.game, self.moves_made, self.rival in self.to_move()))
        self.pair.send(sender, subject)

    def preview(self) -> None:
        """bob's what-if: his moves and alice's as he can know them, secret squares
        and seats included (they are empty to him); sometimes from an earlier move."""
        rng, game = self.rng, self.game
        at = rng.randint(2, self.moves_made) if self.moves_made > 2 and rng.random() < 0.2 else None
        state = self.states[0] if at is None else self.replayed(at)[0]
        known = game.known_to(state, self.rival)
        view = state if known is None else known
        moves: list[str] = []
        for _ in range(rng.randint(1, 3)):
            seats = game.to_move(view)
            if not seats:
                break
            mover = self.rival if self.rival in seats else min(seats)
            legal = [m for m in game.legal_moves(view, mover) if not m.startswith("reveal")]
            if not legal:
                break
            near = [m for m in legal if any(label in m for label in self.untouchable)]
            moves.append(rng.choice(near if near and rng.random() < 0.5 else legal))
            view = game.play(view, mover, moves[-1])
        if not moves or rng.random() < 0.1:
            moves.append("z99")  # a square no board has: the error mail shows bob's view of the board
        board = f"{BOARD}#{at}" if at is not None else str(BOARD)
        self.pair.send("bob", f"{self.pair.game} preview {board} bob {PASSWORDS['bob']} {';'.join(moves)}")

    def queue(self) -> None:
        """bob or alice queues a move for their next turn (bob while it is his
        turn: an error); a queued move the runs share touches no secret."""
        seat = self.rng.choice([self.owner, self.rival])
        to_move = self.to_move()
        if seat in to_move or len(to_move) != 1:
            if seat == self.rival:
                self.pair.expect_error("bob", command(self.pair.game, "queue", "bob", "z99"))
            return
        # what seat could play after a move the opponent may make (which may take it: then it is dropped)
        replies = self.common_moves(1 - seat)
        if not replies:
            return
        probe = self.rng.choice(replies)
        after = [self.game.play(state, 1 - seat, probe) for state in self.states]
        theirs = set(self.game.legal_moves(after[1], seat))
        choices = [
            m for m in self.game.legal_moves(after[0], seat)
            if m in theirs and m not in self.untouchable and not m.startswith("reveal") and " " not in m
        ]
        if choices:
            text = self.rng.choice(choices)
            self.queued[seat] = text
            self.pair.send(self.userid(seat), command(self.pair.game, "queue", self.userid(seat), text))

    def chat(self) -> None:
        userid = self.rng.choice(["alice", "bob"])
        self.pair.send(userid, command(self.pair.game, "chat", userid), f"{userid} chats: good luck.")

    def propose(self) -> None:
        """A draw offer or an undo request by alice or bob; answered by the
        other, withdrawn, or left open to lapse with the next move."""
        rng, game = self.rng, self.pair.game
        seat = rng.choice([self.owner, self.rival])
        userid, other = self.userid(seat), self.userid(1 - seat)
        kind = rng.choice(["propose", "undo"])
        own = self.own_moves(seat)
        if kind == "propose" and not self.game.draws:  # refused alike in both runs: the rules have no draws
            self.pair.expect_error(userid, move_subject(game, userid, kind))
            return
        if self.proposal is not None or (kind == "undo" and not own):
            if seat == self.rival and (self.proposal is not None or not self.has_moved(seat)):
                self.pair.expect_error("bob", move_subject(game, "bob", kind))
            return
        self.pair.expect_move(userid, move_subject(game, userid, kind))
        self.proposal = kind
        answer = rng.random()
        if answer < 0.3:  # left open: the next move lets it lapse
            if rng.random() < 0.5:  # another while it is open, or bob accepting his own
                again = "accept" if seat == self.rival and rng.random() < 0.5 else rng.choice(["propose", "undo"])
                self.pair.expect_error("bob", move_subject(game, "bob", again))
            return
        self.proposal = None
        if answer < 0.6:
            answerer = rng.choice([userid, other])  # the proposer's own reject withdraws it
            self.pair.expect_move(answerer, move_subject(game, answerer, "reject"))
            return
        if kind == "propose":
            self.end(other, move_subject(game, other, "accept"))
            return
        self.pair.expect_move(other, move_subject(game, other, "accept"))
        kept = own[-1] - 1
        self.states = self.replayed(kept)
        self.moves = self.moves[:kept]

    def replayed(self, count: int) -> list[Any]:
        """Both runs' states after their first `count` moves."""
        states = list(self.initial)
        for seat, text_a, text_b in self.moves[:count]:
            states = [self.game.play(state, seat, text) for state, text in zip(states, (text_a, text_b))]
        return states

    def err_otherwise(self) -> None:
        """bob or carol sends a command the server refuses, whatever the game."""
        game, rng = self.pair.game, self.rng
        candidates = [
            ("bob", f"{game} move {BOARD} bob wrongpassword {rng.choice(['a2', 'b1'])}"),
            ("bob", f"{game} show 999"),
            ("bob", f"{game} show {BOARD}#{self.moves_made + rng.randint(1, 9)}"),
            ("bob", f"{game} frobnicate {BOARD}"),
            ("bob", command(game, "preview", "bob", "z99")),
            ("bob", f"{game} showas bob wrongpassword {BOARD}"),
            ("carol", command(game, "preview", "carol", "b1")),
            ("carol", command(game, "showas", "carol")),
            ("carol", command(game, "resign", "carol")),
            ("carol", f"{game} moves {BOARD}"),
        ]
        if self.proposal is None:
            candidates.append(("bob", move_subject(game, "bob", rng.choice(["accept", "reject"]))))
        if not self.has_moved(self.rival):
            candidates.append(("bob", move_subject(game, "bob", "undo")))
        if self.rival not in self.to_move():
            candidates.append(("bob", command(game, "moves", "bob")))
        else:
            candidates.append(("bob", command(game, "queue", "bob", "z99")))
        self.pair.expect_error(*rng.choice(candidates))

    # -- the end --------------------------------------------------------------------------
    def end(self, userid: str, subject: str) -> None:
        """The mail that ends the game (a resignation, an accepted draw):
        alice's secret shows to everybody, so bob's mail must differ."""
        out_a, out_b = self.pair.expect_move(userid, subject, compare=False)
        self.over = True
        to_bob = [(a.text, b.text) for a, b in zip(out_a, out_b) if a.recipient == "bob@example.org"]
        if not to_bob or to_bob[0][0] == to_bob[0][1]:
            raise ControlFailed(f"the mail to bob that ends the game is the same in both runs, after\n{self.pair.log[-1]}")

    def play_on(self, most: int = 150) -> None:
        """After the comparison: moves legal in both runs, uncompared, until the
        game ends (at most `most` moves; then, or when the runs part, a resignation)."""
        game = self.pair.game
        for _ in range(most):
            seats = [self.game.to_move(state) for state in self.states]
            if self.over or self.diverged or seats[0] != seats[1] or len(seats[0]) != 1:
                break
            (seat,) = seats[0]
            theirs = set(self.game.legal_moves(self.states[1], seat))
            common = [m for m in self.game.legal_moves(self.states[0], seat) if m in theirs]
            if not common:
                break
            text = self.rng.choice(common)
            states, made, waiting = self.after(seat, text, text)
            subject = move_subject(game, self.userid(seat), text)
            if any(self.game.outcome(state) is not None for state in states):
                self.end(self.userid(seat), subject)
                return
            self.pair.expect_move(self.userid(seat), subject, compare=False)
            self.states, self.queued, self.proposal = states, waiting, None
            self.moves += made
        if not self.over:
            self.end("bob", move_subject(game, "bob", "resign"))

    def finish(self) -> None:
        """End the game if it is not over (resignation, agreed draw, or played
        on to the end uncompared), then the control: carol's `show` must differ."""
        if not self.over:
            roll = self.rng.random()
            game = self.pair.game
            if self.proposal is not None:
                self.pair.expect_move("bob", move_subject(game, "bob", "reject"), compare=False)
            if roll < 0.2 and not self.diverged:
                self.play_on()
            elif roll < 0.4 and self.game.draws:
                self.pair.expect_move("alice", move_subject(game, "alice", "propose"), compare=False)
                self.end("bob", move_subject(game, "bob", "accept"))
            else:
                userid = self.rng.choice(["alice", "bob"])
                verb = self.rng.choice(["resign", "move"])
                self.end(userid, command(game, "resign", userid) if verb == "resign" else move_subject(game, userid, "resign"))
        if not self.pair.show_differs():
            raise ControlFailed("after the game the two runs should show different boards")


def queries(game: str, moves_made: int, bobs_turn: bool) -> list[tuple[str, str]]:
    """Questions bob and carol may ask, and a move carol may not make: (sender, subject)."""
    asked = [
        ("carol", f"{game} move {BOARD} carol {PASSWORDS['carol']} e5"),
        ("carol", f"{game} show {BOARD}"),
        ("carol", f"{game} show {BOARD}#{moves_made}"),
        ("carol", f"{game} show {BOARD}#{max(0, moves_made - 3)}"),
        ("carol", f"{game} show alice"),
        ("carol", f"{game} show bob next"),
        ("carol", f"{game} games"),
        ("carol", f"{game} games alice next"),
        ("carol", f"{game} games all"),
        ("carol", f"{game} history"),
        ("carol", f"{game} history alice"),
        ("carol", "all show alice"),
        ("bob", f"{game} show {BOARD}"),
        ("bob", f"{game} games bob"),
        ("bob", f"{game} show {BOARD}#{max(0, moves_made - 1)}"),
        ("bob", f"{game} showas bob {PASSWORDS['bob']} {BOARD}"),
        ("bob", f"{game} history bob"),
        ("bob", "all show bob next"),
    ]
    if bobs_turn:
        asked.append(("bob", command(game, "moves", "bob")))
    return asked
