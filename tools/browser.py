"""Debian's ``chromium`` package, headless, driven by Playwright through ``executable_path``
(never ``playwright install``): the one launcher of the browser tests and the docs' measure."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager

from playwright.sync_api import Browser, sync_playwright

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


class ChromiumMissingError(RuntimeError):
    """No Chromium on this machine (`.ci/run` installs Debian's package)."""


@contextmanager
def chromium() -> Iterator[Browser]:
    """Debian's Chromium, headless, closed when the block ends."""
    executable = shutil.which("chromium") or CHROMIUM
    if not shutil.which(executable):
        raise ChromiumMissingError("Chromium is not installed: apt-get install chromium")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=FLAGS)
        try:
            yield browser
        finally:
            browser.close()
