"""The site as the programs run it: `serve` starts it in a process of its
own on `[web] listen` and stops it with the others; `pbmserv web` runs it
alone, and says what is wrong when it cannot."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from dataclasses import replace
from pathlib import Path

from pbmserv.cli import EX_CONFIG
from pbmserv.config import Settings
from pbmserv.web import serving
from tests.mailtools import make_mail
from tests.serve_helpers import PBMSERV, ServeProcess, wait_until
from tests.smtp_helpers import free_port
from tests.web_helpers import fetch


def test_serve_answers_http_on_its_web_port(database_url: str, tmp_path: Path) -> None:
    web_port = free_port()
    server = ServeProcess(database_url, tmp_path, PBMSERV_WEB_LISTEN=f"127.0.0.1:{web_port}").start()
    try:
        wait_until(lambda: "pbmserv listening" in server.log.read_text(), 30, server)
        assert server.process is not None
        assert f"; web site http://127.0.0.1:{web_port}/ pid " in server.log.read_text()
        assert len(server.children(4)) == 4  # worker, deliverer, bots and the site
        server.signup("alice", "secret1")
        server.signup("bob", "secret2")
        server.send(make_mail("alice@example.org", "toy challenge alice bob"), "alice@example.org")
        wait_until(lambda: fetch(f"http://127.0.0.1:{web_port}/toy/101").status == 200, 30, server)
        page = fetch(f"http://127.0.0.1:{web_port}/toy/101")
        assert page.media_type == "text/html" and "It is alice&#39;s turn." in page.text
    finally:
        server.stop()
    stopped = server.log.read_text().splitlines()[-1]
    assert "pbmserv stopped;" in stopped and stopped.endswith("web pid " + stopped.rpartition("web pid ")[2]), stopped
    assert stopped.endswith("exit code 0") and "exit code -" not in stopped, stopped


def test_pbmserv_web_runs_the_site_alone(database_url: str, tmp_path: Path) -> None:
    port = free_port()
    server = ServeProcess(database_url, tmp_path, PBMSERV_WEB_LISTEN=f"127.0.0.1:{port}")
    with open(server.log, "ab") as log:
        process = subprocess.Popen([PBMSERV, "web"], env=server.env, stdout=log, stderr=log, start_new_session=True)
    try:
        wait_until(lambda: fetch_or_none(f"http://127.0.0.1:{port}/") == 200, 30, server)
        assert f"pbmserv web site on http://127.0.0.1:{port}/" in server.log.read_text()
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            raise
    assert process.returncode == 0, server.log.read_text()


def test_pbmserv_web_without_an_address_says_so(database_url: str, tmp_path: Path) -> None:
    env = ServeProcess(database_url, tmp_path, PBMSERV_WEB_LISTEN="").env
    done = subprocess.run([PBMSERV, "web"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == EX_CONFIG and "PBMSERV_WEB_LISTEN" in done.stderr, done.stderr


def fetch_or_none(url: str) -> int | None:
    try:
        return fetch(url).status
    except OSError:
        return None


def test_the_sites_connections_send_at_once() -> None:
    """Every connection the site accepts has TCP_NODELAY: a head and a body
    written apart would otherwise wait for the client's delayed ACK (40 ms
    for every answer but the first on a kept-alive connection)."""
    settings = replace(Settings(), web_listen=f"127.0.0.1:{free_port()}")
    with serving.listen(settings) as listening, socket.create_connection(listening.getsockname()[:2]):
        accepted, _ = listening.accept()
        with accepted:
            assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
