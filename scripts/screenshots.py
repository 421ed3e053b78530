"""The README's screenshots of the web site (issue 37, item 6): one board
page of each game, docs/screenshots/GAME.png, remade from nothing.

    .venv/bin/python scripts/screenshots.py [--seed 37] [--out docs/screenshots]

A fresh SQLite database in a temporary directory; two players a game sign
up and play one board a good way in, by mail through the real service
(store -> process -> deliver, as `pbmserv receive` does), each move drawn
by a seeded RNG from the game's legal moves; then the site (the app that
`pbmserv web` serves, under uvicorn on a free loopback port) is opened in
Debian's headless Chromium (tests/browser.py) and the top of each board
page (the heading, whose turn and until when, the picture, the tallies
and the players) is saved, its colours quantised to keep it small.

The service's clock is a fixed one that both the mail and the site read,
moving on a few hours a move: the same seed gives the same moves, dates
and deadlines, so the same pages (and, on one machine with its fonts, the
same pictures).
"""

from __future__ import annotations

import argparse
import io
import random
import sys
import tempfile
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PIL import Image  # noqa: E402
from playwright.sync_api import BrowserContext, ViewportSize  # noqa: E402

from pbmserv.config import Settings  # noqa: E402
from pbmserv.gamekit import game_names  # noqa: E402
from pbmserv.mail.backends import MemoryBackend  # noqa: E402
from pbmserv.runtime import Runtime  # noqa: E402
from pbmserv.service.processing.catalog import Catalog  # noqa: E402
from pbmserv.store import records  # noqa: E402
from pbmserv.store.database import upgrade  # noqa: E402
from tests.browser import CHROMIUM, chromium  # noqa: E402
from tests.mailtools import send, signup  # noqa: E402
from tests.web_helpers import running_site  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
#: the browser's window: the site's column (72rem) with room either side
VIEWPORT: ViewportSize = {"width": 1100, "height": 900}
#: below the picture and the tables, this much of the page is kept (a glimpse of what follows)
MARGIN = 16
#: colours of a saved screenshot (a page is mostly flat colour: 128 keep the pictures' antialiasing smooth)
COLOURS = 128
START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
#: the time between two moves on any of the boards (each board hears from its players every few hours)
PACE = timedelta(minutes=53)


@dataclass(frozen=True)
class Showcase:
    """One game's board: the challenge's options, its players, how many moves to play."""

    game: str
    options: str
    players: tuple[str, str]
    moves: int


#: about half of a random game's length each, so that every board is busy and still running
SHOWCASES = {
    showcase.game: showcase
    for showcase in (
        Showcase("majorities", "", ("alice", "bob"), 14),
        Showcase("majority", "", ("carol", "dave"), 40),
        Showcase("parliament", "", ("erin", "frank"), 100),
        Showcase("plurality", "-board=hex", ("grace", "heidi"), 16),
        Showcase("psychomachia", "", ("ivan", "judy"), 40),
        Showcase("synch", "", ("mallory", "oscar"), 90),
    )
}


class Clock:
    """The service's time: fixed, moved on by hand."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now


def password(userid: str) -> str:
    return f"{userid}-pw"


def start(runtime: Runtime, showcase: Showcase) -> int:
    """Sign the players up and challenge; the new board's number."""
    challenger, opponent = showcase.players
    for userid in showcase.players:
        signup(runtime, userid, password(userid))
    options = f" {showcase.options}" if showcase.options else ""
    send(runtime, f"{challenger}@example.org", f"{showcase.game} challenge{options} {challenger} {opponent}")
    with runtime.engine.connect() as connection:
        number = records.newest_board_number(connection, showcase.game)
    assert number is not None, f"the {showcase.game} challenge made no board"
    return number


def move(runtime: Runtime, name: str, number: int, played: int, rng: random.Random) -> None:
    """One move by mail on the board, drawn from the legal moves of a seat to move."""
    assert runtime.catalog is not None
    game = runtime.catalog.get(name)
    with runtime.engine.connect() as connection:
        board = records.find_board(connection, name, number)
    assert board is not None and board.move_count == played, f"{name} {number}: move {played} was not taken"
    state = game.decode(board.state)
    if game.outcome(state) is not None:
        raise SystemExit(f"{name} board {number} ended after {played} moves: play fewer")
    seat = rng.choice(sorted(game.to_move(state)))
    userid = board.seats[seat]
    text = rng.choice(game.legal_moves(state, seat))
    send(runtime, f"{userid}@example.org", f"{name} move {number} {userid} {password(userid)} {text}")


def play(runtime: Runtime, clock: Clock, seed: int) -> dict[str, int]:
    """Every game's board, its moves played side by side over the same
    weeks (each board's last move a few hours old at the end); their numbers."""
    boards = {name: start(runtime, SHOWCASES[name]) for name in game_names()}
    rngs = {name: random.Random(f"{seed}-{name}") for name in boards}
    turns = sorted(
        ((played + 1) / SHOWCASES[name].moves, name, played) for name in boards for played in range(SHOWCASES[name].moves)
    )
    for _, name, played in turns:
        clock.now += PACE
        move(runtime, name, boards[name], played, rngs[name])
    return boards


def quantised(png: bytes) -> bytes:
    """The screenshot with at most COLOURS colours, as a compressed PNG."""
    image = Image.open(io.BytesIO(png)).convert("RGB").quantize(COLOURS, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()


def screenshot(site: str, address: str, context: BrowserContext) -> bytes:
    """The top of the page at `address`: down to the end of the picture and the tables beside it."""
    page = context.new_page()
    try:
        page.set_viewport_size(VIEWPORT)
        page.goto(f"{site}{address}")
        page.wait_for_load_state("networkidle")
        page.locator(".picture img").evaluate("image => image.decode()")
        box = page.locator(".position").bounding_box()
        assert box is not None, f"{address}: no picture"
        height = int(box["y"] + box["height"]) + MARGIN
        return page.screenshot(full_page=True, clip={"x": 0, "y": 0, "width": VIEWPORT["width"], "height": height})
    finally:
        page.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=37)
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    options = parser.parse_args()
    if not CHROMIUM.exists():
        raise SystemExit(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    missing = set(game_names()) - set(SHOWCASES)
    if missing:
        raise SystemExit(f"no showcase for {', '.join(sorted(missing))}: add one to SHOWCASES")
    options.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="pbmserv-screenshots-") as directory:
        workdir = Path(directory)
        url = f"sqlite:///{workdir / 'pbmserv.db'}"
        upgrade(url)
        (workdir / "key").write_bytes(bytes(range(32)))
        settings = replace(
            Settings(), database_url=url, key_file=str(workdir / "key"), mail_backend="memory",
            password_time_cost=1, password_memory_kib=1024,
        )
        clock = Clock(START)
        runtime = Runtime(settings, catalog=Catalog.installed(), clock=clock, backend=MemoryBackend())
        try:
            boards = play(runtime, clock, options.seed)
            for name, number in boards.items():
                print(f"{name}: board {number}, {SHOWCASES[name].moves} moves by mail", flush=True)
            clock.now += timedelta(hours=2)
            with running_site(runtime) as site, chromium() as context:
                for name, number in boards.items():
                    png = quantised(screenshot(site, f"/{name}/{number}", context))
                    path = options.out / f"{name}.png"
                    path.write_bytes(png)
                    print(f"{path.relative_to(REPO) if path.is_relative_to(REPO) else path}: {len(png) // 1024} KB", flush=True)
        finally:
            runtime.close()


if __name__ == "__main__":
    main()
