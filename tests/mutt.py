"""Mutt, Debian's package, as a reader of the server's mail: which mails
its thread view puts in one thread. Where mutt is missing the tests that
need it are skipped, unless PBMSERV_REQUIRE_MUTT=1 (as in CI), where they
fail and say why.

Mutt runs in a terminal of its own (a pty), with a muttrc that sorts by
threads (`strict_threads`: by References and In-Reply-To alone, never by
Subject) and `push`es the keys a reader would press: limit the index to
the mails asked for, tag the thread of the first and copy the tagged mails
to a maildir of their own. What that maildir holds is the thread as mutt
made it; nothing here reads a mail's headers."""

from __future__ import annotations

import fcntl
import mailbox
import os
import pty
import select
import shutil
import struct
import subprocess
import termios
import time
from pathlib import Path

import pytest

MUTT = shutil.which("mutt") or "/usr/bin/mutt"
#: how long mutt may take over a few hundred mails before the test says it hung
PATIENCE_SECONDS = 60.0

MUTTRC = """\
set mbox_type=Maildir
set sort=threads
set sort_aux=date-sent
set strict_threads=yes
set confirmcreate=no
set confirmappend=no
set move=no
set mark_old=no
set wait_key=no
set quit=yes
set beep=no
set header_cache=""
set index_format="%4C %Z %{%b %d} %-15.15L %?M?(#%03M)&(%4l)? %s"
"""


def require_mutt() -> str:
    if not Path(MUTT).exists():
        if os.environ.get("PBMSERV_REQUIRE_MUTT") == "1":
            pytest.fail(f"PBMSERV_REQUIRE_MUTT=1 but there is no mutt at {MUTT} (apt-get install mutt)")
        pytest.skip(f"no mutt at {MUTT}")
    return MUTT


def first_thread(maildir: Path, pattern: str, work: Path) -> list[mailbox.MaildirMessage]:
    """The mails of the first thread (as mutt sorts its threads) among
    those of `maildir` that match mutt's `pattern`."""
    return _copied(maildir, pattern, work, "<first-entry><tag-thread>")


def matching(maildir: Path, pattern: str, work: Path) -> list[mailbox.MaildirMessage]:
    """Every mail of `maildir` that matches `pattern`, as mutt reads them."""
    return _copied(maildir, pattern, work, f"<tag-pattern>{pattern}<enter>")


def _copied(maildir: Path, pattern: str, work: Path, tag: str) -> list[mailbox.MaildirMessage]:
    """What mutt copies of `maildir` limited to `pattern` once `tag` has tagged it."""
    mutt = require_mutt()
    work.mkdir(parents=True, exist_ok=True)
    target = work / f"copy{len(list(work.iterdir()))}"
    keys = f"<limit>{pattern}<enter>{tag}<tag-prefix><copy-message>{target}<enter><exit>"
    (work / "muttrc").write_text(MUTTRC + f"push '{keys}'\n", encoding="utf-8")
    screen = _run_in_terminal([mutt, "-n", "-F", str(work / "muttrc"), "-f", str(maildir)], work)
    if not target.exists():
        pytest.fail(f"mutt copied nothing to {target}; its screen:\n{screen}")
    box = mailbox.Maildir(target, create=False)
    return [box[key] for key in box.keys()]


def _run_in_terminal(command: list[str], home: Path) -> str:
    """Run `command` in a pty of 132x40 until it ends; its screen's bytes, as text."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 132, 0, 0))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "TERM": "xterm", "LANG": "C.UTF-8"}
    process = subprocess.Popen(command, stdin=follower, stdout=follower, stderr=follower, env=env, start_new_session=True)
    os.close(follower)
    output = bytearray()
    deadline = time.monotonic() + PATIENCE_SECONDS
    try:
        while process.poll() is None or _readable(leader, 0):
            stuck = b"Press any key" in output  # an error in the muttrc: mutt waits for a person
            if stuck or time.monotonic() > deadline:
                process.kill()
                process.wait()
                why = "stopped at an error" if stuck else f"did not finish in {PATIENCE_SECONDS:.0f} s"
                pytest.fail(f"mutt {why}; its screen:\n{output.decode(errors='replace')}")
            if _readable(leader, 0.1):
                try:
                    output += os.read(leader, 65536)
                except OSError:  # the terminal is gone with the process
                    break
    finally:
        os.close(leader)
    process.wait()
    return output.decode(errors="replace")


def _readable(descriptor: int, timeout: float) -> bool:
    return bool(select.select([descriptor], [], [], timeout)[0])
