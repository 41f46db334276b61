"""Take the inspector's screenshot for the README (docs/inspector.png).

The bundled demo conversation (``sheriff demo``) is replayed into a namespace of its own, the
real app serves it on a free local port (in this process, as the tests do), and Debian's
Chromium (``/usr/bin/chromium`` or ``SHERIFF_CHROMIUM``; never a downloaded browser) signs in
with a fresh key and photographs one topic page. The namespace is deleted afterwards.

    PYTHONPATH=. .venv/bin/python scripts/inspector_screenshot.py [--out docs/inspector.png]
        [--topic TEXT]
"""

from __future__ import annotations

import argparse
import io
import os
import socket
import threading
import time
from pathlib import Path

import uvicorn
from playwright.sync_api import sync_playwright
from rich.console import Console

from api.app import create_app
from api.auth import ApiKeys
from api.container import Container
from api.demo import ASKED_AT, run_demo
from api.settings import Settings
from graph.clock import FixedClock
from graph.db import drop_namespace

NAMESPACE = "inspector-screenshot"
CHROMIUM = os.environ.get("SHERIFF_CHROMIUM", "/usr/bin/chromium")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--out", type=Path, default=Path("docs/inspector.png"))
    args.add_argument(
        "--topic", default="", help="among the topics matching this, one with related topics"
    )
    opts = args.parse_args()
    container = Container(Settings(sleep_mode="inline"), clock=FixedClock(ASKED_AT))
    try:
        container.migrate()
        run_demo(container, NAMESPACE, Console(file=io.StringIO()))  # its report is not shown
        app = create_app(container)
        port = _free_port()
        server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
        )
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)
        keys: ApiKeys = app.state.api_keys
        key = keys.create(NAMESPACE, "screenshot")[1]
        try:
            _photograph(f"http://127.0.0.1:{port}", key, opts.topic, opts.out)
        finally:
            server.should_exit = True
            thread.join(timeout=30)
        print(f"wrote {opts.out}")
    finally:
        drop_namespace(container.driver, NAMESPACE, container.settings.neo4j_database)
        container.close()


def _photograph(base: str, key: str, topic: str, out: Path) -> None:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(f"{base}/ui/login")
            page.get_by_label("API key").fill(key)
            page.get_by_role("button", name="Sign in").click()
            page.goto(f"{base}/ui/topics?q={topic}")
            links = page.get_by_test_id("topic-row").get_by_role("link")
            hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
            for href in hrefs:  # the first topic with related topics, else the first one
                page.goto(f"{base}{href}")
                if page.get_by_text("No related topics.").count() == 0:
                    break
            else:
                page.goto(f"{base}{hrefs[0]}")
            page.get_by_test_id("topic-name").wait_for()
            page.screenshot(path=str(out), full_page=False)
        finally:
            browser.close()


if __name__ == "__main__":
    main()
