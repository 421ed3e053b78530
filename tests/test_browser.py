"""The site in a real browser (issue 37, item 6): Debian's Chromium,
headless, driven by Playwright (`tests/browser.py`), opens the first page,
follows a link to a board, sees its picture, steps through the moves with
the links, opens the standings; no page logs an error to the console and
no request fails."""

from __future__ import annotations

import io
import re

from PIL import Image
from playwright.sync_api import ConsoleMessage, Page, Request, Response

from pbmserv.runtime import Runtime
from tests.browser import chromium
from tests.web_helpers import play_boards, running_site

#: a picture of a board holds at least this many colours (a blank or broken image a handful)
MOST_COLOURS_OF_A_BLANK = 16


def _watched(page: Page, problems: list[str]) -> None:
    def console(message: ConsoleMessage) -> None:
        if message.type in ("error", "warning"):
            problems.append(f"console {message.type}: {message.text}")

    def failed(request: Request) -> None:
        problems.append(f"failed: {request.url} ({request.failure})")

    def answered(response: Response) -> None:
        if response.status >= 400:
            problems.append(f"{response.status}: {response.url}")

    page.on("console", console)
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("requestfailed", failed)
    page.on("response", answered)


def _colours(png: bytes) -> int:
    image = Image.open(io.BytesIO(png)).convert("RGB")
    return len(image.getcolors(maxcolors=image.width * image.height) or [])


def test_a_visitor_watches_a_game(runtime: Runtime) -> None:
    play_boards(runtime)
    problems: list[str] = []
    with running_site(runtime) as site, chromium() as browser:
        page = browser.new_page()
        _watched(page, problems)
        page.goto(f"{site}/")
        assert page.title() == "Games · pbmserv"
        page.get_by_role("link", name="Toy 104").click()
        page.wait_for_url(f"{site}/toy/104")
        assert page.get_by_role("heading", level=1).inner_text() == "Toy Board 104: alice (X) vs bob (O)"

        picture = page.get_by_role("img", name="Toy, 3x3: alice (X) against bob (O)")
        picture.wait_for()
        assert picture.evaluate("image => image.complete && image.naturalWidth > 0")
        assert _colours(picture.screenshot()) > MOST_COLOURS_OF_A_BLANK

        page.get_by_role("link", name="First", exact=True).click()
        page.wait_for_url(f"{site}/toy/104?move=0")
        assert "The position after move 0 of 5." in page.content()
        for move in range(1, 3):
            page.get_by_role("link", name="Next", exact=True).click()
            page.wait_for_url(f"{site}/toy/104?move={move}")
            assert re.search(rf"The position after move {move} of 5\.", page.content())
            assert page.get_by_role("img", name=re.compile("^Toy")).evaluate("image => image.naturalWidth > 0")
        page.get_by_role("link", name="Previous", exact=True).click()
        page.wait_for_url(f"{site}/toy/104?move=1")
        page.get_by_role("link", name="Last", exact=True).click()
        page.wait_for_url(f"{site}/toy/104")
        assert "Game won by alice: three in a row." in page.content()

        page.get_by_role("link", name="Standings").click()
        page.wait_for_url(f"{site}/toy/standings")
        assert page.get_by_role("heading", level=1).inner_text() == "Toy standings"
        assert page.get_by_role("link", name="alice").count() == 1
    assert problems == []
