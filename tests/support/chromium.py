"""Headless Debian chromium through Playwright, for tests that look at what a user sees."""

from __future__ import annotations

import os
from contextlib import contextmanager

import pytest

CHROMIUM = "/usr/bin/chromium"
# As root in a container: no sandbox, no GPU, nothing fetched in the background.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@contextmanager
def chromium(profile, viewport: dict):
    """A browser context on a fresh ``profile`` folder; the test is skipped, with the
    reason, where chromium or playwright is missing."""
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"Debian's chromium is not installed ({CHROMIUM}); apt-get install chromium")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
    with sync_api.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(str(profile), executable_path=CHROMIUM, headless=True,
                                                        args=FLAGS, viewport=viewport)
        try:
            yield context
        finally:
            context.close()
