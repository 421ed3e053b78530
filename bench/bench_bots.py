"""The bot (pbmserv.gamekit.search) against a random player and a one-ply
greedy player, for every game word and main option set, both colours.

    .venv/bin/python bench/bench_bots.py [--games N] [--strength normal] [--seconds S]
                                         [--large] [--only WORD] [--jobs 2]

Each row: the bot's wins, draws and losses over N games as the first seat
and N as the second, and the bot's thinking time per move (p50, p95, max).
The greedy player (`pbmserv.gamekit.search.greedy_move`) plays a move that
wins at once when there is one, else one with the best tally margin right
after it (`Game.tally`), at random among equals. `--large` adds the largest
boards; `--seconds` caps the bot's time per move below its strength's. Games run in `--jobs` processes (the times
are then measured with that many games sharing the cores).

First figure (2 cores, --games 1 --seconds 0.3 --jobs 2, 4 min 13 s; the
small N says little yet; the largest boards and full strength are still to run):

    bot normal, at most 0.3 s a move; 1 games per colour and opponent
    game                                   vs      first W-D-L second W-D-L  win%  p50 s  p95 s  max s
    majorities -size=3                     random        1-0-0        1-0-0   100   0.30   0.30   0.30
    majorities -size=3                     greedy        1-0-0        1-0-0   100   0.30   0.30   0.30
    majorities -size=5                     random        1-0-0        1-0-0   100   0.31   0.32   0.33
    majorities -size=5                     greedy        1-0-0        1-0-0   100   0.31   0.33   0.33
    majority -size=6                       random        1-0-0        1-0-0   100   0.30   0.30   0.30
    majority -size=6                       greedy        1-0-0        1-0-0   100   0.30   0.30   0.30
    majority                               random        1-0-0        1-0-0   100   0.30   0.30   0.31
    majority                               greedy        1-0-0        1-0-0   100   0.30   0.30   0.31
    psychomachia -size=6                   random        1-0-0        1-0-0   100   0.30   0.30   0.30
    psychomachia -size=6                   greedy        1-0-0        1-0-0   100   0.30   0.30   0.30
    psychomachia                           random        1-0-0        1-0-0   100   0.30   0.30   0.31
    psychomachia                           greedy        1-0-0        1-0-0   100   0.30   0.30   0.31
    plurality -size=13                     random        1-0-0        1-0-0   100   0.31   0.32   0.33
    plurality -size=13                     greedy        1-0-0        1-0-0   100   0.31   0.32   0.32
    plurality -board=hex -size=5           random        1-0-0        1-0-0   100   0.30   0.32   0.32
    plurality -board=hex -size=5           greedy        1-0-0        1-0-0   100   0.30   0.31   0.31
    parliament -boards=upper               random        1-0-0        1-0-0   100   0.30   0.31   0.31
    parliament -boards=upper               greedy        1-0-0        1-0-0   100   0.30   0.31   0.33
    parliament -boards=lower               random        1-0-0        1-0-0   100   0.30   0.31   0.32
    parliament -boards=lower               greedy        1-0-0        1-0-0   100   0.30   0.31   0.32
    synch -size=4                          random        1-0-0        1-0-0   100   0.30   0.31   0.31
    synch -size=4                          greedy        1-0-0        1-0-0   100   0.30   0.30   0.30
    synch -size=8                          random        1-0-0        1-0-0   100   0.30   0.31   0.31
    synch -size=8                          greedy        1-0-0        1-0-0   100   0.30   0.31   0.35
    synch -size=8 -order=direction-first   random        1-0-0        1-0-0   100   0.30   0.31   0.31
    synch -size=8 -order=direction-first   greedy        1-0-0        1-0-0   100   0.30   0.31   0.31

After `Game.tally` (issue 20, item 4: a cut-off playout is scored by the
tally margin, and the greedy player plays the best immediate tally margin,
which makes it a far stronger yardstick than the first figure's), 2 cores,
--games 2 --seconds 0.3 --jobs 2, one run per game word (--only), psychomachia
not run. The small N says little; the greedy player now wins most Majority
and Lower-chamber games, where the 80% target is far off:

    bot normal, at most 0.3 s a move; 2 games per colour and opponent
    game                                   vs      first W-D-L second W-D-L  win%  p50 s  p95 s  max s
    majorities -size=3                     random        2-0-0        2-0-0   100   0.30   0.30   0.30
    majorities -size=3                     greedy        1-0-1        2-0-0    75   0.30   0.30   0.30
    majorities -size=5                     random        2-0-0        2-0-0   100   0.30   0.30   0.30
    majorities -size=5                     greedy        2-0-0        1-0-1    75   0.30   0.30   0.31
    majority -size=6                       random        2-0-0        2-0-0   100   0.30   0.30   0.31
    majority -size=6                       greedy        0-0-2        1-0-1    25   0.30   0.30   0.31
    majority                               random        2-0-0        2-0-0   100   0.30   0.31   0.31
    majority                               greedy        0-0-2        0-0-2     0   0.30   0.30   0.31
    plurality -size=13                     random        2-0-0        2-0-0   100   0.30   0.31   0.33
    plurality -size=13                     greedy        2-0-0        2-0-0   100   0.30   0.31   0.32
    plurality -board=hex -size=5           random        2-0-0        2-0-0   100   0.30   0.31   0.32
    plurality -board=hex -size=5           greedy        1-0-1        2-0-0    75   0.30   0.30   0.31
    parliament -boards=upper               random        2-0-0        2-0-0   100   0.30   0.31   0.31
    parliament -boards=upper               greedy        1-0-1        2-0-0    75   0.30   0.31   0.31
    parliament -boards=lower               random        2-0-0        2-0-0   100   0.30   0.31   0.32
    parliament -boards=lower               greedy        0-0-2        1-0-1    25   0.30   0.31   0.31
    synch -size=4                          random        2-0-0        2-0-0   100   0.30   0.31   0.31
    synch -size=4                          greedy        2-0-0        2-0-0   100   0.30   0.31   0.31
    synch -size=8                          random        2-0-0        2-0-0   100   0.30   0.31   0.32
    synch -size=8                          greedy        1-0-1        1-0-1    50   0.30   0.31   0.32
    synch -size=8 -order=direction-first   random        2-0-0        2-0-0   100   0.30   0.31   0.31
    synch -size=8 -order=direction-first   greedy        2-0-0        2-0-0   100   0.30   0.30   0.30
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
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pbmserv.gamekit import Game, get_game  # noqa: E402
from pbmserv.gamekit.search import choose_move, greedy_move  # noqa: E402

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


OPPONENTS: dict[str, Player] = {"random": random_player, "greedy": greedy_player}


@dataclass(frozen=True)
class Match:
    word: str
    options: Mapping[str, str]
    opponent: str
    bot_seat: int
    seed: int
    strength: str
    seconds: float | None


@dataclass(frozen=True)
class Result:
    score: float  # 1 the bot won, 0.5 a draw, 0 it lost
    think: tuple[float, ...]  # the bot's seconds per move


def play_match(match: Match) -> Result:
    game = get_game(match.word)
    rng = random.Random(match.seed)
    state = game.new(match.options, PLAYERS if match.bot_seat == 0 else PLAYERS[::-1])
    think = []
    while (outcome := game.outcome(state)) is None:
        seat = min(game.to_move(state))
        if seat == match.bot_seat:
            started = time.perf_counter()
            move = choose_move(game, state, seat, strength=match.strength, seconds=match.seconds, rng=rng)
            think.append(time.perf_counter() - started)
        else:
            move = OPPONENTS[match.opponent](game, state, seat, rng)
        state = game.play(state, seat, move)
    if not outcome.winners:
        return Result(0.5, tuple(think))
    return Result(1.0 if match.bot_seat in outcome.winners else 0.0, tuple(think))


def label(word: str, options: Mapping[str, str]) -> str:
    return " ".join([word, *(f"-{name}={value}" for name, value in options.items())])


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))] if ordered else 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=10, help="games per colour and opponent")
    parser.add_argument("--strength", default="normal", choices=("easy", "normal", "strong"))
    parser.add_argument("--seconds", type=float, default=None, help="cap on the bot's seconds per move")
    parser.add_argument("--large", action="store_true", help="add the largest boards")
    parser.add_argument("--only", default=None, help="one game word")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    sets = [(w, o) for w, o in MAIN_SETS + (LARGE_SETS if args.large else ()) if args.only in (None, w)]
    matches = [
        Match(word, options, opponent, bot_seat, seed, args.strength, args.seconds)
        for word, options in sets for opponent in OPPONENTS for bot_seat in (0, 1) for seed in range(args.games)
    ]
    print(f"bot {args.strength}" + (f", at most {args.seconds} s a move" if args.seconds else "")
          + f"; {args.games} games per colour and opponent")
    print(f"{'game':<38} {'vs':<7} {'first W-D-L':>11} {'second W-D-L':>12} {'win%':>5}"
          f" {'p50 s':>6} {'p95 s':>6} {'max s':>6}")
    with ProcessPoolExecutor(args.jobs) as pool:
        results = list(zip(matches, pool.map(play_match, matches)))
    for word, options in sets:
        for opponent in OPPONENTS:
            mine = {seat: [r for m, r in results if (m.word, m.options, m.opponent, m.bot_seat)
                           == (word, options, opponent, seat)] for seat in (0, 1)}
            both = mine[0] + mine[1]
            think = [t for r in both for t in r.think]
            tallies = ["-".join(str(sum(r.score == s for r in mine[seat])) for s in (1.0, 0.5, 0.0)) for seat in (0, 1)]
            print(f"{label(word, options):<38} {opponent:<7} {tallies[0]:>11} {tallies[1]:>12}"
                  f" {100 * statistics.mean(r.score for r in both):>5.0f} {percentile(think, 0.5):>6.2f}"
                  f" {percentile(think, 0.95):>6.2f} {max(think, default=0.0):>6.2f}", flush=True)


if __name__ == "__main__":
    main()
