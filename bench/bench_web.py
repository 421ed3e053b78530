"""What the web site answers under load (issue 37, item 5): `pbmserv web`
on a SQLite database that real mail filled, CLIENTS clients each asking
for ADDRESS over a kept-alive connection, one request after the other,
for SECONDS; printed: requests a second and the latency's median, p99 and
slowest, for the page itself and for a revalidation (If-None-Match: 304).

    .venv/bin/python bench/bench_web.py [--clients 50] [--seconds 10] [--address /toy/104]

The boards are those of the site's tests (tests/web_helpers.py); the
bench runs by hand, the machine's other load being what it is.
"""

from __future__ import annotations

import argparse
import http.client
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pbmserv.config import Settings  # noqa: E402
from pbmserv.mail.backends import MemoryBackend  # noqa: E402
from pbmserv.runtime import Runtime  # noqa: E402
from pbmserv.service.processing.catalog import Catalog  # noqa: E402
from pbmserv.store.database import upgrade  # noqa: E402
from tests.smtp_helpers import free_port  # noqa: E402
from tests.toygame import Toy  # noqa: E402
from tests.web_helpers import play_boards  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def filled_database(workdir: Path) -> str:
    url = f"sqlite:///{workdir / 'bench.db'}"
    upgrade(url)
    settings = replace(
        Settings(), database_url=url, key_file=str(workdir / "key"), mail_backend="memory",
        password_time_cost=1, password_memory_kib=1024,
    )
    runtime = Runtime(settings, catalog=Catalog([*Catalog.installed(), Toy()]), backend=MemoryBackend())
    try:
        play_boards(runtime)
    finally:
        runtime.close()
    return url


def client(port: int, address: str, until: float, revalidate: bool, latencies: list[float]) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers: dict[str, str] = {}
    if revalidate:
        connection.request("GET", address)
        response = connection.getresponse()
        response.read()
        headers["If-None-Match"] = response.headers["ETag"]
    mine = []
    while time.monotonic() < until:
        started = time.perf_counter()
        connection.request("GET", address, headers=headers)
        response = connection.getresponse()
        response.read()
        mine.append(time.perf_counter() - started)
        assert response.status == (304 if revalidate else 200), response.status
    connection.close()
    latencies.extend(mine)


def measure(port: int, address: str, clients: int, seconds: float, revalidate: bool) -> str:
    latencies: list[float] = []
    until = time.monotonic() + seconds
    threads = [threading.Thread(target=client, args=(port, address, until, revalidate, latencies)) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    ms = sorted(value * 1000 for value in latencies)
    p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
    what = "304 (If-None-Match)" if revalidate else "200"
    return (
        f"{address} {what}: {len(ms) / seconds:.0f} requests/s, median {statistics.median(ms):.1f} ms, "
        f"p99 {p99:.1f} ms, slowest {ms[-1]:.1f} ms ({clients} clients, {len(ms)} requests)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--address", default="/toy/104")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        workdir = Path(directory)
        url = filled_database(workdir)
        port = free_port()
        env = dict(
            os.environ, PBMSERV_DATABASE_URL=url, PBMSERV_WEB_LISTEN=f"127.0.0.1:{port}",
            PBMSERV_EXTRA_GAMES="tests.toygame:Toy", PYTHONPATH=str(REPO),
        )
        site = subprocess.Popen([Path(sys.executable).parent / "pbmserv", "web"], env=env)
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    http.client.HTTPConnection("127.0.0.1", port, timeout=5).request("HEAD", "/")
                    break
                except OSError:
                    assert time.monotonic() < deadline and site.poll() is None, "the site did not start"
                    time.sleep(0.1)
            for revalidate in (False, True):
                print(measure(port, options.address, options.clients, options.seconds, revalidate), flush=True)
        finally:
            site.terminate()
            site.wait(30)


if __name__ == "__main__":
    main()
