"""The hostile-mail corpus (`tests/hostile_corpus.py`) replayed over SMTP to
a real `pbmserv serve`, with the server's own hourly reply caps, between
alice's and bob's moves (issue 16's "Done when"): the server stays up,
answers every SMTP transaction, its database is whole with no mail left
pending, no outside address gets more than an hour's answers and one
address confirmation, the total mail stays small, and every move of the
players is answered with its board mail to both.

Every check is made and reported, failing or not, with a table of what
each attack got (SMTP answers, outcomes, replies, the worker's time), so
that one run says all that is wrong."""

from __future__ import annotations

import hashlib
import json
import shutil
import smtplib
import sqlite3
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass, field
from datetime import datetime
from email import policy
from email.parser import BytesHeaderParser
from email.utils import getaddresses
from pathlib import Path
from typing import Any, TypedDict

import pytest
from sqlalchemy import ColumnElement, Engine, Row, create_engine, func, select
from sqlalchemy.engine import make_url
from sqlalchemy.orm import InstrumentedAttribute

from pbmserv.config import Settings
from pbmserv.store.models import Base, Board, InboundMail, OutboxMail
from pbmserv.store.spool import spool_file
from tests.hostile_corpus import (
    PLAYERS,
    SERVER,
    Attack,
    Mail,
    PlayerMail,
    Restart,
    Step,
    alice_after_guessing,
    mails_of,
    player_mail,
    replay,
    setup,
)
from tests.mailtools import read_maildir
from tests.serve_helpers import ServeProcess, child_pids

INBOUND = InboundMail.__table__
OUTBOX = OutboxMail.__table__
DEFAULTS = Settings()
#: an outside address may get an hour's answers, and one mail asking it to confirm that it wants mail
OUTSIDE_BOUND = DEFAULTS.replies_per_hour + 1
#: A server that behaves answers each mail it gets with one mail, a move
#: with its board mail to each of the two players, and an address nobody
#: has confirmed with one confirmation mail: about 2 mails per mail sent.
#: Three per mail sent leaves room; 16cc280 sent thousands for single mails.
MAILS_PER_MAIL_SENT = 3
#: Answers are a few KB (a toy board, a help text, an error with a bounded
#: quote of the mail); 8 KiB a mail on average is generous: 16cc280's
#: error mails quoted whole mails of up to 256 KB.
BYTES_PER_MAIL = 8 * 1024
#: stop waiting once processing has moved on neither the mail nor the
#: outbox for this long (a stuck worker), or at the latest after `WAIT_SECONDS`
STALL_SECONDS = 60.0
WAIT_SECONDS = 600.0
#: stop waiting at once when the maildir has grown this far past the bound
#: (16cc280 wrote 1.25 GB for one mail); the bound is broken anyway
RUNAWAY_FACTOR = 10


def header_message_id(raw: bytes) -> str:
    """A mail's Message-ID, read without the server's bounds (some corpus mails exceed them)."""
    return " ".join(str(BytesHeaderParser(policy=policy.compat32).parsebytes(raw).get("Message-ID", "")).split())


def stored(inbound: dict[str, Row], raw: bytes) -> Row | None:
    """The stored row of a mail: by its Message-ID, else by the hash of its
    bytes, its dedup key when the server read no Message-ID."""
    return inbound.get(header_message_id(raw)) or inbound.get(hashlib.sha256(raw).hexdigest())


@dataclass
class Answer:
    """How the server answered one SMTP transaction: its code (None: no
    answer at all) and text, and the command that got it."""

    code: int | None
    text: str
    command: str = "DATA"

    def __str__(self) -> str:
        return f"{self.code if self.code is not None else 'no answer'} to {self.command}: {self.text[:120]}"


def transact(port: int, mail: Mail) -> Answer:
    """One SMTP session for one mail, with MAIL FROM sent as it is (a NUL included)."""
    try:
        with smtplib.SMTP("127.0.0.1", port, timeout=60) as client:
            client.ehlo("replay.example")
            reply: bytes | str  # the server's answer; an SMTPDataError may hold it as either
            for command, argument in (("MAIL", f"FROM:<{mail.envelope_sender}>"), ("RCPT", f"TO:<{SERVER}>")):
                code, reply = client.docmd(command, argument)
                if code != 250:
                    return Answer(code, reply.decode(errors="replace"), command)
            try:
                code, reply = client.data(mail.raw)
            except smtplib.SMTPDataError as error:
                code, reply = error.smtp_code, error.smtp_error
            return Answer(code, reply.decode(errors="replace") if isinstance(reply, bytes) else str(reply))
    except (OSError, smtplib.SMTPException) as error:
        return Answer(None, f"{type(error).__name__}: {error}")


@dataclass
class Delivered:
    recipient: str
    subject: str
    in_reply_to: str
    size: int
    #: recipients beyond the one To address, or headers that add some: what header injection would leave
    injected: list[str]


#: headers that would send a reply to more addresses than its one recipient
RECIPIENT_HEADERS = ("Cc", "Bcc", "Resent-To", "Resent-Cc", "Resent-Bcc")


def delivered(maildir: Path) -> list[Delivered]:
    """Every mail the server wrote to its maildir, by its headers."""
    parser = BytesHeaderParser(policy=policy.compat32)
    mails = []
    for raw in read_maildir(maildir):
        headers = parser.parsebytes(raw)
        to = [address.lower() for _, address in getaddresses(headers.get_all("To", []))]
        injected = to[1:] + [f"{name}: {headers[name]}" for name in RECIPIENT_HEADERS if name in headers]
        mails.append(Delivered(
            to[0] if to else "", " ".join(str(headers.get("Subject", "")).split()),
            " ".join(str(headers.get("In-Reply-To", "")).split()), len(raw), injected,
        ))
    return mails


def maildir_size(maildir: Path) -> tuple[int, int]:
    """(mails, bytes) in the maildir's new/, cheaply, while the server writes."""
    folder = maildir / "new"
    if not folder.exists():
        return 0, 0
    sizes = [entry.stat().st_size for entry in folder.iterdir()]
    return len(sizes), sum(sizes)


@dataclass
class Replay:
    database_url: str
    workdir: Path
    #: the most mails, and bytes, all the replay's answers may come to
    bound_mails: int
    bound_bytes: int
    server: ServeProcess = field(init=False)
    #: one engine for all the counting while serve runs: a reader that keeps
    #: its connection does not disturb serve's SQLite files, as one that
    #: connects and closes every half second would (see `count`)
    engine: Engine = field(init=False)
    answers: dict[str, Answer] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: the largest resident memory seen of serve's worker and deliverer, in bytes
    peak_child_memory: int = 0

    def __post_init__(self) -> None:
        self.server = ServeProcess(self.database_url, self.workdir, default_reply_caps=True)
        self.engine = create_engine(self.database_url)

    def count(self, column: InstrumentedAttribute[int], *where: ColumnElement[bool]) -> int:
        """Rows of `column`'s table that match. On 16cc280 a connection
        closed beside `serve` could delete SQLite's WAL under the worker
        (whose locks `sync_sqlite_files` had dropped, finding C2), losing its
        commits: the replay is about hostile mail, so it does not do that."""
        with self.engine.connect() as connection:
            return connection.scalar(select(func.count(column)).where(*where)) or 0

    # -- sending ------------------------------------------------------------
    def send(self, steps: Sequence[Step]) -> None:
        for step in steps:
            if isinstance(step, Restart):
                self.restart()
            elif isinstance(step, Attack) and step.concurrent:
                with ThreadPoolExecutor(8) as pool:
                    for mail, answer in zip(step.mails, pool.map(lambda m: transact(self.server.port, m), step.mails)):
                        self.answers[mail.name] = answer
            else:
                for mail in mails_of(step):
                    self.answers[mail.name] = transact(self.server.port, mail)
            self.sample_memory()

    def restart(self) -> None:
        """Stop and start serve, once all it was sent is processed."""
        self.wait("before the restart")
        try:
            self.server.stop()
        except AssertionError:
            self.problems.append(f"at the restart: {self.unclean_stop()}")
        self.server.start()

    def accepted(self) -> int:
        return sum(1 for answer in self.answers.values() if answer.code == 250)

    # -- waiting --------------------------------------------------------------
    def progress(self) -> tuple[int, int, int]:
        processed = self.count(InboundMail.id, InboundMail.status != "pending")
        sent = self.count(OutboxMail.id, OutboxMail.status != "pending")
        return processed, sent, maildir_size(self.server.maildir)[0]

    def wait(self, when: str) -> None:
        """Until every accepted mail is processed and its answers delivered;
        or processing stalls, or the maildir runs away; each recorded."""
        started = last_change = time.monotonic()
        last = None
        while True:
            now = time.monotonic()
            current = self.progress()
            processed, _, _ = current
            unsent = self.count(OutboxMail.id, OutboxMail.status == "pending")
            if processed >= self.accepted() and unsent == 0:
                self.notes.append(f"{when}: all mail processed and delivered {now - started:.1f}s after the last was sent")
                return
            mails, size = maildir_size(self.server.maildir)
            if mails > RUNAWAY_FACTOR * self.bound_mails or size > RUNAWAY_FACTOR * self.bound_bytes:
                self.problems.append(
                    f"runaway {when}: the maildir reached {mails} mails, {size / 1e6:.1f} MB while {self.accepted() - processed} "
                    f"of {self.accepted()} accepted mails were still unprocessed; stopped waiting"
                )
                return
            if current != last:
                last, last_change = current, now
            if now - last_change > STALL_SECONDS or now - started > WAIT_SECONDS:
                self.problems.append(
                    f"stalled {when}: {self.accepted() - processed} of {self.accepted()} accepted mails still unprocessed and "
                    f"{unsent} answers undelivered; nothing moved for {now - last_change:.0f}s "
                    f"({now - started:.0f}s after the last mail was sent)"
                )
                return
            self.sample_memory()
            time.sleep(0.5)

    def sample_memory(self) -> None:
        assert self.server.process is not None
        try:
            for pid in child_pids(self.server.process.pid):
                status = Path(f"/proc/{pid}/status").read_text()
                peak = next(line for line in status.splitlines() if line.startswith("VmHWM:"))
                self.peak_child_memory = max(self.peak_child_memory, int(peak.split()[1]) * 1024)
        except (OSError, StopIteration, ValueError):  # a child that ended meanwhile
            pass

    def inbound(self) -> dict[str, Row]:
        """The stored mails by Message-ID (as intake reads it) and by dedup
        key (a mail whose headers are beyond the server's bounds is stored
        without its Message-ID, and known by the hash of its bytes)."""
        with self.engine.connect() as connection:
            rows = connection.execute(select(
                INBOUND.c.id, INBOUND.c.message_id, INBOUND.c.dedup_key, INBOUND.c.status, INBOUND.c.error,
                INBOUND.c.received_at, INBOUND.c.processed_at,
            )).all()
        return {key: row for row in rows for key in (row.message_id, row.dedup_key) if key}

    def unclean_stop(self) -> str:
        """What went wrong when serve was stopped, from its log."""
        said = [line for line in self.server.log.read_text(errors="replace").splitlines() if "did not stop" in line]
        return "serve did not stop cleanly on SIGTERM: " + ("; ".join(said) or "it was killed (see the log tail)")

    def log_tail(self, size: int = 3000) -> str:
        return self.server.log.read_text(errors="replace")[-size:]


def confirmations(run: Replay, signups: list[PlayerMail]) -> list[PlayerMail]:
    """Each player's reply to the welcome of their signup, which confirms their address."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        welcomes = {mail.recipient: mail.subject for mail in delivered(run.server.maildir) if mail.subject.startswith("confirm ")}
        if len(welcomes) == len(signups):
            return [
                player_mail(signup.player, f"setup-confirm-{signup.player.userid}", f"Re: {welcomes[signup.player.address]}")
                for signup in signups
            ]
        time.sleep(0.2)
    pytest.fail(f"the signups were not answered within 60s\n--- serve log tail:\n{run.log_tail()}", pytrace=False)


def setup_done(run: Replay, setup: list[PlayerMail]) -> None:
    """The set-up is processed and made its three boards, or the test stops here."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if run.count(InboundMail.id, InboundMail.status != "pending") >= len(setup):
            break
        time.sleep(0.2)
    boards = run.count(Board.id)
    if boards != 3:
        statuses = {name: row.status for name, row in run.inbound().items()}
        pytest.fail(
            f"the players' set-up made {boards} boards, not 3, within 60s; stored mails: {statuses}; "
            f"SMTP: {[str(answer) for answer in run.answers.values()]}\n--- serve log tail:\n{run.log_tail()}",
            pytrace=False,
        )


# -- the checks -----------------------------------------------------------------------------


def check_smtp(run: Replay, steps: list[Step]) -> None:
    refusable = {mail.name for step in steps for mail in mails_of(step) if mail.refusable}
    codes = Counter(answer.code for answer in run.answers.values())
    run.notes.append(f"SMTP answers: {dict(codes)} for {len(run.answers)} mails")
    for name, answer in run.answers.items():
        refused_deliberately = name in refusable and answer.code is not None and 500 <= answer.code < 600
        if name in refusable and answer.code is not None and answer.code != 250:
            run.notes.append(f"{name}: {answer}")
        if answer.code != 250 and not refused_deliberately:
            run.problems.append(f"SMTP: {name} got {answer}")


def check_database(run: Replay) -> None:
    """SQLite: `PRAGMA integrity_check` of the database and the spool,
    opened read-only (serve has stopped); either: every row of every table
    can be read; and no mail is left pending."""
    url = make_url(run.database_url)
    if url.get_backend_name() == "sqlite":
        assert url.database is not None  # a SQLite URL names its file
        for path in (Path(url.database), spool_file(url.database)):
            if path.exists():
                with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as connection:
                    result = connection.execute("PRAGMA integrity_check").fetchall()
                if result != [("ok",)]:
                    run.problems.append(f"database damage: PRAGMA integrity_check of {path.name} says {result[:10]}")
    with run.engine.connect() as connection:
        for table in Base.metadata.sorted_tables:
            try:
                for _ in connection.execution_options(yield_per=500).execute(select(table)):
                    pass
            except Exception as error:  # noqa: BLE001 - any failure to read is the damage reported
                run.problems.append(f"database damage: table {table.name} cannot be read: {error}")
                connection.rollback()
        statuses = dict(connection.execute(select(InboundMail.status, func.count()).group_by(InboundMail.status)).tuples().all())
    run.notes.append(f"inbound mails by status: {statuses}")
    if statuses.get("pending"):
        run.problems.append(f"{statuses['pending']} inbound mails left pending")
    unadmitted = run.accepted() - sum(statuses.values())
    if unadmitted > 0:
        run.problems.append(f"{unadmitted} mails answered 250 never reached inbound_mails (left in the spool)")


def check_outside_bound(run: Replay, mails: list[Delivered]) -> None:
    players = {player.address for player in PLAYERS}
    per_recipient = Counter(mail.recipient for mail in mails if mail.recipient not in players)
    worst = per_recipient.most_common(12)
    run.notes.append(f"most mail to one outside address: {worst[:5]} ({len(per_recipient)} outside addresses)")
    over = [(recipient, number) for recipient, number in per_recipient.most_common() if number > OUTSIDE_BOUND]
    if over:
        listed = ", ".join(f"{recipient} got {number}" for recipient, number in over[:12])
        run.problems.append(
            f"{len(over)} outside addresses got more than {OUTSIDE_BOUND} mails "
            f"({DEFAULTS.replies_per_hour} answers + 1 confirmation): {listed}"
            + (f" and {len(over) - 12} more" if len(over) > 12 else "")
        )


def check_header_injection(run: Replay, mails: list[Delivered]) -> None:
    injected = [f"{mail.subject!r} to {mail.recipient}: {mail.injected}" for mail in mails if mail.injected]
    if injected:
        run.problems.append(f"{len(injected)} mails carry more recipients than their one To: " + "; ".join(injected[:5]))


def check_moves(run: Replay, steps: list[Step], mails: list[Delivered], inbound: dict[str, Row]) -> None:
    by_reply: dict[str, list[Delivered]] = {}
    for mail in mails:
        by_reply.setdefault(mail.in_reply_to, []).append(mail)
    moves = [step for step in steps if isinstance(step, PlayerMail) and step.board]
    unanswered = []
    for move in moves:
        message_id = header_message_id(move.mail.raw)
        title = move.game.capitalize()
        # only the mover's board mail answers the move: the opponent's refers to their own thread's first mail (0144)
        got = by_reply.get(message_id, [])
        if move.player.address in {mail.recipient for mail in got if mail.subject == f"{title} Board {move.board}"}:
            continue
        instead = "; ".join(f"{mail.subject!r} to {mail.recipient}" for mail in got) or "nothing"
        row = stored(inbound, move.mail.raw)
        outcome = f"{row.status} {row.error[:80]}".strip() if row else "not in inbound_mails"
        unanswered.append(f"{move.mail.name} ({move.player.userid}): got {instead}; the mail is {outcome}")
    run.notes.append(f"players' moves answered with their board mail: {len(moves) - len(unanswered)} of {len(moves)}")
    if unanswered:
        run.problems.append(
            f"{len(unanswered)} of the players' {len(moves)} moves were not answered with the board mail to the mover:\n    "
            + "\n    ".join(unanswered)
        )
    guessed = alice_after_guessing().mail.name
    if any(line.startswith(guessed) for line in unanswered):
        run.problems.append("alice's move with her right password, after the guessing, was not accepted")


def check_totals(run: Replay, mails: list[Delivered]) -> None:
    total_mails, total_bytes = len(mails), sum(mail.size for mail in mails)
    run.notes.append(
        f"maildir: {total_mails} mails, {total_bytes / 1e6:.2f} MB (bounds {run.bound_mails}, {run.bound_bytes / 1e6:.2f} MB)"
    )
    if total_mails > run.bound_mails:
        run.problems.append(
            f"{total_mails} mails were sent, more than {run.bound_mails} ({MAILS_PER_MAIL_SENT} per mail received)"
        )
    if total_bytes > run.bound_bytes:
        run.problems.append(f"{total_bytes / 1e6:.1f} MB of mail was sent, more than {run.bound_bytes / 1e6:.1f} MB")


# -- the report --------------------------------------------------------------------------------


class AttackRow(TypedDict):
    attack: str
    finding: str
    mails: int
    smtp: dict[str, int]
    outcome: dict[str, int]
    replies: int
    reply_bytes: int
    worker_seconds: float
    errors: list[str]


def attack_table(run: Replay, steps: list[Step], inbound: dict[str, Row]) -> list[AttackRow]:
    """Per attack: SMTP answers, outcomes, replies written, and the worker's
    time on its mails, from `processed_at` (a batch's mails share its time,
    so it is spread over them: approximate for mails processed together)."""
    per_mail = select(OUTBOX.c.inbound_id, func.count(), func.sum(func.length(OUTBOX.c.raw))).group_by(OUTBOX.c.inbound_id)
    with run.engine.connect() as connection:
        replies = {inbound_id: (number, size or 0) for inbound_id, number, size in connection.execute(per_mail)}
    seconds = worker_seconds(list(inbound.values()))
    table: list[AttackRow] = []
    for step in steps:
        if not isinstance(step, Attack):
            continue
        found = [stored(inbound, mail.raw) for mail in step.mails]
        kept = [row for row in found if row is not None]
        table.append({
            "attack": step.name, "finding": step.finding, "mails": len(step.mails),
            "smtp": dict(Counter(str(run.answers[mail.name].code) for mail in step.mails if mail.name in run.answers)),
            "outcome": dict(Counter(row.status if row else "not in inbound_mails" for row in found)),
            "replies": sum(replies.get(row.id, (0, 0))[0] for row in kept),
            "reply_bytes": sum(replies.get(row.id, (0, 0))[1] for row in kept),
            "worker_seconds": round(sum(seconds.get(row.id, 0.0) for row in kept), 2),
            "errors": sorted({" ".join(row.error.split())[:100] for row in kept if row.error})[:3],
        })
    return table


def worker_seconds(rows: list[Row[Any]]) -> dict[int, float]:
    """By inbound id: the time from when the worker could take the mail up
    (its arrival, or the end of the batch before) to the end of its batch,
    shared out among the batch's mails."""
    batches: dict[datetime, list[Row[Any]]] = {}
    for row in rows:
        if row.processed_at is not None:
            batches.setdefault(row.processed_at, []).append(row)
    seconds: dict[int, float] = {}
    previous: datetime | None = None
    for processed_at in sorted(batches):
        batch = batches[processed_at]
        began = min(row.received_at for row in batch)
        if previous is not None and previous > began:
            began = previous
        for row in batch:
            seconds[row.id] = max((processed_at - began).total_seconds(), 0.0) / len(batch)
        previous = processed_at
    return seconds


def report(run: Replay, table: list[AttackRow]) -> str:
    lines = [f"{'attack':32} {'find':4} {'mails':>5} {'smtp':14} {'outcome':28} {'replies':>7} {'MB':>7} {'worker s':>8}"]
    for row in table:
        lines.append(
            f"{row['attack']:32} {row['finding']:4} {row['mails']:5} {json.dumps(row['smtp']):14} "
            f"{json.dumps(row['outcome']):28} {row['replies']:7} {row['reply_bytes'] / 1e6:7.2f} {row['worker_seconds']:8}"
        )
        lines += [f"{'':38}error: {error}" for error in row["errors"]]
    return "\n".join([*lines, "", *run.notes])


def run_replay(database_url: str, workdir: Path, steps: list[Step]) -> tuple[Replay, list[AttackRow]]:
    """Start serve, send `steps` (the players' set-up first), wait, stop,
    check; returns the run with its problems and notes, and the table of
    attacks (also written to workdir/report.json)."""
    sent = sum(len(mails_of(step)) for step in steps)
    players_setup = setup()
    assert steps[:len(players_setup)] == players_setup, "the replay begins with the players' set-up"
    run = Replay(database_url, workdir, MAILS_PER_MAIL_SENT * sent, MAILS_PER_MAIL_SENT * sent * BYTES_PER_MAIL)
    started = time.monotonic()
    run.server.start()
    try:
        signups, challenges = players_setup[:2], players_setup[2:]
        run.send(signups)
        confirms = confirmations(run, signups)
        run.send(confirms)
        run.send(challenges)
        setup_done(run, [*signups, *confirms, *challenges])  # all it sent: the set-up is done once as many are processed
        run.send(steps[len(players_setup):])
        run.notes.append(f"{sent} mails sent in {time.monotonic() - started:.1f}s")
        run.wait("at the end")
        assert run.server.process is not None
        if run.server.process.poll() is not None:
            run.problems.append(f"the server process is gone (exit code {run.server.process.returncode})")
        log = run.server.log.read_text(errors="replace")
        run.notes.append(
            f"serve log: {len(log) / 1e3:.0f} KB, {log.count('round failed; retrying')} failed worker rounds, "
            f"{log.count('died')} dead children, {log.count('given up')} mails given up; "
            f"worker/deliverer peak memory {run.peak_child_memory / 1e6:.0f} MB"
        )
    finally:
        try:
            run.server.stop()
        except AssertionError:
            run.problems.append(f"at the end: {run.unclean_stop()}")
        run.engine.dispose()  # after serve has stopped: see `Replay.count`
    run.notes.append(f"replay took {time.monotonic() - started:.1f}s")
    check_smtp(run, steps)
    check_database(run)
    inbound = run.inbound()
    mails = delivered(run.server.maildir)
    check_outside_bound(run, mails)
    check_header_injection(run, mails)
    check_moves(run, steps, mails, inbound)
    check_totals(run, mails)
    table = attack_table(run, steps, inbound)
    run.engine.dispose()
    if sum(mail.size for mail in mails) > run.bound_bytes:  # 16cc280 wrote 700 MB: pytest keeps three runs' folders
        shutil.rmtree(run.server.maildir)
        run.notes.append("the maildir, over its bound, was removed; the outbox table still holds every mail")
    (workdir / "report.json").write_text(json.dumps(
        {"table": table, "notes": run.notes, "problems": run.problems}, indent=1, default=str,
    ))
    return run, table


def test_hostile_corpus_replayed_over_smtp(database_url: str, tmp_path: Path) -> None:
    run, table = run_replay(database_url, tmp_path, replay())
    print(report(run, table))  # the figures, also when every check passes (pytest -s)
    if run.problems:
        pytest.fail(
            f"{len(run.problems)} checks failed (the table of attacks is under 'Captured stdout'):\n- "
            + "\n- ".join(run.problems) + f"\n\n--- serve log tail:\n{run.log_tail()}",
            pytrace=False,
        )
