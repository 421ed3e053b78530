"""Headless Chromium for the tests that look at what a person would see:
Debian's Chromium, driven by Playwright. Where it is missing the tests
that need it are skipped, unless PBMSERV_REQUIRE_BROWSER=1 (as in CI),
where they fail and say why."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, sync_playwright

CHROMIUM = Path("/usr/bin/chromium")
#: a browser that starts alike on every machine and asks the network for nothing of its own
ARGS = (
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run",
)


@contextmanager
def chromium() -> Iterator[BrowserContext]:
    """A fresh headless Chromium (its own temporary profile), closed on leaving."""
    if not CHROMIUM.exists():
        if os.environ.get("PBMSERV_REQUIRE_BROWSER") == "1":
            pytest.fail(f"PBMSERV_REQUIRE_BROWSER=1 but there is no Chromium at {CHROMIUM} (apt-get install chromium)")
        pytest.skip(f"no Chromium at {CHROMIUM}")
    with tempfile.TemporaryDirectory(prefix="pbmserv-chromium-") as profile, sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=str(CHROMIUM), headless=True, args=list(ARGS),
        )
        try:
            yield context
        finally:
            context.close()
