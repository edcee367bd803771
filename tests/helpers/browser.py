"""Headless Chromium for the browser tests: Debian's ``chromium`` package driven by
Playwright through ``executable_path`` (never ``playwright install``), with what a page
logs as an error and every request that leaves 127.0.0.1 recorded."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, Request, sync_playwright

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
"""Quiet flags: no background connections to Google's hosts on a closed network."""
LOCAL_HOSTS = {"127.0.0.1", "localhost"}


@dataclass
class Watched:
    """A page with what it logged as errors and the requests that left the machine."""

    page: Page
    errors: list[str] = field(default_factory=list)
    external: list[str] = field(default_factory=list)


@contextmanager
def chromium() -> Iterator[Browser]:
    """Debian's Chromium, headless (`.ci/run` installs the package)."""
    executable = shutil.which("chromium") or CHROMIUM
    if not shutil.which(executable):
        pytest.fail("Chromium is not installed: apt-get install chromium (.ci/run does)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=FLAGS)
        try:
            yield browser
        finally:
            browser.close()


def watched(browser: Browser, width: int = 1280) -> Watched:
    """A new page that records console errors, page errors and non-local requests."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    seen = Watched(page)

    def console(message: ConsoleMessage) -> None:
        if message.type == "error":
            seen.errors.append(message.text)

    def request(sent: Request) -> None:
        host = urlsplit(sent.url).hostname
        if sent.url.startswith(("http:", "https:", "ws:", "wss:")) and host not in LOCAL_HOSTS:
            seen.external.append(sent.url)

    page.on("console", console)
    page.on("pageerror", lambda error: seen.errors.append(str(error)))
    page.on("request", request)
    return seen
