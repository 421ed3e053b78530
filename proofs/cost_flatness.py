"""Cost flatness (issue 21, item 6): the worker's cost per move does not
grow with what the database holds. A generator fills a database made by
pbmserv's own migrations with 100,000 boards and a million moves (the
five games, running and finished, with accounts, ratings, each move's
inbound mail and its board mails), and a second one with 100 boards;
then moves are mailed to boards' reply addresses and processed by the
worker's batch one mail at a time, alternately on the two databases.
Goals: the median CPU time and wall time per move with 100,000 boards
within 1.2x of those with 100, and at move 200 of a board within 1.2x of
those at move 1. Figures also: p95s, and the database's size per 1,000
finished games.

    .venv/bin/python proofs/cost_flatness.py [--short] [--database sqlite|postgresql] [--no-ratio-goal]

CPU time is this process's (the worker's); on PostgreSQL the database
server's own work shows in the wall time only. A progress bar runs on
stderr; the figures come last on stdout. Exit status 0 only when every
goal holds.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine, text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pbmserv.store.database import upgrade  # noqa: E402
from proofs.flatness_fill import Filler, MoveMail, Spec, Writer, fill_engine  # noqa: E402
from proofs.flatness_games import DEEP_MOVE, GAMES, LONG_GAMES, Templates, play_templates  # noqa: E402
from proofs.flatness_measure import (  # noqa: E402
    Probe,
    Sample,
    Server,
    counts,
    database_size,
    password_hash,
    sample_mails,
    settings_for,
)

RATIO_GOAL = 1.2
POSTGRES_SERVER = "postgresql+psycopg://postgres@127.0.0.1:5432"


class Bar:
    """A progress bar on stderr."""

    def __init__(self, label: str, total: int):
        self.label, self.total, self.done, self.shown = label, max(total, 1), 0, -1.0

    def add(self, count: int = 1) -> None:
        self.done += count
        share = min(self.done / self.total, 1.0)
        if share - self.shown >= 0.01 or share == 1.0:
            self.shown = share
            sys.stderr.write(f"\r{self.label:<28} [{'#' * int(share * 40):<40}] {share:4.0%}")
            if share == 1.0:
                sys.stderr.write("\n")
            sys.stderr.flush()


@contextmanager
def databases(kind: str, work: Path, server: str) -> Iterator[tuple[str, str]]:
    """Two empty databases of the kind, made by pbmserv's migrations: for 100 boards and for 100,000; dropped afterwards."""
    if kind == "sqlite":
        small, big = f"sqlite:///{work / 'small.db'}", f"sqlite:///{work / 'big.db'}"
        upgrade(small)
        upgrade(big)
        yield small, big
        return
    names = [f"pbm_flatness_{os.getpid()}_{size}" for size in ("small", "big")]
    admin = create_engine(f"{server}/postgres", isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        for name in names:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        urls = [f"{server}/{name}" for name in names]
        for url in urls:
            upgrade(url)
        yield urls[0], urls[1]
    finally:
        with admin.connect() as connection:
            for name in names:
                connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def probe_specs(templates: Templates, per_game: int, rounds: int, rng: random.Random, first_user: int) -> list[Spec]:
    """Running boards of every game, a few moves in, with room for `rounds` more; two new players each."""
    specs = []
    for index in range(per_game * len(GAMES)):
        game = GAMES[index % len(GAMES)]
        cut = rng.randint(2, 10)
        played = rng.choice([p for p in templates.games[game] if len(p.moves) > cut + rounds + 1])
        specs.append(Spec(played, cut, "running", [first_user + 2 * index, first_user + 2 * index + 1]))
    return specs


def depth_specs(templates: Templates, per_game: int, first_user: int) -> tuple[list[Spec], list[Spec]]:
    """Boards of the long games at move 0 and at move DEEP_MOVE - 1, so that the next move is move 1 or DEEP_MOVE."""
    shallow: list[Spec] = []
    deep: list[Spec] = []
    for index in range(per_game * len(LONG_GAMES)):
        played = templates.long_games(LONG_GAMES[index % len(LONG_GAMES)])[index % 2]
        user = first_user + 4 * index
        shallow.append(Spec(played, 0, "running", [user, user + 1]))
        deep.append(Spec(played, DEEP_MOVE - 1, "running", [user + 2, user + 3]))
    return shallow, deep


def filler_specs(templates: Templates, boards: int, moves: int, users: int, rng: random.Random) -> Iterator[Spec]:
    """`boards` boards with about `moves` moves in all: some games played to
    their end (six in ten of the moves), the rest resigned or abandoned early
    (finished) or still running (15%), between random players. The early
    ends are drawn around what the moves left call for, so the total comes
    out near `moves` whatever the templates' lengths."""
    full_length = statistics.mean(len(p.moves) for games in templates.games.values() for p in games)
    complete = min(0.8, 0.6 * moves / (boards * full_length))
    left = moves
    for index in range(boards):
        played = rng.choice(templates.games[GAMES[index % len(GAMES)]])
        seats = rng.sample(range(1, users + 1), 2)
        if rng.random() < complete:
            left -= len(played.moves)
            yield Spec(played, len(played.moves), "complete", seats)
            continue
        boards_left = boards - index
        mean = max(0.0, left - complete * boards_left * full_length) / ((1 - complete) * boards_left)
        cut = min(rng.randint(0, round(2 * mean)), len(played.moves) - 1)
        ending = "running" if rng.random() < 0.15 else "resigned"
        left -= cut + (ending == "resigned")
        yield Spec(played, cut, ending, seats)


def fill(url: str, mails: dict[str, list[MoveMail]], hash_: str, users: int, specs: list[Spec], extra: Iterable[Spec] = (),
         bar: Bar | None = None) -> list[int]:
    """Fill a database: accounts, the boards of `specs` first, then those of
    `extra`; returns the numbers of the boards of `specs`."""
    engine = fill_engine(url)
    filler = Filler(Writer(engine, bar.add if bar is not None else lambda count: None), mails, hash_, random.Random(7))
    filler.add_users(users)
    numbers = [filler.add_board(spec) for spec in specs]
    for spec in extra:
        filler.add_board(spec)
    filler.writer.settle()
    if bar is not None:
        bar.add(bar.total)
    engine.dispose()
    return numbers


def summary(samples: list[Sample]) -> dict[str, float]:
    def p95(values: list[float]) -> float:
        return sorted(values)[max(0, round(0.95 * len(values)) - 1)]

    cpu, wall = [s.cpu * 1000 for s in samples], [s.wall * 1000 for s in samples]
    return {"cpu_median": statistics.median(cpu), "cpu_p95": p95(cpu), "wall_median": statistics.median(wall), "wall_p95": p95(wall)}


def compare(name: str, base_label: str, base: list[Sample], other_label: str, other: list[Sample]) -> tuple[list[str], dict[str, float]]:
    a, b = summary(base), summary(other)
    ratios = {key: b[key] / a[key] for key in a}
    lines = [f"{name} ({len(base)} and {len(other)} moves, ms per move):"]
    for label, figures in ((base_label, a), (other_label, b)):
        lines.append(f"  {label:<30} CPU median {figures['cpu_median']:7.2f}  p95 {figures['cpu_p95']:7.2f}   "
                     f"wall median {figures['wall_median']:7.2f}  p95 {figures['wall_p95']:7.2f}")
    lines.append(f"  {'ratio':<30} CPU median {ratios['cpu_median']:7.2f}x p95 {ratios['cpu_p95']:7.2f}x  "
                 f"wall median {ratios['wall_median']:7.2f}x p95 {ratios['wall_p95']:7.2f}x")
    return lines, ratios


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--short", action="store_true", help="2,000 boards and 20,000 moves, fewer samples (CI)")
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--postgres-server", default=POSTGRES_SERVER, help="where --database postgresql makes its databases")
    parser.add_argument("--no-ratio-goal", action="store_true", help="report the ratios but do not judge them (CI)")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))  # the temporary files and databases go too
    boards, moves = (2_000, 20_000) if args.short else (100_000, 1_000_000)
    probes_per_game, rounds, depth_per_game = (4, 2, 6) if args.short else (20, 3, 50)
    rng = random.Random(21)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="pbm-flatness-") as folder:
        work = Path(folder)
        key_file = work / "pbmserv.key"
        key_file.write_bytes(os.urandom(32))
        key_file.chmod(0o600)  # a key others may read is refused
        templates = play_templates(3 if args.short else 10)
        print_stage("templates played", started)
        mails, quoted = sample_mails(work, key_file, templates, 6 if args.short else 16)
        print_stage("sample mails made", started)
        probes = probe_specs(templates, probes_per_game, rounds, rng, 1)
        shallow, deep = depth_specs(templates, depth_per_game, 1 + 2 * len(probes))
        depth_users = 4 * len(shallow)
        users = max(boards // 25, 2 * len(probes) + depth_users)
        with databases(args.database, work, args.postgres_server) as (small_url, big_url):
            hash_ = password_hash(settings_for(small_url, key_file))
            numbers = fill(small_url, mails, hash_, 2 * len(probes), probes)
            fillers = boards - len(probes) - 2 * len(shallow)
            filler_moves = moves - sum(s.stored_moves for s in [*probes, *shallow, *deep])
            expected_rows = int(moves * 4.3 + boards * 4 + users * 3)
            big_numbers = fill(big_url, mails, hash_, users, [*probes, *shallow, *deep],
                               filler_specs(templates, fillers, filler_moves, users, rng), Bar(f"filling {boards:,} boards", expected_rows))
            assert big_numbers[:len(probes)] == numbers, "the probes have the same numbers in both databases"
            print_stage("databases filled", started)
            report, ratios, held = measure(small_url, big_url, key_file, quoted, probes, numbers, shallow, deep,
                                           big_numbers[len(probes):], rounds)
            print_stage("measured", started)
    print(f"cost flatness on {args.database}{' (short)' if args.short else ''}, {time.monotonic() - started:.0f} s, "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("\n".join(report))
    failures = [] if args.no_ratio_goal else [f"{name} {ratio:.2f}x (goal {RATIO_GOAL}x)" for name, ratio in ratios.items() if ratio > RATIO_GOAL]
    if held["boards"] != boards or abs(held["moves"] - moves) > 0.05 * moves:
        failures.append(f"the generator made {held['boards']:,} boards and {held['moves']:,} moves, not {boards:,} and about {moves:,}")
    if failures:
        print(f"goals missed: {'; '.join(failures)}")
        return 1
    judged = "ratios not judged (--no-ratio-goal)" if args.no_ratio_goal else f"every median within {RATIO_GOAL}x"
    print(f"{boards:,} boards and {held['moves']:,} moves generated, every move played, {judged}: every goal holds")
    return 0


def print_stage(name: str, started: float) -> None:
    sys.stderr.write(f"{name} after {time.monotonic() - started:.0f} s\n")


def measure(small_url: str, big_url: str, key_file: Path, quoted: dict[str, str],
            probes: list[Spec], numbers: list[int], shallow: list[Spec], deep: list[Spec], depth_numbers: list[int],
            rounds: int) -> tuple[list[str], dict[str, float], dict[str, int]]:
    """The figures (lines), the ratios judged, and what the big database holds."""
    report = []
    held: dict[str, int] = {}
    for url in (small_url, big_url):
        engine = create_engine(url)
        size, tables = database_size(engine)
        held = counts(engine)
        engine.dispose()
        finished = held["finished boards"]
        report.append(f"database with {held['boards']:,} boards ({finished:,} finished), {held['moves']:,} moves, {held['inbound_mails']:,} "
                      f"inbound mails, {held['outbox']:,} outbox mails, {held['users']:,} accounts: {size / 1e6:,.1f} MB on disk")
        if finished:
            report.append(f"  {size * 1000 / finished / 1e6:,.1f} MB per 1,000 finished games (the whole database over its finished boards)")
        if tables:
            biggest = sorted(tables.items(), key=lambda item: -item[1])[:4]
            report.append("  tables with indexes and TOAST: " + ", ".join(f"{name} {bytes_ / 1e6:,.1f} MB" for name, bytes_ in biggest))
    boards = held["boards"]
    small, big = Server(settings_for(small_url, key_file), quoted), Server(settings_for(big_url, key_file), quoted)
    try:
        pairs = [(Probe(spec, number), Probe(spec, number)) for spec, number in zip(probes, numbers)]
        warm, measured = pairs[:len(GAMES)], pairs[len(GAMES):]
        for on_small, on_big in warm:  # games loaded, statements compiled: not counted
            small.move(on_small)
            big.move(on_big)
        bar = Bar("moves", len(measured) * rounds + len(shallow) * 2)
        few: list[Sample] = []
        many: list[Sample] = []
        for round_ in range(rounds):  # alternately, so that the machine's load weighs on both alike
            for index, (on_small, on_big) in enumerate(measured):
                if (index + round_) % 2:
                    few.append(small.move(on_small))
                    many.append(big.move(on_big))
                else:
                    many.append(big.move(on_big))
                    few.append(small.move(on_small))
                bar.add()
        first = [Probe(spec, number) for spec, number in zip(shallow, depth_numbers)]
        later = [Probe(spec, number) for spec, number in zip(deep, depth_numbers[len(shallow):])]
        at_first: list[Sample] = []
        at_deep: list[Sample] = []
        for index, (one, two) in enumerate(zip(first, later)):
            if index % 2:
                at_first.append(big.move(one))
                at_deep.append(big.move(two))
            else:
                at_deep.append(big.move(two))
                at_first.append(big.move(one))
            bar.add(2)
        unplayed = small.unplayed([pair[0] for pair in pairs]) + big.unplayed([pair[1] for pair in pairs] + first + later)
        assert not unplayed, f"moves not on their boards: {unplayed}"
    finally:
        small.close()
        big.close()
    lines, by_boards = compare("stored boards", f"{len(probes)} boards", few, f"{boards:,} boards", many)
    report += lines
    lines, by_depth = compare(f"move number (on {'/'.join(LONG_GAMES)}, {boards:,} boards)", "move 1", at_first, f"move {DEEP_MOVE}", at_deep)
    report += lines
    ratios = {f"boards {key}": by_boards[key] for key in ("cpu_median", "wall_median")}
    ratios |= {f"move {DEEP_MOVE} {key}": by_depth[key] for key in ("cpu_median", "wall_median")}
    return report, ratios, held


if __name__ == "__main__":
    sys.exit(main())
