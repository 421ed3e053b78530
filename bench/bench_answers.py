"""What the costliest answers cost the worker (issue 35, findings F1, F4
and F5): mails of `moves` and `show` commands, processed through a
Runtime one by one, as `pbmserv receive` stores them.

    .venv/bin/python bench/bench_answers.py [--database-url URL] [--strangers 48]

Last, what the hourly cap on board mails costs a board mail, for an
address sent 200 board mails of 5 KB in the hour: a count in the
database (what every board mail paid when it was counted each time) and
`MailCaps.take` with the worker's tally (`rates.Tallies`).

The boards: Majorities on the size-7 board after its first move (the
player to move places two stones: 6,670 legal moves), and Move In Synch,
In Opposition on the 26x26 board with 3,691 moves (a seeded random game;
its moves are written straight into the tables, as a long game would
have left them). Then, each mail from a stranger of its own, with no
password:

- F1: STRANGERS mails, each `multiple` with 20 x `majorities moves N`;
- F4: 4 mails, each `multiple` with 10 x `synch show N#3600`;
- F5: 4 mails of a stranger with a forged Reply-To naming one victim,
  each `multiple` with 10 x `synch show N#k` (k from 3,000 on).

Printed per attack: the mails, the worker's ms per mail (median and the
slowest), ms per command, and the mails and bytes (raw, as queued in the
outbox) its recipients got. Players use the production argon2id cost;
the database is a SQLite file in a temporary directory unless
`--database-url` names an empty PostgreSQL database (its tables are made).
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import func, select  # noqa: E402

from pbmserv.config import Settings  # noqa: E402
from pbmserv.mail.backends import MemoryBackend  # noqa: E402
from pbmserv.runtime import Runtime  # noqa: E402
from pbmserv.service.processing.catalog import Catalog  # noqa: E402
from pbmserv.service.processing.rates import HOUR, MailCaps  # noqa: E402
from pbmserv.store import counts, outbox, records  # noqa: E402
from pbmserv.store.models import OutboxMail  # noqa: E402
from pbmserv.store.states import Kind  # noqa: E402
from tests.long_boards import long_synch_board  # noqa: E402
from tests.mailtools import make_mail, send, signup  # noqa: E402

SYNCH_MOVES = 3691


@dataclass(frozen=True)
class Attack:
    name: str
    mails: list[bytes]
    commands: int  # per mail


def runtime(database_url: str, workdir: Path) -> Runtime:
    settings = Settings(database_url=database_url, mail_backend="memory", key_file=str(workdir / "pbmserv.key"))
    made = Runtime(settings, catalog=Catalog.installed(), backend=MemoryBackend())
    made.upgrade_schema()
    return made


def board_number(server: Runtime, game: str) -> int:
    with server.engine.connect() as connection:
        number = records.newest_board_number(connection, game)
    assert number is not None, f"the {game} board was made"
    return number


def outbox_totals(server: Runtime) -> tuple[int, int]:
    with server.engine.connect() as connection:
        mails, size = connection.execute(select(func.count(OutboxMail.id), func.sum(func.length(OutboxMail.raw)))).one()
    return int(mails), int(size or 0)


def board_cap_costs(server: Runtime, mails: int = 200, takes: int = 250) -> None:
    address, now = "player@example.org", datetime.now(UTC)
    rows: list[dict[str, object]] = [
        {"created_at": now - timedelta(seconds=10 * n), "inbound_id": None, "recipient": address, "message_id": f"<{n}@b>",
         "raw": b"x" * 5000, "size": 5000, "status": "sent", "kind": "board", "attempts": 1, "next_try_at": now,
         "last_error": "", "claimed_by": "", "claim_token": ""}
        for n in range(mails)
    ]
    with server.engine.begin() as connection:
        outbox.queue(connection, rows)
    with server.engine.begin() as connection:
        started = time.perf_counter()
        for _ in range(takes):
            counts.mails_since(connection, address, (Kind.BOARD,), now - HOUR)
        counted = (time.perf_counter() - started) / takes
        caps = MailCaps(connection, server.settings)
        started = time.perf_counter()
        for _ in range(takes):
            caps.take(address, Kind.BOARD, now, 5000)
            caps.written()  # as a batch does: its rows are then in the outbox, and in the tally
        tallied = (time.perf_counter() - started) / takes
        connection.rollback()
    print(f"board cap, {mails} board mails in the hour: a count {counted * 1e6:.0f} us, a take with the tally {tallied * 1e6:.0f} us")


def multiple(sender: str, lines: list[str], reply_to: str = "") -> bytes:
    return make_mail(sender, "multiple", "\n".join(lines) + "\n", headers={"Reply-To": reply_to} if reply_to else None)


def run(server: Runtime, attack: Attack) -> None:
    times = []
    mails_before, bytes_before = outbox_totals(server)
    for raw in attack.mails:
        server.intake.store(raw, None)
        started = time.perf_counter()
        server.processor.process_pending()
        times.append((time.perf_counter() - started) * 1000)
    mails, size = outbox_totals(server)
    median = statistics.median(times)
    print(
        f"{attack.name:<6} {len(attack.mails):>5} {median:>9.1f} {max(times):>9.1f} {median / attack.commands:>8.1f}"
        f" {mails - mails_before:>7} {(size - bytes_before) / 1000:>10.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database-url", default="")
    parser.add_argument("--strangers", type=int, default=48)
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)  # the server logs each cap it meets: here the times are what counts
    workdir = Path(tempfile.mkdtemp(prefix="bench-answers-"))
    url = args.database_url or f"sqlite:///{workdir / 'pbmserv.db'}"
    server = runtime(url, workdir)
    signup(server, "alice", "secret1")
    signup(server, "bob", "secret2")
    send(server, "alice@example.org", "majorities challenge -size=7 alice bob")
    majorities = board_number(server, "majorities")
    send(server, "alice@example.org", f"majorities move {majorities} alice secret1 a1")
    synch = long_synch_board(server, SYNCH_MOVES)
    print(f"{url}: majorities board {majorities} (size 7, two stones to place), synch board {synch} ({SYNCH_MOVES} moves)")
    print(f"{'attack':<6} {'mails':>5} {'ms/mail':>9} {'slowest':>9} {'ms/cmd':>8} {'replies':>7} {'KB sent':>10}")
    attacks = [
        Attack("F1", [
            multiple(f"stranger{n}@strangers.example", [f"majorities moves {majorities}"] * 20)
            for n in range(args.strangers)
        ], 20),
        Attack("F4", [
            multiple(f"looker{n}@strangers.example", [f"synch show {synch}#3600"] * 10) for n in range(4)
        ], 10),
        Attack("F5", [
            multiple("forger@strangers.example", [f"synch show {synch}#{3000 + 10 * n + k}" for k in range(10)],
                     reply_to="victim@victims.example")
            for n in range(4)
        ], 10),
    ]
    for attack in attacks:
        run(server, attack)
    with server.engine.connect() as connection:
        victim = connection.execute(
            select(func.count(OutboxMail.id), func.sum(func.length(OutboxMail.raw)))
            .where(OutboxMail.recipient == "victim@victims.example")
        ).one()
    print(f"F5 victim@victims.example: {victim[0]} mails, {int(victim[1] or 0) / 1000:.1f} KB")
    board_cap_costs(server)
    server.close()


if __name__ == "__main__":
    main()
