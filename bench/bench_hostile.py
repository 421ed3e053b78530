"""How long the worker spends on each hostile mail of the corpus
(`tests/hostile_corpus.py`), at the production argon2id cost: the time a
player's move that arrives behind such a mail waits for it.

    .venv/bin/python bench/bench_hostile.py

The corpus is replayed in its order, in-process on a SQLite file, each
mail stored as `pbmserv receive` stores it and then processed alone, so
that its worker time is its own (wall clock and CPU). A restart is a new
process's Runtime (nothing remembered). Mails that SMTP intake refuses
(a NUL in the envelope or the header) are left out. Printed per attack:
its mails, the worker time of all of them and of the slowest one, and
the replies they made; last, the slowest single mail of the corpus.
"""

from __future__ import annotations

import logging
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import func, select  # noqa: E402

from pbmserv.config import Settings  # noqa: E402
from pbmserv.mail.backends import MemoryBackend  # noqa: E402
from pbmserv.runtime import Runtime  # noqa: E402
from pbmserv.service.processing.catalog import Catalog  # noqa: E402
from pbmserv.store.models import OutboxMail  # noqa: E402
from tests.hostile_corpus import Attack, PlayerMail, Restart, mails_of, replay  # noqa: E402
from tests.toygame import Toy  # noqa: E402


def runtime(workdir: Path) -> Runtime:
    settings = Settings(database_url=f"sqlite:///{workdir / 'pbmserv.db'}", mail_backend="memory")
    made = Runtime(settings, catalog=Catalog([*Catalog.installed(), Toy()]), backend=MemoryBackend())
    made.upgrade_schema()
    return made


def outbox_rows(server: Runtime) -> int:
    with server.engine.connect() as connection:
        return connection.scalar(select(func.count(OutboxMail.id))) or 0


def main() -> None:
    logging.disable(logging.CRITICAL)  # the server logs each refusal and cap: here the times are what counts
    workdir = Path(tempfile.mkdtemp(prefix="bench-hostile-"))
    server = runtime(workdir)
    print(f"argon2id: t={server.settings.password_time_cost}, m={server.settings.password_memory_kib} KiB; {workdir}")
    print(f"{'step':<34} {'mails':>5} {'all s':>7} {'slowest s':>9} {'CPU s':>6} {'replies':>7}")
    slowest = (0.0, "")
    players_total = [0.0, 0]
    for step in replay():
        if isinstance(step, Restart):
            server.close()
            server = runtime(workdir)
            continue
        mails = [mail for mail in mails_of(step) if not mail.refusable]
        before = outbox_rows(server)
        wall = cpu = longest = 0.0
        for mail in mails:
            server.intake.store(mail.raw, mail.envelope_sender)
            started, started_cpu = time.perf_counter(), time.process_time()
            server.processor.process_pending()
            took = time.perf_counter() - started
            wall, cpu, longest = wall + took, cpu + time.process_time() - started_cpu, max(longest, took)
            if took > slowest[0]:
                slowest = (took, mail.name)
        if isinstance(step, PlayerMail):
            players_total[0] += wall
            players_total[1] += 1
            continue
        assert isinstance(step, Attack)
        print(f"{step.name:<34} {len(mails):>5} {wall:>7.3f} {longest:>9.3f} {cpu:>6.3f} {outbox_rows(server) - before:>7}")
    server.close()
    print(f"players' own mails: {players_total[1]}, {players_total[0] / max(players_total[1], 1) * 1000:.1f} ms each on average")
    print(f"slowest single mail: {slowest[1]}, {slowest[0]:.3f} s")


if __name__ == "__main__":
    main()
