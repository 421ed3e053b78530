"""The bot (pbmserv.gamekit.search) against a random player, a one-ply
greedy player and the other bots, for every game word and main option set,
both colours; and its thinking time on the largest boards.

    .venv/bin/python bench/bench_bots.py [--games N] [--strength normal] [--scale F]
                                         [--opponents random,greedy] [--large] [--only WORDS] [--jobs 2]
                                         [--cpu-time]
    .venv/bin/python bench/bench_bots.py --timing K [--strength normal] [--jobs 1] [--cpu-time]

Each row: the bot's wins, draws and losses over N games as the first seat
and N as the second, its thinking time per move (p50, p95, max), and how
often its resignation rule (`service.bot_manners`: hopeless on two turns
running) would have fired in a game it then did not lose ("false resign").
The greedy player (`search.greedy_move`) plays a move that wins at once
when there is one, else one with the best tally margin right after it
(`Game.tally`), at random among equals, and sees the whole state, secrets
included. `--large` adds the largest boards; `--scale F` gives every bot
F times its strength's seconds per move (strong still thinks five times
as long as normal; a run at F < 1 shows how a bot fares on less time
than it has in play). Games run in `--jobs` processes (the
times are then measured with that many games sharing the cores;
`--cpu-time` counts every bot's budget and time in its process's CPU
seconds instead, so that a busy machine changes how long a run takes but
not its figures).
`--timing K` thinks once on each of K positions of every largest board,
reached by random play to a random depth, and prints the time per move.

Figures for this machine are in the closing note of issue 20.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pbmserv.gamekit import Game, get_game  # noqa: E402
from pbmserv.gamekit.search import STRENGTHS, choose_move, decide, greedy_move  # noqa: E402
from pbmserv.service.bots.manners import RESIGN_AFTER_OWN_MOVES, hopeless  # noqa: E402

PLAYERS = ["bot", "other"]

MAIN_SETS: tuple[tuple[str, Mapping[str, str]], ...] = (
    ("majorities", {"size": "3"}),
    ("majorities", {"size": "5"}),
    ("majority", {"size": "6"}),
    ("majority", {}),
    ("psychomachia", {"size": "6"}),
    ("psychomachia", {}),
    ("plurality", {"size": "13"}),
    ("plurality", {"board": "hex", "size": "5"}),
    ("parliament", {"boards": "upper"}),
    ("parliament", {"boards": "lower"}),
    ("synch", {"size": "4"}),
    ("synch", {"size": "8"}),
    ("synch", {"size": "8", "order": "direction-first"}),
)
LARGE_SETS: tuple[tuple[str, Mapping[str, str]], ...] = (
    ("majorities", {"size": "7"}),
    ("majority", {"size": "14"}),
    ("psychomachia", {"size": "14"}),
    ("plurality", {"size": "19"}),
    ("plurality", {"board": "hex", "size": "9"}),
    ("parliament", {"boards": "both"}),
    ("synch", {"size": "26"}),
)

Player = Callable[[Game, Any, int, random.Random], str]


def random_player(game: Game, state: Any, seat: int, rng: random.Random) -> str:
    return rng.choice(game.legal_moves(state, seat))


def greedy_player(game: Game, state: Any, seat: int, rng: random.Random) -> str:
    """It plays on the whole state, secrets included: a greedy player that cheats."""
    return greedy_move(game, state, seat, rng)


#: what the bots' seconds are counted on (`--cpu-time`: the process's CPU time)
CLOCK = {False: time.perf_counter, True: time.process_time}


def bot_player(strength: str, scale: float, cpu_time: bool) -> Player:
    def play(game: Game, state: Any, seat: int, rng: random.Random) -> str:
        return choose_move(game, state, seat, strength=strength, seconds=STRENGTHS[strength].seconds * scale,
                           rng=rng, clock=CLOCK[cpu_time])
    return play


def opponent(name: str, scale: float, cpu_time: bool) -> Player:
    if name == "random":
        return random_player
    if name == "greedy":
        return greedy_player
    return bot_player(name, scale, cpu_time)


OPPONENTS = ("random", "greedy", "easy", "normal", "strong")


@dataclass(frozen=True)
class Match:
    word: str
    options: Mapping[str, str]
    opponent: str
    bot_seat: int
    seed: int
    strength: str
    scale: float
    cpu_time: bool


@dataclass(frozen=True)
class Result:
    score: float  # 1 the bot won, 0.5 a draw, 0 it lost
    think: tuple[float, ...]  # the bot's seconds per move
    would_resign: bool  # the resignation rule fired at some turn


def play_match(match: Match) -> Result:
    game = get_game(match.word)
    rng = random.Random(match.seed)
    clock = CLOCK[match.cpu_time]
    other = opponent(match.opponent, match.scale, match.cpu_time)
    seconds = STRENGTHS[match.strength].seconds * match.scale
    state = game.new(match.options, PLAYERS if match.bot_seat == 0 else PLAYERS[::-1])
    think: list[float] = []
    hopeless_turns = 0
    would_resign = False
    while (outcome := game.outcome(state)) is None:
        seat = min(game.to_move(state))
        if seat == match.bot_seat:
            started = clock()
            decision = decide(game, state, seat, strength=match.strength, seconds=seconds, rng=rng, clock=clock)
            think.append(clock() - started)
            hopeless_turns = hopeless_turns + 1 if hopeless(decision) else 0
            would_resign |= hopeless_turns >= 2 and len(think) > RESIGN_AFTER_OWN_MOVES
            move = str(decision.move)
        else:
            move = other(game, state, seat, rng)
        state = game.play(state, seat, move)
    score = 0.5 if not outcome.winners else 1.0 if match.bot_seat in outcome.winners else 0.0
    return Result(score, tuple(think), would_resign)


def think_once(task: tuple[str, Mapping[str, str], str, int, bool]) -> float:
    """Seconds the bot takes on a position reached by random play."""
    word, options, strength, seed, cpu_time = task
    clock = CLOCK[cpu_time]
    game = get_game(word)
    rng = random.Random(seed)
    state = game.new(options, PLAYERS)
    for _ in range(rng.randrange(60)):
        if game.outcome(state) is not None:
            break
        seat = min(game.to_move(state))
        state = game.play(state, seat, rng.choice(game.legal_moves(state, seat)))
    if game.outcome(state) is not None:
        return 0.0
    started = clock()
    choose_move(game, state, min(game.to_move(state)), strength=strength, rng=rng, clock=clock)
    return clock() - started


def label(word: str, options: Mapping[str, str]) -> str:
    return " ".join([word, *(f"-{name}={value}" for name, value in options.items())])


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))] if ordered else 0.0


def timings(text: str, think: list[float]) -> str:
    return (f"{text} {percentile(think, 0.5):>6.2f} {percentile(think, 0.95):>6.2f} {max(think, default=0.0):>6.2f}")


def timing(args: argparse.Namespace) -> None:
    print(f"bot {args.strength}: seconds per move on {args.timing} positions of each largest board"
          + (" (CPU time)" if args.cpu_time else ""))
    print(f"{'game':<38} {'p50 s':>6} {'p95 s':>6} {'max s':>6}")
    with ProcessPoolExecutor(args.jobs) as pool:
        for word, options in LARGE_SETS:
            tasks = [(word, options, args.strength, seed, args.cpu_time) for seed in range(args.timing)]
            think = [seconds for seconds in pool.map(think_once, tasks) if seconds]
            print(timings(f"{label(word, options):<38}", think), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=10, help="games per colour and opponent")
    parser.add_argument("--strength", default="normal", choices=("easy", "normal", "strong"))
    parser.add_argument("--scale", type=float, default=1.0, help="every bot thinks this share of its strength's seconds")
    parser.add_argument("--opponents", default="random,greedy", help=f"some of {','.join(OPPONENTS)}")
    parser.add_argument("--large", action="store_true", help="add the largest boards")
    parser.add_argument("--only", default=None, help="game words or rows, e.g. 'synch,majority -size=6'")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--cpu-time", action="store_true", help="count the bots' seconds in CPU time")
    parser.add_argument("--timing", type=int, default=0, help="time the bot on K positions of each largest board")
    args = parser.parse_args()
    if args.timing:
        timing(args)
        return
    opponents = args.opponents.split(",")
    wanted = None if args.only is None else set(args.only.split(","))
    sets = [(w, o) for w, o in MAIN_SETS + (LARGE_SETS if args.large else ())
            if wanted is None or w in wanted or label(w, o) in wanted]
    matches = [
        Match(word, options, name, bot_seat, seed, args.strength, args.scale, args.cpu_time)
        for word, options in sets for name in opponents for bot_seat in (0, 1) for seed in range(args.games)
    ]
    print(f"bot {args.strength}" + (f", every bot at {args.scale} times its seconds" if args.scale != 1 else "")
          + (", seconds of CPU time" if args.cpu_time else "") + f"; {args.games} games per colour and opponent")
    print(f"{'game':<38} {'vs':<7} {'first W-D-L':>11} {'second W-D-L':>12} {'win%':>5}"
          f" {'p50 s':>6} {'p95 s':>6} {'max s':>6} {'false resign':>12}")
    rows = [(word, options, name) for word, options in sets for name in opponents]
    with ProcessPoolExecutor(args.jobs) as pool:
        results = zip(matches, pool.map(play_match, matches))
        for word, options, name in rows:  # matches come row by row: print each row once its games are in
            mine: dict[int, list[Result]] = {0: [], 1: []}
            for match, result in islice(results, 2 * args.games):
                mine[match.bot_seat].append(result)
            both = mine[0] + mine[1]
            tallies = ["-".join(str(sum(r.score == s for r in mine[seat])) for s in (1.0, 0.5, 0.0)) for seat in (0, 1)]
            false_resigns = sum(r.would_resign and r.score > 0 for r in both)
            print(timings(f"{label(word, options):<38} {name:<7} {tallies[0]:>11} {tallies[1]:>12}"
                          f" {100 * statistics.mean(r.score for r in both):>5.0f}", [t for r in both for t in r.think])
                  + f" {false_resigns:>12}", flush=True)

if __name__ == "__main__":
    main()
