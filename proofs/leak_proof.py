"""Hidden information never leaks (issue 21, item 5): the swap test of
tests/test_leaks.py over 1,000 random games of Psychomachia (every board
size, 6x6 to 14x14, the stones drawn or the default) and Parliament (the
upper chamber, the lower, both). Each game is played through two whole
servers (mail in, store, process, deliver) that differ only in alice's
secret; every mail bob (her opponent) and carol (a subscriber who plays no
part) receive until the secret shows must be the same in both runs: board
mails, show, showas, all show, games, history, moves, preview, queue, chat,
draw offers and undo requests, every kind of error mail; Subject, text,
headers and the length of the body as delivered. After the game ends, the
mail to bob that ends it and carol's show must differ (the control).

    .venv/bin/python proofs/leak_proof.py [--short] [--database sqlite|postgresql] [--games N] [--workers N]

Both runs are SQLite files of their own by default; `--database postgresql`
puts run A on a PostgreSQL database (PBMSERV_PROOF_POSTGRES_URL, default
postgresql://postgres@127.0.0.1:5432/postgres names the server; one
database per worker is made and dropped). Goals: 0 leaks, 0 failed
controls, 0 games that broke off; in the full run, every kind of mail
compared at least once. A progress bar runs on stderr; the figures come
last on stdout. Exit status 0 only when every goal holds.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import create_engine, text  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

from pbmserv.config import Settings  # noqa: E402
from pbmserv.mail.backends import MemoryBackend  # noqa: E402
from pbmserv.runtime import Runtime  # noqa: E402
from pbmserv.store.database import normalise_url, upgrade  # noqa: E402
from pbmserv.store.models import Base  # noqa: E402
from tests.conftest import TEST_PASSWORD_COST, FakeClock  # noqa: E402
from tests.leak_match import ControlFailed  # noqa: E402
from tests.leak_pairs import Leak, Pair, fresh_copy, twin_of  # noqa: E402
from tests.leak_parliament import play_parliament  # noqa: E402
from tests.leak_psychomachia import options_for, play_psychomachia  # noqa: E402

SIZES = (6, 8, 10, 12, 14)
CHAMBERS = ("upper", "lower", "both")
POSTGRES_SERVER = normalise_url(os.environ.get("PBMSERV_PROOF_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres"))
#: the kinds of mail the full run must have compared at least once
KINDS = (
    "move", "move error", "challenge", "subscribe", "show", "show error", "showas", "showas error", "all show",
    "games", "history", "moves", "moves error", "preview", "preview error", "queue", "queue error", "chat",
    "resign error", "frobnicate error", "move propose", "move undo", "move accept", "move reject",
    "move propose error", "move undo error", "move accept error",
)


@dataclass(frozen=True)
class Spec:
    game: str
    seed: int
    options: tuple[tuple[str, str], ...]

    @property
    def label(self) -> str:
        return f"{self.game} " + " ".join(f"-{name}={value}" for name, value in self.options if name != "stones")


@dataclass
class Result:
    spec: Spec
    compared: int = 0
    errors: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    leak: str = ""
    control: str = ""  # a control that saw no difference
    failure: str = ""  # the game broke off
    cpu_seconds: float = 0.0


def specs(count: int, seed: int) -> list[Spec]:
    """Half Psychomachia (the sizes in turn), half Parliament (the chambers in turn)."""
    rng = random.Random(seed)
    made = []
    for number in range(count):
        if number % 2 == 0:
            size = SIZES[(number // 2) % len(SIZES)]
            options = options_for(rng, size)
            made.append(Spec("psychomachia", seed + number, tuple(options.items())))
        else:
            made.append(Spec("parliament", seed + number, (("boards", CHAMBERS[(number // 2) % len(CHAMBERS)]),)))
    return made


# -- a worker: its two servers, emptied for each game --------------------------------------
class Worker:
    #: run A and run B, kept from game to game (their SQL compiled once)
    runs: tuple[Runtime, Runtime]


def start_worker(directory: str, template: str, postgres_urls: multiprocessing.Queue[str] | None) -> None:
    settings = replace(Settings(), key_file=str(Path(template).with_name("key")), mail_backend="memory", **TEST_PASSWORD_COST)
    folder = Path(directory)
    url_a = postgres_urls.get() if postgres_urls is not None else fresh_copy(Path(template), folder / f"run-a-{os.getpid()}.db")
    run_a = Runtime(replace(settings, database_url=url_a), clock=FakeClock(), backend=MemoryBackend())
    Worker.runs = (run_a, twin_of(run_a, Path(template), folder / f"run-b-{os.getpid()}.db", FakeClock()))


def empty(runtime: Runtime) -> None:
    """Every table emptied: the next game starts on a new server's database."""
    tables = list(reversed(Base.metadata.sorted_tables))
    with runtime.engine.begin() as connection:
        if runtime.engine.dialect.name == "postgresql":
            connection.execute(text(f"TRUNCATE {', '.join(table.name for table in tables)} RESTART IDENTITY CASCADE"))
        else:
            for table in tables:
                connection.execute(table.delete())


def play(spec: Spec) -> Result:
    result = Result(spec)
    began = time.process_time()
    run_a, run_b = Worker.runs
    for runtime in Worker.runs:
        empty(runtime)
    pair = Pair(run_a, run_b, spec.game)
    rng = random.Random(f"{spec.game} {spec.seed}")
    player = play_psychomachia if spec.game == "psychomachia" else play_parliament
    try:
        player(pair, rng, dict(spec.options))
    except Leak as leak:
        result.leak = str(leak)
    except ControlFailed as failed:
        result.control = str(failed)
    except Exception:  # a game that breaks off is counted and shown; the others go on
        result.failure = traceback.format_exc() + "\n".join(pair.log[-8:])
    result.compared, result.errors, result.kinds = pair.compared, pair.errors, pair.kinds
    result.cpu_seconds = time.process_time() - began
    return result


# -- PostgreSQL: a database per worker ------------------------------------------------------
def make_databases(count: int) -> list[str]:
    server = make_url(POSTGRES_SERVER)
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    urls = []
    with admin.connect() as connection:
        for number in range(count):
            name = f"pbm_leakproof_{os.getpid()}_{number}"
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
            connection.execute(text(f'CREATE DATABASE "{name}"'))
            url = server.set(database=name).render_as_string(hide_password=False)
            upgrade(url)
            urls.append(url)
    admin.dispose()
    return urls


def drop_databases(urls: list[str]) -> None:
    admin = create_engine(make_url(POSTGRES_SERVER), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        for url in urls:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{make_url(url).database}" WITH (FORCE)'))
    admin.dispose()


# -- the run ----------------------------------------------------------------------------------
def progress(done: int, total: int, leaks: int, began: float) -> None:
    width = 40
    filled = width * done // total
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} games, {leaks} leaks, {time.monotonic() - began:.0f} s")
    sys.stderr.flush()


def run(plan: list[Spec], workers: int, database: str) -> tuple[list[Result], float]:
    root = Path(tempfile.mkdtemp(prefix="pbm-leakproof-", dir="/dev/shm" if Path("/dev/shm").is_dir() else None))
    template = root / "template.db"
    upgrade(f"sqlite:///{template}")
    (root / "key").write_bytes(os.urandom(32))
    (root / "key").chmod(0o600)  # a key others may read is refused
    postgres: list[str] = []
    results: list[Result] = []
    began = time.monotonic()
    try:
        postgres = make_databases(workers) if database == "postgresql" else []
        context = multiprocessing.get_context("fork")
        urls = context.Queue() if postgres else None
        for url in postgres:
            assert urls is not None
            urls.put(url)
        with context.Pool(workers, start_worker, (str(root), str(template), urls)) as pool:
            signal.signal(signal.SIGTERM, signal.default_int_handler)  # here only: the workers keep theirs
            try:
                for result in pool.imap_unordered(play, plan):
                    results.append(result)
                    progress(len(results), len(plan), sum(1 for r in results if r.leak), began)
            except KeyboardInterrupt:  # stopped (SIGINT, SIGTERM): the figures of the games played so far
                sys.stderr.write("\ninterrupted")
        sys.stderr.write("\n")
    finally:
        if postgres:
            drop_databases(postgres)
        shutil.rmtree(root, ignore_errors=True)
    return results, time.monotonic() - began


def report(results: list[Result], plan: list[Spec], seconds: float, database: str, full: bool) -> bool:
    leaks = [r for r in results if r.leak]
    controls = [r for r in results if r.control]
    failures = [r for r in results if r.failure]
    for title, bad, text_of in (("LEAK", leaks, "leak"), ("CONTROL FAILED", controls, "control"), ("BROKE OFF", failures, "failure")):
        for r in bad[:3]:
            print(f"== {title}: {r.spec.label} seed {r.spec.seed}\n{getattr(r, text_of)}\n")
    kinds: Counter[str] = Counter()
    for r in results:
        kinds.update(r.kinds)
    missing = [kind for kind in KINDS if not kinds[kind]]
    by_label = Counter(r.spec.label for r in results)
    cpu = sorted(r.cpu_seconds for r in results) or [0.0]
    print(f"database: run A {database}, run B sqlite; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("games by kind: " + ", ".join(f"{label.strip()} {n}" for label, n in sorted(by_label.items())))
    print("mails compared by command: " + ", ".join(f"{kind} {n}" for kind, n in kinds.most_common()))
    print(f"refused commands of bob's and carol's compared: {sum(r.errors for r in results)}")
    print(f"CPU seconds per game (one worker): median {cpu[len(cpu) // 2]:.2f}, max {cpu[-1]:.2f}, total {sum(cpu):.0f}")
    goals = [
        (len(results) == len(plan), f"games played: {len(results)} of {len(plan)}"),
        (not failures, f"games that broke off: {len(failures)} (goal 0) {[r.spec.seed for r in failures]}"),
        (not controls, f"controls that saw no difference after the reveal: {len(controls)} (goal 0)"),
        (not missing or not full, f"kinds of mail never compared: {len(missing)} {missing} ({'goal 0' if full else 'no goal in the short run'})"),
    ]
    for held, line in goals:
        print(f"{line}{'' if held else '   <-- goal missed'}")
    print(f"games: {len(results)}; mails compared: {sum(r.compared for r in results)}; seconds: {seconds:.0f}")
    ok = all(held for held, _ in goals) and not leaks
    print(f"leaks: {len(leaks)} (goal 0); " + ("every goal holds" if ok else "a goal is missed"))
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--short", action="store_true", help="20 games, for the test suite")
    parser.add_argument("--games", type=int, help="how many games (default 1,000; --short: 20)")
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite", help="where run A is stored")
    parser.add_argument("--workers", type=int, default=2, help="processes playing games at once")
    parser.add_argument("--seed", type=int, default=0, help="the first game's seed")
    args = parser.parse_args()
    count = args.games or (20 if args.short else 1000)
    plan = specs(count, args.seed)
    results, seconds = run(plan, args.workers, args.database)
    return 0 if report(results, plan, seconds, args.database, full=not args.short) else 1


if __name__ == "__main__":
    sys.exit(main())
