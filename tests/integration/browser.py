"""A real headless Chromium for the inspector's browser tests: Debian's package
(``apt-get install chromium``; scripts/test installs it when missing), driven by Playwright's
bundled driver through ``executable_path``. No browser is ever downloaded. Without Chromium the
tests fail, loudly (they never skip), as the integration tests do without Neo4j."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

CHROMIUM = os.environ.get("SHERIFF_CHROMIUM", "/usr/bin/chromium")


@contextmanager
def chromium() -> Iterator[Browser]:
    """One headless Chromium (close it by leaving the block)."""
    if not Path(CHROMIUM).exists():
        pytest.fail(
            f"the inspector's browser tests need Chromium at {CHROMIUM}: "
            "`apt-get install -y chromium` (scripts/test does it when run as root), "
            "or set SHERIFF_CHROMIUM",
            pytrace=False,
        )
    with sync_playwright() as p:
        # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


def sign_in(page: Page, base_url: str, key: str) -> None:
    """Sign in to the inspector with ``key`` through its form."""
    page.goto(f"{base_url}/ui")
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Sign in").click()
