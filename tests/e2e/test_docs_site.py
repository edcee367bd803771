"""The documentation site as a reader's browser shows it (headless Chromium at 1280 px), in
one walk of every page: no raw Markdown markers (the API reference's tabs, hints and code
fences), no error logged, nothing requested from outside the site (no web fonts: it works
offline), no table or code block wider than the page, every section in the table of
contents; on the API reference, authentication reads as the ``Authorization`` header. And
the sitemap lists the pages."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page

from tests.helpers.browser import chromium, watched
from tools.docs_measure import measure_open, offenders, served, site_pages

pytestmark = [pytest.mark.integration, pytest.mark.browser]
ROOT = Path(__file__).resolve().parents[2]
RAW_MARKERS = ['=== "', "??? ", "```", "&lt;span", "[OAD("]
PROSE = """() => {
  const article = document.querySelector('article').cloneNode(true);
  article.querySelectorAll('pre, code').forEach(code => code.remove());
  return article.innerText;
}"""
"""The article's text outside its code (where ``=== "`` is TypeScript, not a tab)."""
BROKEN_IDENTIFIERS = """() => [...document.querySelectorAll('article td code')]
  .filter(c => !/\\s/.test(c.textContent) && c.getClientRects().length > 1)
  .map(c => c.textContent)"""
"""Identifiers in table cells wrapped over two lines ("incident.resolve/d")."""
READING_PAGES = ["timeline/", "events/", "api/", "key-schema/", "status/"]
"""The pages whose tables name event types and routes."""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The site `make docs-build` built (``DOCS_SITE``, which ``make test`` builds before the
    suite), else built here as it builds it; served on a free local port."""
    built = Path(os.environ.get("DOCS_SITE") or tmp_path_factory.getbasetemp() / "no-site")
    if not (built / "index.html").exists():
        built = tmp_path_factory.mktemp("site")
        mkdocs = str(Path(sys.executable).parent / "mkdocs")
        done = subprocess.run(
            [mkdocs, "build", "--strict", "-d", str(built)],
            cwd=ROOT, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    with served(built) as url:
        yield url, built


def reading_problems(page: Page, path: str) -> list[str]:
    """What issue 40's screenshots showed on the reading pages: identifiers broken across
    lines; the timeline page not opening with the event shape."""
    problems = [f"{path}: identifier broken across lines: {name}"
                for name in page.evaluate(BROKEN_IDENTIFIERS)]  # fmt: skip
    if path == "timeline/":
        first = page.locator("article h2").first.inner_text()
        if not first.startswith("Event shape"):
            problems.append(f"{path}: opens with {first!r}, not the event shape")
    return problems


def reference_problems(page: Page) -> list[str]:
    """The API reference shows authentication as the ``Authorization`` header (not the
    authorizer's name) and each operation's request and responses as tabs."""
    names = page.locator(".parameter-name").all_inner_texts()
    problems = [] if "Authorization" in names else ["api-reference/: no Authorization header"]
    if "cognito" in names:
        problems.append("api-reference/: the authorizer's name shown as a parameter")
    if page.locator(".tabbed-labels label").count() < 29:
        problems.append("api-reference/: operations without their request and response tabs")
    return problems


@pytest.mark.slow
def test_every_page_renders_offline_fits_1280_px_and_lists_its_sections(
    site: tuple[str, Path],
) -> None:
    """Issue 53, point 4: at 1280 px no table or code block is wider than the content column
    (none scrolls sideways: it would hide figures or code), and every h2 and h3 is linked
    from the page's table of contents (`tools.docs_measure`, whose report this is). Every
    problem of every page is named at once, by page and by the heading it sits under."""
    url, built = site
    paths = site_pages(built)
    assert len(paths) >= 20
    assert "api-reference/" in paths
    problems: list[str] = []
    measures = []
    with chromium() as browser:
        seen = watched(browser)
        for path in paths:
            seen.errors.clear()
            seen.external.clear()
            seen.page.goto(f"{url}/{path}", wait_until="load")
            text = seen.page.evaluate(PROSE)
            problems += [f"{path}: raw marker {m!r}" for m in RAW_MARKERS if m in text]
            if path in READING_PAGES:
                problems += reading_problems(seen.page, path)
            if path == "api-reference/":
                problems += reference_problems(seen.page)
            measures.append(measure_open(seen.page, path))  # lays out all: fonts are asked
            problems += [f"{path}: logged {error}" for error in seen.errors[:3]]
            problems += [f"{path}: requested {sent}" for sent in seen.external[:3]]
    problems += offenders(measures)
    if problems:
        pytest.fail(f"{len(problems)} problems at 1280 px:\n" + "\n".join(problems),
                    pytrace=False)  # fmt: skip


def test_the_sitemap_lists_every_page(site: tuple[str, Path]) -> None:
    _, built = site
    sitemap = (built / "sitemap.xml").read_text()
    for path in site_pages(built):
        assert f"<loc>http://127.0.0.1:8000/{path.lstrip('/')}</loc>" in sitemap, path
