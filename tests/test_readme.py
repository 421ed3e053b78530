"""The README as a tested document: its five-minute walk, run as written
with bash against the installed `pbmserv`, and its command table, read by
the command parser."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path

import pytest

from pbmserv.protocol.parser import parse_command
from pbmserv.service.processing.catalog import Catalog

README = Path(__file__).resolve().parent.parent / "README.md"


def readme_section(title: str) -> str:
    text = README.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else None]


def walk_script() -> str:
    """The first shell block of the README's walk, exactly as printed."""
    blocks = re.findall(r"^```sh\n(.*?)^```$", readme_section("Five minutes with a game by mail"), re.S | re.M)
    assert blocks, "the walk has no ```sh block"
    return blocks[0]


#: (recipient, Subject (CODE: a confirmation code), lines its body must hold), one a reply, in the walk's order
EXPECTED = [
    ("alice@example.org", "confirm alice CODE", ["Welcome, alice. Your account on the play-by-email server"]),
    ("alice@example.org", "pbmserv confirm alice", ["alice@example.org now gets the mail of alice."]),
    ("bob@example.org", "confirm bob CODE", ["Welcome, bob. Your account on the play-by-email server pbmserv@localhost"]),
    ("bob@example.org", "pbmserv confirm bob", ["bob@example.org now gets the mail of bob."]),
    ("alice@example.org", "Majorities help", ["Majorities (a game by Bill Taylor)"]),
    *[(player, "Majorities Board 101", ["Majorities Board 101: alice (Black) vs bob (White)", "It is alice's turn."])
      for player in ("alice@example.org", "bob@example.org")],
    *[(player, "Majorities Board 101", ["It is bob's turn.", "  1. alice c2", "alice writes:", "Good luck!"])
      for player in ("alice@example.org", "bob@example.org")],
    *[(player, "Majorities Board 101", ["It is alice's turn.", "  1. alice c2      2. bob a1,e1"])
      for player in ("alice@example.org", "bob@example.org")],
    ("bob@example.org", "Majorities Board 101 Error",
     ["It is not your turn on Majorities board 101: alice is to move.", "> Subject: majorities move 101 bob ******** b1,b3"]),
    ("carol@example.org", "Majorities Board 101", ["It is alice's turn.", "  1. alice c2      2. bob a1,e1"]),
    *[(player, "Majorities Board 101", ["Game won by bob: alice resigned.", "  1. alice c2         2. bob a1,e1        3. alice resign"])
      for player in ("alice@example.org", "bob@example.org")],
]


def maildir_order(name: str) -> int:
    """The order a maildir file was queued in: its outbox row, which the file is named by."""
    match = re.fullmatch(r"(\d{12})\.[0-9a-f]{16}\.pbmserv\..*", name)
    assert match, name
    return int(match.group(1))


def run_walk(checkout: Path, tmp: Path) -> tuple[Path, str]:
    """Runs the walk in `checkout` (as a reader pastes it there); returns
    the directory it made for its server and what it printed."""
    before = set(tmp.iterdir())
    environment = {
        **{name: value for name, value in os.environ.items() if not name.startswith("PBMSERV_")},
        "TMPDIR": str(tmp),
        # cheap password hashing, so that the walk takes seconds; the README's text is unchanged
        "PBMSERV_PASSWORD_TIME_COST": "1",
        "PBMSERV_PASSWORD_MEMORY_KIB": "1024",
    }
    result = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", walk_script()],
        cwd=checkout, env=environment, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    made = set(tmp.iterdir()) - before
    assert len(made) == 1, made
    return made.pop(), result.stdout


def replies(server: Path) -> list[tuple[str, EmailMessage]]:
    new = server / "mail" / "outbox" / "new"
    parser = BytesParser(policy=policy.default)
    return [(path.name, parser.parsebytes(path.read_bytes())) for path in sorted(new.iterdir(), key=lambda p: maildir_order(p.name))]


def check_replies(server: Path, printed: str) -> None:
    received = replies(server)
    # a new server's key makes new confirmation codes
    subjects = [(str(m["To"]), re.sub(r"^(confirm \w+) [a-z2-9]{10}$", r"\1 CODE", str(m["Subject"]))) for _, m in received]
    assert subjects == [(to, subject) for to, subject, _ in EXPECTED]
    for (name, message), (_, _, lines) in zip(received, EXPECTED):
        text = message.get_content()
        for line in lines:
            assert line in text.splitlines(), f"{message['Subject']} to {message['To']} lacks {line!r}:\n{text}"
        assert "secret1" not in message.as_string() and "secret2" not in message.as_string()
        assert message["Auto-Submitted"] == "auto-replied"
        # a reply answers the mail it is a reply to; a board mail to the other players refers to their thread's first
        answered = re.fullmatch(r"<\d+@example\.org>", str(message["In-Reply-To"]))
        in_thread = str(message["Message-ID"]).startswith("<board.") or str(message["References"]).startswith("<board.")
        assert answered or in_thread, (message["In-Reply-To"], message["References"])
        assert name in printed.split()


def test_the_walk_runs_as_written_and_again(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / ".venv").symlink_to(Path(sys.prefix))
    assert (checkout / ".venv" / "bin" / "activate").exists(), "the tests run from a venv, as the README installs"
    tmp = tmp_path / "tmp"
    tmp.mkdir()

    first, printed = run_walk(checkout, tmp)
    check_replies(first, printed)
    second, printed = run_walk(checkout, tmp)
    assert second != first
    check_replies(second, printed)
    assert sorted(checkout.iterdir()) == [checkout / ".venv"], "the walk writes nothing where it is pasted"


def command_table() -> list[str]:
    """Each command form of the README's table, as its cell says it."""
    section = readme_section("The command language")
    table = [re.sub(r"\([^)]*\)", "", line).strip() for line in section.splitlines() if line.startswith("    ")]
    return [cell for line in table for cell in re.split(r"\s{2,}|\s(?=GAME |all show )", line)]


#: what stands for each placeholder word of the table in an example
EXAMPLE_WORDS = {
    "GAME": "majorities", "board": "101", "board[#n]": "101#3", "board[#n]...": "101 102#4",
    "userid": "alice", "userid1": "alice", "userid2": "bob", "userid...": "alice bob", "to-userid...": "bob carol",
    "password": "secret", "old": "secret", "new": "secret2", "move": "a5,f3", "move[#n]": "a5,f3#4",
    "move[;move...]": "a5,f3;b1,b2", "number": "3", "code": "ABCD1234", "command": "move",
    "game": "majorities", "address": "alice@example.net", "HOUR": "7",
}


def examples(form: str) -> list[str]:
    """Command lines that the table's `form` promises to accept: each
    alternative of an `a|b` word, with and without each optional `[...]`."""
    results = [""]
    words = re.findall(r"\[[^\]]*\]|\S+", form)
    verb_words = 2 if words[0] in ("GAME", "change", "all") else 1
    for index, word in enumerate(words):
        if index < verb_words:
            choices = ["majorities" if word == "GAME" else word]
            if index and "|" in word:
                choices = word.replace("[#n]", "").split("|")
        elif word.startswith("[") and word.endswith("]") and word not in EXAMPLE_WORDS:
            inner = word[1:-1].removesuffix("...")
            choices = ["", *[EXAMPLE_WORDS.get(choice, choice) for choice in inner.split("|")]]
            if inner.startswith("-"):  # an option or timer: the first example of its kind
                choices = ["", {
                    "-option=value": "-size=3", "--nagtime=days": "--nagtime=3", "--forfeittime=days": "--forfeittime=9",
                    "-bot=HOURS": "-bot=12",
                }[inner]]
        elif word in EXAMPLE_WORDS:
            choices = [EXAMPLE_WORDS[word]]
        elif "|" in word:
            choices = [EXAMPLE_WORDS.get(choice, choice) for choice in word.replace("[#n]", "").split("|")]
        elif word.endswith("...]"):
            choices = [word]
        else:
            choices = [word]
        results = [f"{done} {choice}".strip() for done in results for choice in choices]
    return results


def test_the_command_table_has_every_form_we_check() -> None:
    forms = command_table()
    assert "GAME move board userid password move[#n]" in forms
    assert "vacation userid password on|off" in forms
    assert len(forms) >= 28


def test_the_opening_example_parses() -> None:
    opening = README.read_text().split("\n\n")[2]
    assert opening.strip() == "majorities move 101 alice secret a5,f3"
    parse_command(opening.strip(), Catalog.installed().names())


@pytest.mark.parametrize("form", command_table())
def test_every_command_of_the_table_parses(form: str) -> None:
    games = Catalog.installed().names()
    for line in examples(form):
        parse_command(line, games)  # raises ParseError for a line it does not accept


def dockerfile_steps(path: Path) -> list[tuple[str, str]]:
    """(instruction, arguments) of a Dockerfile, continuation lines joined."""
    text = re.sub(r"\\\n", " ", path.read_text())
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in lines]


@pytest.mark.parametrize("dockerfile", ["Dockerfile", "deploy/docker/postfix.Dockerfile"])
def test_the_dockerfiles_copy_what_the_checkout_has(dockerfile: str) -> None:
    """No Docker engine here: what can be checked without one is that every
    file an image copies from the checkout is there."""
    checkout = README.parent
    for instruction, arguments in dockerfile_steps(checkout / dockerfile):
        if instruction == "COPY" and not arguments.startswith("--from"):
            for source in arguments.split()[:-1]:
                assert (checkout / source).exists(), f"{dockerfile} copies {source}, which the checkout lacks"


def test_the_image_installs_as_the_smoke_test_does() -> None:
    """The image's install is the one CI runs in .ci/smoke-install: the
    wheel from `pip wheel --no-deps`, installed with pip, not editable."""
    runs = [arguments for instruction, arguments in dockerfile_steps(README.parent / "Dockerfile") if instruction == "RUN"]
    smoke = (README.parent / ".ci" / "smoke-install").read_text()
    assert any(re.search(r"pip wheel .*--no-deps --wheel-dir /wheel \.$", run) for run in runs), runs
    assert any(re.search(r"pip install --no-cache-dir /wheel/pbmserv-\*\.whl", run) for run in runs), runs
    assert not any(" -e " in run for run in runs)
    assert re.search(r"pip\" wheel .*--no-deps --wheel-dir", smoke) and re.search(r"pip\" install .*\"\$wheel\"", smoke)


def test_the_compose_file_builds_from_files_that_exist() -> None:
    compose = README.parent / "deploy" / "docker" / "compose.yaml"
    text = compose.read_text()
    for dockerfile in re.findall(r"dockerfile: (\S+)", text):
        assert (README.parent / dockerfile).exists(), dockerfile
    assert re.search(r"^\s+build: \.\./\.\.$", text, re.M) and (compose.parent / "../../Dockerfile").exists()
    assert "PBMSERV_RELAY: postfix:25" in text
