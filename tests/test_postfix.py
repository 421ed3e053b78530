"""The Postfix recipe of deploy/postfix, tested with a real Postfix on
loopback: an instance of its own (`postfix -c DIR`, its own queue and
ports), configured from the recipe's files, in front of pbmserv both ways
in (relay to `pbmserv serve`, pipe to `pbmserv receive`) and on the way out
(pbmserv's smtp backend relaying through it). An aiosmtpd sink stands in for
the players' mail server. The system's Postfix is not touched.

Without Postfix (or root, which starting one needs) the tests skip, unless
PBMSERV_REQUIRE_POSTFIX=1 (CI), where that is a failure."""

from __future__ import annotations

import os
import pwd
import shutil
import smtplib
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Row, create_engine, select

from pbmserv.store.models import OutboxMail
from tests.smtp_helpers import ScriptedSink, free_port, smtp_server

pytestmark = pytest.mark.slow  # a proof at scale or a real MTA: `tests/run --fast` leaves it out

REPO = Path(__file__).resolve().parents[1]
RECIPE = REPO / "deploy" / "postfix"
BIN = Path(sys.executable).parent
POSTFIX = shutil.which("postfix", path=os.environ.get("PATH", "") + ":/usr/sbin")
PIPE_USER = "nobody"  # any user but root and Postfix's own may run a pipe
GAME = "games@example.test"

#: Postfix's daemons, none chrooted (the queue directory is the test's own)
MASTER_CF = """\
127.0.0.1:{port} inet n - n - - smtpd
pickup    unix  n       -       n       60      1       pickup
cleanup   unix  n       -       n       -       0       cleanup
qmgr      unix  n       -       n       300     1       qmgr
rewrite   unix  -       -       n       -       -       trivial-rewrite
bounce    unix  -       -       n       -       0       bounce
defer     unix  -       -       n       -       0       bounce
trace     unix  -       -       n       -       0       bounce
verify    unix  -       -       n       -       1       verify
flush     unix  n       -       n       1000?   0       flush
proxymap  unix  -       -       n       -       -       proxymap
smtp      unix  -       -       n       -       -       smtp
relay     unix  -       -       n       -       -       smtp
showq     unix  n       -       n       -       -       showq
error     unix  -       -       n       -       -       error
retry     unix  -       -       n       -       -       error
discard   unix  -       -       n       -       -       discard
anvil     unix  -       -       n       -       1       anvil
scache    unix  -       -       n       -       1       scache
postlog   unix-dgram n  -       n       -       1       postlogd
"""

#: an instance on loopback that delivers nothing locally and asks no DNS
MAIN_CF = """\
compatibility_level = 3.6
queue_directory = {root}/postfix-queue
data_directory = {root}/postfix-data
maillog_file_prefixes = {root}
maillog_file = {root}/postfix.log
myhostname = postfix.example.test
mydestination =
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
alias_maps =
alias_database =
local_recipient_maps =
smtp_dns_support_level = disabled
smtp_host_lookup = native
"""

def _unavailable() -> str | None:
    if POSTFIX is None:
        return "Postfix is not installed (Debian: apt-get install postfix)"
    if os.geteuid() != 0:
        return "starting a Postfix instance needs root"
    return None


if (_reason := _unavailable()) is not None:
    if os.environ.get("PBMSERV_REQUIRE_POSTFIX") == "1":
        raise RuntimeError(f"PBMSERV_REQUIRE_POSTFIX=1 but the Postfix tests cannot run: {_reason}")
    pytestmark = pytest.mark.skip(reason=_reason)


def recipe(name: str, **substitutions: str) -> str:
    """A file of deploy/postfix with this machine's paths and ports put in."""
    text = (RECIPE / name).read_text()
    for old, new in substitutions.items():
        assert old in text, f"{old!r} is not in deploy/postfix/{name}"
        text = text.replace(old, new)
    return text


@pytest.fixture
def public_dir() -> Iterator[Path]:
    """A directory Postfix's own user and the pipe's user can reach (pytest's
    temporary directories are root's alone)."""
    path = Path(tempfile.mkdtemp(prefix="pbmserv-postfix-", dir="/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


class Postfix:
    """A Postfix instance of its own: `postfix -c DIR`, listening on a free loopback port."""

    def __init__(self, root: Path, transport: str, extra_main: str = "", extra_maps: dict[str, str] | None = None):
        assert POSTFIX is not None, "the tests skip without Postfix"
        self.postfix = POSTFIX
        self.root = root
        self.config = root / "etc"
        self.port = free_port()
        self.config.mkdir()
        (root / "postfix-queue").mkdir()  # Postfix makes what is inside, owned by its users
        (self.config / "main.cf").write_text(MAIN_CF.format(root=root) + recipe("main.cf") + extra_main)
        (self.config / "master.cf").write_text(MASTER_CF.format(port=self.port) + recipe("master.cf", **pipe_paths(root)))
        maps = {"pbmserv_recipients": recipe("recipients"), "pbmserv_transport": transport, **(extra_maps or {})}
        for name, text in maps.items():
            (self.config / name).write_text(text)
            self.run("postmap", f"hash:{self.config / name}")

    def run(self, command: str, *args: str) -> str:
        result = subprocess.run(
            [str(Path(self.postfix).parent / command), "-c", str(self.config), *args],
            capture_output=True, text=True, timeout=60,
        )
        assert result.returncode == 0, f"{command} {args}: {result.stderr}{self.log()}"
        return result.stdout

    def start(self) -> Postfix:
        self.run("postfix", "start")
        wait_for(lambda: can_connect(self.port), f"Postfix on port {self.port}", self.log)
        return self

    def stop(self) -> None:
        subprocess.run([self.postfix, "-c", str(self.config), "stop"], capture_output=True, timeout=60)

    def log(self) -> str:
        path = self.root / "postfix.log"
        return "\n--- Postfix log:\n" + (path.read_text() if path.exists() else "(none)")


def pipe_paths(root: Path) -> dict[str, str]:
    """What master.cf's pipe service runs, and as whom, in the test."""
    return {
        "user=pbmserv": f"user={PIPE_USER}",
        "/srv/pbmserv/venv": str(root / "venv"),
        "/etc/pbmserv/pbmserv.toml": str(root / "pbmserv.toml"),
    }


def settings_file(path: Path, data: Path, postfix_port: int, listen_port: int = 2525) -> Path:
    path.write_text(recipe(
        "pbmserv.toml",
        **{"/var/lib/pbmserv": str(data), "127.0.0.1:25\"": f"127.0.0.1:{postfix_port}\"",
           "127.0.0.1:2525\"": f"127.0.0.1:{listen_port}\""},
    ))
    return path


def can_connect(port: int) -> bool:
    try:
        smtplib.SMTP("127.0.0.1", port, timeout=5).quit()
        return True
    except OSError:
        return False


def wait_for(condition: Callable[[], bool], what: str, log: Callable[[], str] = lambda: "") -> None:
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}{log()}"
        time.sleep(0.1)


def player_mail(sender: str, subject: str) -> bytes:
    message = EmailMessage(policy=policy.SMTP)
    message["From"] = sender
    message["To"] = GAME
    message["Subject"] = subject
    message["Date"] = "Mon, 05 Jan 2026 09:00:00 +0000"
    message["Message-ID"] = f"<{time.time_ns()}@example.org>"
    message.set_content("\n")
    return message.as_bytes()


def received(sink: ScriptedSink) -> list[EmailMessage]:
    parser = BytesParser(policy=policy.default)
    return [parser.parsebytes(raw) for raw in list(sink.accepted)]


CHEAP_PASSWORDS = {"PBMSERV_PASSWORD_TIME_COST": "1", "PBMSERV_PASSWORD_MEMORY_KIB": "1024"}


def make_database(config: Path, admin: Path = BIN / "pbmserv-admin", user: str | None = None) -> None:
    """`pbmserv-admin db upgrade`, as the README says to before the pipe's first mail (`receive` makes none)."""
    subprocess.run(
        [admin, "--config", str(config), "db", "upgrade"], env=environment(), user=user, cwd=config.parent,
        check=True, capture_output=True, timeout=120,
    )


def environment(**settings: str) -> dict[str, str]:
    """The test's environment without PBMSERV_* settings but these: the settings file decides."""
    return {**{k: v for k, v in os.environ.items() if not k.startswith("PBMSERV_")}, **CHEAP_PASSWORDS, **settings}


def relay_sink_transport(sink_port: int) -> str:
    """Players' mail (example.org) to the sink, as DNS would send it to their mail server."""
    return f"example.org    smtp:[127.0.0.1]:{sink_port}\n"


def test_relay_to_serve_and_replies_out_through_postfix(public_dir: Path, tmp_path: Path) -> None:
    serve_port = free_port()
    sink = ScriptedSink([])
    with smtp_server(lambda: sink) as sink_port:
        transport = recipe("transport.serve", **{"[127.0.0.1]:2525": f"[127.0.0.1]:{serve_port}"})
        postfix = Postfix(public_dir, transport + relay_sink_transport(sink_port)).start()
        config = settings_file(tmp_path / "pbmserv.toml", tmp_path, postfix.port, serve_port)
        with open(tmp_path / "serve.log", "wb") as log:
            serve = subprocess.Popen(
                [BIN / "pbmserv", "--config", str(config), "serve"], env=environment(PBMSERV_POLL_SECONDS="0.2", PBMSERV_WEB_LISTEN=""),
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )
        try:
            wait_for(lambda: can_connect(serve_port), "pbmserv serve")
            with smtplib.SMTP("127.0.0.1", postfix.port, timeout=30) as client:
                client.sendmail("alice@example.org", [GAME], player_mail("alice@example.org", "signup alice secret1"))
                refused = client.sendmail("alice@example.org", [GAME, "other@example.test"], player_mail("alice@example.org", "help"))
            assert set(refused) == {"other@example.test"}, refused
            wait_for(lambda: len(sink.accepted) >= 2, "the replies at the players' server", postfix.log)
            replies = {str(m["Subject"]): m for m in received(sink)}
            with smtplib.SMTP("127.0.0.1", postfix.port, timeout=30) as client:
                client.sendmail("bob@example.org", [GAME], player_mail("bob@example.org", "signup bob secret2"))
            confirm_by_reply(postfix, sink, "bob")
            reply_to_play(postfix, sink)
        finally:
            serve.terminate()
            serve.wait(timeout=30)
            postfix.stop()
    assert {subject.rsplit(" ", 1)[0] for subject in replies} == {"confirm alice", "pbmserv"}, replies.keys()
    for message in replies.values():
        assert message["To"] == "alice@example.org" and message["From"] == GAME
        assert "postfix.example.test" in str(message["Received"]), "the reply came through Postfix"


def test_pipe_to_receive_as_another_user(public_dir: Path) -> None:
    venv, data = public_dir / "venv", public_dir / "data"
    make_pipe_venv(venv)
    data.mkdir()
    user = pwd.getpwnam(PIPE_USER)
    os.chown(data, user.pw_uid, user.pw_gid)
    sink = ScriptedSink([])
    with smtp_server(lambda: sink) as sink_port:
        postfix = Postfix(public_dir, recipe("transport.receive") + relay_sink_transport(sink_port))
        settings_file(public_dir / "pbmserv.toml", data, postfix.port)
        make_database(public_dir / "pbmserv.toml", venv / "bin" / "pbmserv-admin", PIPE_USER)
        postfix.start()
        try:
            with smtplib.SMTP("127.0.0.1", postfix.port, timeout=30) as client:
                client.sendmail("bob@example.org", [GAME], player_mail("bob@example.org", "signup bob secret2"))
            wait_for(lambda: len(sink.accepted) >= 1, "the reply at the players' server", postfix.log)
            [reply] = received(sink)
            confirm_by_reply(postfix, sink, "bob")
            reply_to_play(postfix, sink)
        finally:
            postfix.stop()
    assert str(reply["Subject"]).startswith("confirm bob "), reply.get_content()
    assert reply["To"] == "bob@example.org"
    assert "Welcome, bob." in reply.get_content()
    assert (data / "pbmserv.db").stat().st_uid == user.pw_uid, "pbmserv ran as the pipe's user"


def mails_to(sink: ScriptedSink, address: str) -> list[EmailMessage]:
    return [mail for mail in received(sink) if str(mail["To"]) == address]


def confirm_by_reply(postfix: Postfix, sink: ScriptedSink, userid: str) -> None:
    """USERID@example.org, signed up, replies through Postfix to its welcome, which confirms the address."""
    address = f"{userid}@example.org"

    def welcomes() -> list[str]:
        return [str(m["Subject"]) for m in mails_to(sink, address) if str(m["Subject"]).startswith(f"confirm {userid} ")]

    wait_for(lambda: welcomes() != [], f"{userid}'s welcome", postfix.log)
    with smtplib.SMTP("127.0.0.1", postfix.port, timeout=30) as client:
        client.sendmail(address, [GAME], player_mail(address, f"Re: {welcomes()[0]}"))
    wait_for(
        lambda: any(str(m["Subject"]) == f"pbmserv confirm {userid}" for m in mails_to(sink, address)),
        f"{userid}'s address confirmed", postfix.log,
    )


def reply_to_play(postfix: Postfix, sink: ScriptedSink) -> None:
    """bob (signed up) challenges carol; carol answers her board mail with
    the move alone, to its Reply-To, and it is played; a forged reply
    address is bounced to its sender."""
    def to_carol() -> list[EmailMessage]:
        return [mail for mail in mails_to(sink, "carol@example.org") if "Board" in str(mail["Subject"])]

    with smtplib.SMTP("127.0.0.1", postfix.port, timeout=30) as client:
        client.sendmail("carol@example.org", [GAME], player_mail("carol@example.org", "signup carol secret3"))
    confirm_by_reply(postfix, sink, "carol")
    with smtplib.SMTP("127.0.0.1", postfix.port, timeout=30) as client:
        client.sendmail("bob@example.org", [GAME], player_mail("bob@example.org", "majorities challenge carol bob"))
        wait_for(lambda: len(to_carol()) == 1, "carol's board mail", postfix.log)
        board_mail = to_carol()[0]
        address = str(board_mail["Reply-To"])
        assert address.startswith("games+majorities-") and address.endswith("@example.test"), address
        move = board_mail.get_content().rstrip().rsplit(" ", 1)[1]  # the example move of the line to paste
        answer = BytesParser(policy=policy.SMTP).parsebytes(player_mail("carol@example.org", f"Re: {board_mail['Subject']}"))
        answer.replace_header("To", address)
        answer.set_content(f"{move}\n\nbob wrote:\n> {board_mail.get_content().splitlines()[0]}\n")
        client.sendmail("carol@example.org", [address], answer.as_bytes())
        wait_for(lambda: len(to_carol()) == 2, "carol's move played", postfix.log)
        assert "It is bob's turn." in to_carol()[1].get_content()
        forged = address.rsplit("-", 1)[0] + "-" + "a" * 16 + "@example.test"
        client.sendmail("mallory@example.org", [forged], player_mail("mallory@example.org", "a1"))
        wait_for(lambda: mails_to(sink, "mallory@example.org") != [], "the bounce of a forged reply address", postfix.log)
    [bounce] = mails_to(sink, "mallory@example.org")
    report = " ".join(bounce.as_string().split())
    assert "Status: 5.1.1" in report and "not a valid reply address" in report


def make_pipe_venv(venv: Path) -> None:
    """A venv the pipe's user can run: made with the system's Python (this
    venv's links to a Python under /root, which that user cannot reach),
    pbmserv installed into it, its dependencies those of the test's venv."""
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = next(venv.glob("lib/python3*/site-packages"))
    dependencies = next(Path(sys.prefix).glob("lib/python3*/site-packages"))
    (site / "test-dependencies.pth").write_text(f"{dependencies}\n")
    subprocess.run(
        [BIN / "pip", "--python", str(venv / "bin" / "python"), "install", "--quiet", "--no-deps", str(REPO)],
        check=True, capture_output=True, timeout=300,
    )


def test_relay_answers_decide_retry_and_dead_letters(public_dir: Path, tmp_path: Path) -> None:
    access = "temp@example.org    450 4.2.1 try again later\ngone@example.org    550 5.1.1 no such user\n"
    restrictions = "smtpd_recipient_restrictions = check_recipient_access hash:$config_directory/test_access\n"
    sink = ScriptedSink([])
    with smtp_server(lambda: sink) as sink_port:
        postfix = Postfix(public_dir, relay_sink_transport(sink_port), restrictions, {"test_access": access}).start()
        config = settings_file(tmp_path / "pbmserv.toml", tmp_path, postfix.port)
        make_database(config)
        try:
            for sender in ("temp@example.org", "gone@example.org", "alice@example.org"):
                result = subprocess.run([BIN / "pbmserv", "--config", str(config), "receive", "--wait", "--sender", sender],
                                        input=player_mail(sender, "help"), env=environment(), capture_output=True, timeout=120)
                assert result.returncode == 0, result.stderr
            wait_for(lambda: len(sink.accepted) >= 1, "alice's reply at the players' server", postfix.log)
            before = outbox(tmp_path)
            again = subprocess.run([BIN / "pbmserv", "--config", str(config), "deliver", "--once"],
                                   env=environment(), capture_output=True, text=True, timeout=120)
        finally:
            postfix.stop()
    assert before["alice@example.org"].status == "sent"
    temp, gone = before["temp@example.org"], before["gone@example.org"]
    assert (temp.status, temp.attempts) == ("pending", 1) and temp.last_error.startswith("450 ")
    assert temp.next_try_at.replace(tzinfo=UTC) > datetime.now(UTC)
    assert (gone.status, gone.attempts) == ("dead", 1) and gone.last_error.startswith("550 ")
    assert again.stdout.strip() == "delivered 0 mail(s)", "the 450 is not due again at once"
    assert outbox(tmp_path)["temp@example.org"].attempts == 1


def outbox(data: Path) -> dict[str, Row[Any]]:
    engine = create_engine(f"sqlite:///{data / 'pbmserv.db'}")
    try:
        with engine.connect() as connection:
            return {row.recipient: row for row in connection.execute(select(OutboxMail.__table__))}
    finally:
        engine.dispose()
