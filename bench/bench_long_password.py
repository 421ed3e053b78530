"""What a signup mail costs the worker with a password of 8, 128 and
200,000 characters (issue 35, F13): a password past 128 characters is
refused as the command is read, before it is hashed or the account made.

    .venv/bin/python bench/bench_long_password.py

In-process on a SQLite file, at the production argon2id cost; each mail
stored and processed as `pbmserv receive` does, its replies delivered to
memory. Printed per length: the median of 5 mails' wall time (stored,
processed, answered), and the Subject of the answer. What is left for
200,000 characters is reading the mail: its Subject, folded into some
3,000 encoded words, is decoded once when it is stored and once when it
is processed.
"""

from __future__ import annotations

import logging
import statistics
import sys
import tempfile
import time
from itertools import count
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pbmserv.config import Settings  # noqa: E402
from pbmserv.mail.backends import MemoryBackend  # noqa: E402
from pbmserv.runtime import Runtime  # noqa: E402
from pbmserv.service.processing.catalog import Catalog  # noqa: E402
from tests.mailtools import make_mail, send_raw  # noqa: E402


def main() -> None:
    logging.disable(logging.CRITICAL)
    workdir = Path(tempfile.mkdtemp(prefix="bench-password-"))
    settings = Settings(database_url=f"sqlite:///{workdir / 'pbmserv.db'}", mail_backend="memory")
    server = Runtime(settings, catalog=Catalog(Catalog.installed()), backend=MemoryBackend())
    server.upgrade_schema()
    numbers = count()
    for length in (8, 128, 200_000):
        times, subject = [], ""
        for _ in range(5):
            n = next(numbers)
            raw = make_mail(f"player{n}@example.org", f"signup player{n} {'x' * length}")
            started = time.perf_counter()
            replies = send_raw(server, raw)
            times.append(time.perf_counter() - started)
            subject = str(replies[0][1]["Subject"])
        print(f"password of {length:>7,} characters: {statistics.median(times) * 1000:6.0f} ms   answer: {subject}")
    server.close()


if __name__ == "__main__":
    main()
