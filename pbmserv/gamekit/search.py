"""A bot's move for any game: determinized Monte Carlo tree search (UCT)
over the plugin API only (`to_move`, `moves`, `apply`, `outcome`,
`determinize`), on the game's move values: a move becomes text only as the
bot's answer.

Every iteration first draws a full state consistent with what the bot's
seat can know (`Game.determinize`: other players' secrets drawn at random)
and walks the bot's one tree on that state, so nothing the bot chooses
depends on a secret it cannot see. Below the root, children are added one
at a time as a node's visits grow (progressive widening), so that games
with thousands of moves a turn still search more than one move deep; the
normal and strong bots add them best first, as the game's judgement right
after each move ranks them (the root ranks all its moves, deeper nodes a
sample), so the search looks at the obvious moves first and at the obvious
answers to them. A new position is then played on with random moves for the
game's `playout_moves` (to the end for a game without a tally) and scored
by the game's judgement (`Game.judge`, by default its tally: the margin
squashed to a win chance).

Deterministic for one rng seed as long as the iteration budget, not the
clock, ends the search (tests give `iterations` and ample `seconds`).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pbmserv.gamekit.api import Game, Move, Outcome


@dataclass(frozen=True)
class Strength:
    """How hard a bot thinks: the search stops at whichever limit comes first."""

    iterations: int
    seconds: float
    #: new children best first by the game's judgement (else at random)
    ordered: bool
    #: random moves a playout makes before the tally scores it; None: the
    #: game's own `playout_moves`
    playout_depth: int | None


STRENGTHS = {
    "easy": Strength(iterations=60, seconds=0.2, ordered=False, playout_depth=30),
    "normal": Strength(iterations=50_000, seconds=0.9, ordered=True, playout_depth=None),
    "strong": Strength(iterations=250_000, seconds=4.5, ordered=True, playout_depth=None),
}

#: the UCB1 exploration weight, for rewards between 0 (loss) and 1 (win):
#: low, because the judge's win chances of good moves differ by hundredths
#: (docs/decisions/0090-exploration-weight.md)
EXPLORATION = 0.2
#: a node may have 1 + WIDENING * sqrt(visits) children
WIDENING = 2.0
DRAW = 0.5
#: hidden-information states drawn to judge whether a move wins at once
WIN_CHECK_SAMPLES = 3
#: below the root, at most this many moves (a random sample) are ranked
RANKED_BELOW_ROOT = 400
#: the share of its time a bot may spend looking for a move that wins at
#: once, and again ranking the root's moves (on 19x19 plurality, ranking
#: all 4,800 took 0.6 s of the normal bot's 0.9; on a 7-hex majorities
#: board, looking among 6,000 moves for a win 0.3 s)
CHECK_SHARE = 0.3
#: moves judged between two looks at the clock
MOVES_PER_CLOCK_CHECK = 32


@dataclass
class Node:
    """One move in the bot's tree: how often it was tried and the summed
    reward of the seat that made it."""

    visits: int = 0
    reward: float = 0.0
    children: dict[tuple[int, Move], Node] = field(default_factory=dict)
    #: the moves to add as children, best first (ordered search only)
    ranked: list[Move] | None = None


@dataclass(frozen=True)
class Decision:
    """The bot's move and how the search judged it."""

    move: Move
    #: the searched chance of winning after the move (a draw counts half);
    #: None when there was nothing to judge (a single legal move)
    win_chance: float | None


def choose_move(
    game: Game,
    state: Any,
    seat: int,
    *,
    strength: str = "normal",
    seconds: float | None = None,
    iterations: int | None = None,
    rng: random.Random,
    clock: Callable[[], float] = time.perf_counter,
) -> str:
    """A legal move for `seat` in canonical text, chosen from what `seat`
    can know. `seconds` and `iterations` override the strength's limits;
    `clock` is what the seconds are counted on (the bench counts the
    process's CPU time on a shared machine)."""
    return str(decide(
        game, state, seat, strength=strength, seconds=seconds, iterations=iterations, rng=rng, clock=clock,
    ).move)


def decide(
    game: Game,
    state: Any,
    seat: int,
    *,
    strength: str = "normal",
    seconds: float | None = None,
    iterations: int | None = None,
    rng: random.Random,
    clock: Callable[[], float] = time.perf_counter,
) -> Decision:
    """`choose_move`'s move with the search's judgement of it."""
    if strength not in STRENGTHS:
        raise ValueError(f"unknown strength {strength!r}; one of {', '.join(STRENGTHS)}")
    if seat not in game.to_move(state):
        raise ValueError(f"seat {seat} is not to move")
    legal = game.moves(state, seat)
    if len(legal) == 1:
        return Decision(legal[0], None)
    budget = STRENGTHS[strength]
    started = clock()
    allowed = budget.seconds if seconds is None else seconds
    deadline = started + allowed
    winning = winning_move(game, state, seat, legal, rng, until=started + allowed * CHECK_SHARE, clock=clock)
    if winning is not None:
        return Decision(winning, 1.0)
    root = Node()
    if budget.ordered:
        root.ranked = ranked(
            game, game.determinize(state, seat, rng), seat, legal, rng, until=clock() + allowed * CHECK_SHARE, clock=clock,
        )
    depth = game.playout_moves if budget.playout_depth is None else budget.playout_depth
    for _ in range(budget.iterations if iterations is None else iterations):
        if root.visits and clock() >= deadline:
            break
        iterate(game, game.determinize(state, seat, rng), seat, root, depth, budget.ordered, rng, until=deadline, clock=clock)
    move = most_visited(root, seat, legal, rng)
    child = root.children.get((seat, move))
    return Decision(move, child.reward / child.visits if child is not None and child.visits else None)


def winning_move(
    game: Game,
    state: Any,
    seat: int,
    legal: Sequence[Move],
    rng: random.Random,
    *,
    until: float = math.inf,
    clock: Callable[[], float] = time.perf_counter,
) -> Move | None:
    """The first legal move that wins at once in every one of a few drawn
    states (one, for a game that hides nothing), else None; None too if
    the clock reaches `until` first (the search still finds a win the
    ranking puts first)."""
    samples: list[Any] = []
    for _ in range(WIN_CHECK_SAMPLES):
        drawn = game.determinize(state, seat, rng)
        if not any(drawn is seen or drawn == seen for seen in samples):
            samples.append(drawn)
    possible = set(legal)
    for sample in samples:
        winning = set()
        for index, move in enumerate(game.moves(sample, seat)):
            if index % MOVES_PER_CLOCK_CHECK == 0 and clock() >= until:
                return None
            if move in possible and wins(game, sample, seat, move):
                winning.add(move)
        possible = winning
        if not possible:
            return None
    return next(move for move in legal if move in possible)


def wins(game: Game, state: Any, seat: int, move: Move) -> bool:
    outcome = game.outcome(game.apply(state, seat, move))
    return outcome is not None and seat in outcome.winners


def iterate(
    game: Game, state: Any, seat: int, root: Node, playout_depth: int, ordered: bool, rng: random.Random,
    *, until: float = math.inf, clock: Callable[[], float] = time.perf_counter,
) -> None:
    """One descent of the tree on one drawn state: select by UCB1, add one
    child (the best ranked untried move, or a random one; ranking a node's
    moves stops when the clock reaches `until`), play it out, and credit
    every move on the way."""
    node = root
    path: list[tuple[Node, int]] = []
    outcome = game.outcome(state)
    while outcome is None:
        actor = seat if node is root else min(game.to_move(state))
        moves = game.moves(state, actor)
        tried = [move for move in moves if (actor, move) in node.children]
        if len(tried) < len(moves) and (not tried or len(node.children) < 1 + WIDENING * math.sqrt(node.visits)):
            move = new_child(game, state, node, actor, moves, ordered, rng, until=until, clock=clock)
            node.children[(actor, move)] = Node()
            node = node.children[(actor, move)]
            path.append((node, actor))
            state = playout(game, game.apply(state, actor, move), playout_depth, rng)
            outcome = game.outcome(state)
            break
        move = select(node, actor, tried)
        node = node.children[(actor, move)]
        path.append((node, actor))
        state = game.apply(state, actor, move)
        outcome = game.outcome(state)
    tally = game.judge(state) if outcome is None else None
    root.visits += 1
    for child, actor in path:
        child.visits += 1
        child.reward += reward(outcome, actor) if tally is None else tally_reward(tally, actor)


def new_child(
    game: Game, state: Any, node: Node, actor: int, moves: Sequence[Move], ordered: bool, rng: random.Random,
    *, until: float = math.inf, clock: Callable[[], float] = time.perf_counter,
) -> Move:
    """The untried move to add next: the best ranked one that is legal in
    this drawn state, else one at random."""
    if ordered:
        if node.ranked is None:
            sample = rng.sample(list(moves), min(len(moves), RANKED_BELOW_ROOT))
            node.ranked = ranked(game, state, actor, sample, rng, until=until, clock=clock)
        while node.ranked:
            move = node.ranked[0]
            if (actor, move) not in node.children and move in moves:
                return move
            node.ranked.pop(0)
    return rng.choice([move for move in moves if (actor, move) not in node.children])


def ranked(
    game: Game,
    state: Any,
    seat: int,
    moves: Sequence[Move],
    rng: random.Random,
    *,
    until: float = math.inf,
    clock: Callable[[], float] = time.perf_counter,
) -> list[Move]:
    """`moves` best first for `seat` as the position right after each
    stands: a win first, a loss last, else by the margin the game's
    judgement gives (a draw as an even one); at random among equals. The
    moves are judged in a random order until the clock reaches `until`;
    those left unjudged follow the judged ones in that random order."""

    def standing(move: Move) -> float:
        after = game.apply(state, seat, move)
        outcome = game.outcome(after)
        if outcome is not None:
            return math.inf if seat in outcome.winners else -math.inf if outcome.winners else 0.0
        tally = game.judge(after)
        return 0.0 if tally is None else lead(tally, seat)

    shuffled = sorted(((rng.random(), move) for move in moves), key=first_two, reverse=True)
    keyed: list[tuple[float, float, Move]] = []
    for key, move in shuffled:
        if len(keyed) % MOVES_PER_CLOCK_CHECK == 0 and clock() >= until:
            break
        keyed.append((standing(move), key, move))
    keyed.sort(key=first_two, reverse=True)
    return [move for _, _, move in keyed] + [move for _, move in shuffled[len(keyed):]]


def first_two(keyed: tuple[Any, ...]) -> tuple[Any, ...]:
    """A ranking's sort key: its numbers, never the move (move values
    need not be ordered; two equal random keys are as good as never drawn)."""
    return keyed[:2]


def select(node: Node, actor: int, tried: Sequence[Move]) -> Move:
    """The tried move with the best UCB1 score (the first of equals)."""
    log_visits = math.log(max(node.visits, 1))

    def score(move: Move) -> float:
        child = node.children[(actor, move)]
        return child.reward / child.visits + EXPLORATION * math.sqrt(log_visits / child.visits)

    return max(tried, key=score)


def playout(game: Game, state: Any, depth: int, rng: random.Random) -> Any:
    """The state after random moves to the end, or after `depth` moves."""
    for _ in range(depth):
        if game.outcome(state) is not None:
            return state
        actor = min(game.to_move(state))
        state = game.apply(state, actor, rng.choice(game.moves(state, actor)))
    return state


def reward(outcome: Outcome | None, seat: int) -> float:
    if outcome is None or not outcome.winners:
        return DRAW
    return 1.0 if seat in outcome.winners else 0.0


def tally_reward(tally: Sequence[float], seat: int) -> float:
    """A win chance for `seat` in an unfinished game, from its lead over
    the best other seat: a lead the size of the random spread of the tallies
    so far (the square root of their total) is worth about 0.73."""
    spread = math.sqrt(sum(abs(value) for value in tally) + 1.0)
    return 1.0 / (1.0 + math.exp(-lead(tally, seat) / spread))


def lead(tally: Sequence[float], seat: int) -> float:
    """How far `seat` is ahead of the best other seat (behind: below 0)."""
    return tally[seat] - max(value for other, value in enumerate(tally) if other != seat)


def most_visited(root: Node, seat: int, legal: Sequence[Move], rng: random.Random) -> Move:
    """The root move tried most often that is legal in the real state (the
    best average reward among equals); a random legal move if none was tried."""
    tried = [(move, root.children[(seat, move)]) for move in legal if (seat, move) in root.children]
    if not tried:
        return rng.choice(list(legal))
    return max(tried, key=lambda pair: (pair[1].visits, pair[1].reward / pair[1].visits))[0]


def greedy_move(game: Game, state: Any, seat: int, rng: random.Random) -> str:
    """A one-ply player, the yardstick the bots are measured against: a move
    that wins at once if there is one, else one whose tally margin right
    after it is best (at random among equals, or among all moves in a game
    without a tally)."""
    best: list[Move] = []
    best_margin = -math.inf
    for move in game.moves(state, seat):
        after = game.apply(state, seat, move)
        outcome = game.outcome(after)
        if outcome is not None and seat in outcome.winners:
            return str(move)
        tally = game.tally(after)
        margin = 0.0 if tally is None else lead(tally, seat)
        if margin > best_margin:
            best, best_margin = [move], margin
        elif margin == best_margin:
            best.append(move)
    return str(rng.choice(best))
