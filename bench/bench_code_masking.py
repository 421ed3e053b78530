"""What finding a player's reply-address codes in a mail costs the worker
(issue 35, F10): `requests.with_codes`, run for every mail, on a SQLite
file with BOARDS running boards, and `mask_codes` on a mail of the
largest size.

    .venv/bin/python bench/bench_code_masking.py [BOARDS]

Printed, the median of 200 runs each: a reply to a reply address (the
move and a quoted board mail: no read of the database), a move with its
password and a comment (the seats of its board: two indexed reads), a
chat (every seat of its author on every running board: one read of all
running boards, as JSON text), and masking a 256 KB text without and with
a code in it.
"""

from __future__ import annotations

import logging
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import text  # noqa: E402

from pbmserv.config import Settings  # noqa: E402
from pbmserv.mail.backends import MemoryBackend  # noqa: E402
from pbmserv.mail.inbound import parse_mail  # noqa: E402
from pbmserv.protocol import parse_request  # noqa: E402
from pbmserv.protocol.reply import parse_reply  # noqa: E402
from pbmserv.runtime import Runtime  # noqa: E402
from pbmserv.service.play.reply_addresses import mask_codes, token_of  # noqa: E402
from pbmserv.service.processing.catalog import Catalog  # noqa: E402
from pbmserv.service.processing.requests import with_codes  # noqa: E402
from tests.mailtools import make_mail, send, signup  # noqa: E402
from tests.toygame import Toy  # noqa: E402

RUNS = 200


def median_ms(work: Callable[[], object]) -> float:
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def main(boards: int) -> None:
    logging.disable(logging.CRITICAL)
    workdir = Path(tempfile.mkdtemp(prefix="bench-codes-"))
    settings = Settings(
        database_url=f"sqlite:///{workdir / 'pbmserv.db'}", mail_backend="memory", password_time_cost=1,
        password_memory_kib=1024,
    )
    server = Runtime(settings, catalog=Catalog([*Catalog.installed(), Toy()]), backend=MemoryBackend())
    server.upgrade_schema()
    for userid in ("alice", "bob", "carol", "dave"):
        signup(server, userid, "secret1")
    mails = send(server, "alice@example.org", "toy challenge alice bob")
    [address] = [str(m["Reply-To"]) for to, m in mails if to == "alice@example.org" and m["Reply-To"]]
    send(server, "carol@example.org", "toy challenge carol dave")
    with server.engine.begin() as connection:  # copies of the two boards, numbered on; 20 of them alice's
        columns = "game_type, options, timers, seats, state, move_count, status, created_at, updated_at, version"
        for copy in range(boards - 2):
            connection.execute(text(
                f"INSERT INTO boards (board, {columns}) SELECT :number, {columns} FROM boards WHERE board = :source"
            ), {"number": 1000 + copy, "source": 101 if copy < 20 else 102})
    token = token_of(address, settings.address)
    assert token is not None
    quoted = "\n".join(f"> {line}" for line in mails[0][1].get_content().splitlines())
    reply = make_mail("alice@example.org", "Re: Toy Board 101", f"b2\n\nOn Monday, pbmserv wrote:\n{quoted}\n")
    wish = "this is a great game, thanks! see you next time"  # 16 letters of a code's alphabet in a row: looked up
    cases = [
        ("reply to a reply address", reply, ("toy", 101)),
        ("move, comment of no code's letters", make_mail("alice@example.org", "toy move 101 alice secret1 b2", "good luck"), None),
        ("move, comment that may hold one", make_mail("alice@example.org", "toy move 101 alice secret1 b2", wish), None),
        ("message that may hold one", make_mail("alice@example.org", "message alice secret1 bob", wish), None),
    ]
    key = server.intake.key
    with server.engine.connect() as connection:
        for name, raw, board in cases:
            mail = parse_mail(raw)
            if board is None:
                request, known = parse_request(mail.subject, mail.body, ["toy"]), None
            else:
                request = parse_reply(mail.subject, mail.body, "toy", 101, "alice", ["toy"])
                known = {("toy", 101, "alice"): token.mac}
            run = partial(with_codes, connection, key, request, mail, known)
            print(f"{name:<38} {median_ms(run):7.3f} ms")
    big = ("a quiet line of a long mail, nothing in it\n" * 6_000)[:256_000]
    with_code = big[:128_000] + f" {address} " + big[128_000:]
    print(f"{'mask_codes, 256 KB, no code':<38} {median_ms(lambda: mask_codes(big, [token.mac])):7.3f} ms")
    print(f"{'mask_codes, 256 KB, a code in it':<38} {median_ms(lambda: mask_codes(with_code, [token.mac])):7.3f} ms")
    print(f"{boards:,} running boards, 21 of them alice's; {workdir}")
    server.close()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
