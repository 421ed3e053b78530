"""SQLite under parallel `pbmserv receive`, the README's Postfix pipe set-up:
several processes write one database at once, and none of them may touch
its files behind SQLite's back."""

from __future__ import annotations

import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pbmserv.store.database import make_engine, upgrade, writing
from pbmserv.store.spool import spool_file
from tests.mailtools import make_mail
from tests.test_cli import receive
from tests.test_delivery import another_writer

STREAMS = 3
ROUNDS = 2
MAILS_PER_STREAM = 4
SIGNUPS_PER_MAIL = 20


def long_mail(stream: int, round_: int, number: int) -> bytes:
    """A `multiple` mail whose transaction is long: many signups, a
    challenge for each pair of them, and moves on boards that may or may
    not exist (refused moves are answered too)."""
    users = [f"s{stream}r{round_}m{number}u{i}" for i in range(SIGNUPS_PER_MAIL)]
    lines = [f"signup {user} pw{user}" for user in users]
    lines += [f"toy challenge {first} {second}" for first, second in zip(users[::2], users[1::2])]
    lines += [f"toy move {101 + i} {users[0]} pw{users[0]} b2" for i in range(SIGNUPS_PER_MAIL // 2)]
    return make_mail(f"{users[0]}@example.org", "multiple", "\n".join(lines))


def stream_of_receives(tmp_path: Path, stream: int, round_: int) -> list[int]:
    return [
        receive(
            tmp_path, long_mail(stream, round_, number),
            PBMSERV_REPLIES_PER_HOUR="10000", PBMSERV_ERROR_REPLIES_PER_HOUR="10000",
        ).returncode
        for number in range(MAILS_PER_STREAM)
    ]


def test_parallel_receive_streams_leave_the_database_intact(tmp_path: Path) -> None:
    """Each process's SQLite connections hold POSIX locks on the database
    file; a descriptor of it opened and closed outside SQLite (to fsync it,
    say) drops them all, and another process, closing, then takes itself
    for the last one and checkpoints and deletes the WAL under the first:
    "database disk image is malformed", or committed mail gone."""
    database = tmp_path / "pbmserv.db"
    upgrade(f"sqlite:///{database}")
    sent = 0
    with ThreadPoolExecutor(STREAMS) as pool:
        for round_ in range(ROUNDS):
            codes = list(pool.map(lambda stream, round_=round_: stream_of_receives(tmp_path, stream, round_), range(STREAMS)))
            sent += STREAMS * MAILS_PER_STREAM
            with sqlite3.connect(database) as connection:
                assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)], f"round {round_}"
                statuses = connection.execute("SELECT status, count(*) FROM inbound_mails GROUP BY status").fetchall()
            connection.close()
            assert codes == [[0] * MAILS_PER_STREAM] * STREAMS, f"round {round_}: exit codes {codes}"
            assert statuses == [("done", sent)], f"round {round_}"


def test_only_a_durable_transaction_syncs_its_commit(tmp_path: Path) -> None:
    """synchronous=FULL (2) syncs the WAL at the commit; NORMAL (1) leaves
    that to the next checkpoint. One pooled connection switches between
    them, outside its transactions (SQLite refuses the pragma inside)."""
    url = f"sqlite:///{tmp_path / 'levels.db'}"
    upgrade(url)
    engine = make_engine(url)
    levels = []
    for durable in (True, False, True):
        with writing(engine, durable=durable) as connection:
            levels.append(connection.exec_driver_sql("PRAGMA synchronous").scalar())
    with engine.begin() as connection:
        levels.append(connection.exec_driver_sql("PRAGMA synchronous").scalar())
    engine.dispose()
    assert levels == [2, 1, 2, 1]


def test_receive_asks_the_mta_to_try_again_while_another_writer_holds_the_spool(tmp_path: Path) -> None:
    """Another program in a write transaction on the arrival spool (where
    `receive` stores on SQLite) longer than busy_seconds: `receive` exits
    75, so the MTA keeps the mail and tries again (any other failure
    status makes Postfix bounce it), and the next try stores it."""
    database = tmp_path / "pbmserv.db"
    upgrade(f"sqlite:///{database}")
    mail = make_mail("alice@example.org", "signup alice secret1")
    with another_writer(str(spool_file(str(database)))):
        refused = receive(tmp_path, mail, PBMSERV_DATABASE_BUSY_SECONDS="0.3")
    assert refused.returncode == 75, refused.stderr.decode()[-500:]
    assert b"try again later" in refused.stderr
    assert receive(tmp_path, mail).returncode == 0
    with sqlite3.connect(database) as connection:
        assert connection.execute("SELECT status FROM inbound_mails").fetchall() == [("done",)]
    connection.close()


def test_receive_stores_while_another_writer_holds_the_database(tmp_path: Path) -> None:
    """A writer holding the database does not keep `receive` from storing
    (in the spool): it exits 0, and the mail is processed once the
    database is free."""
    database = tmp_path / "pbmserv.db"
    upgrade(f"sqlite:///{database}")
    with another_writer(str(database)):
        stored = receive(tmp_path, make_mail("alice@example.org", "signup alice secret1"), wait=False)
    assert stored.returncode == 0, stored.stderr.decode()[-500:]
    assert receive(tmp_path, make_mail("bob@example.org", "signup bob secret2")).returncode == 0
    with sqlite3.connect(database) as connection:
        assert connection.execute("SELECT status FROM inbound_mails").fetchall() == [("done",), ("done",)]
    connection.close()
