"""Pages of headless Chromium (`tools.browser`) that record what they log as an error and
every request that leaves 127.0.0.1."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

from playwright.sync_api import Browser, ConsoleMessage, Page, Request

from tools.browser import chromium

__all__ = ["Watched", "chromium", "watched"]

LOCAL_HOSTS = {"127.0.0.1", "localhost"}


@dataclass
class Watched:
    """A page with what it logged as errors and the requests that left the machine."""

    page: Page
    errors: list[str] = field(default_factory=list)
    external: list[str] = field(default_factory=list)


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
