"""What a reader of the built docs site sees at 1280 x 900 in headless Chromium: words,
screens, tables, and what does not fit or cannot be reached from the table of contents.

The browser test of the site's layout asserts on the same measure, so "too wide" and "not
in the table of contents" mean one thing in the test and in this report:

    python -m tools.docs_measure site benchmarks/ status/ api/

Without page arguments every page of the site is measured (`tools.browser`'s Chromium).
"""

from __future__ import annotations

import argparse
import functools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, Page

from tools.browser import chromium

WIDTH, HEIGHT = 1280, 900
REVEAL = ".tabbed-set > .tabbed-content > .tabbed-block { display: block !important; }"
"""Every tab's content shown, as a reader clicking through them would see each."""
OPEN = "() => document.querySelectorAll('article details').forEach(d => { d.open = true; })"
"""Every collapsed block opened: what it holds is measured too."""
MEASURE = """() => {
  const article = document.querySelector('article');
  const area = document.querySelector('.md-content').getBoundingClientRect();
  const title = h => h.innerText.replace('\u00b6', '').trim();
  const above = el => [...article.querySelectorAll('h1, h2, h3')]
    .filter(h => h.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING).pop();
  const name = el => {
    const first = el.tagName === 'TABLE' && el.rows.length
      ? [...el.rows[0].cells].map(c => c.innerText.trim()).join(' | ')
      : el.innerText.trim().split('\\n')[0];
    const heading = above(el);
    return `${el.tagName.toLowerCase()} under "${heading ? title(heading) : '-'}": `
      + first.slice(0, 70);
  };
  const boxes = el => {
    const chain = [];
    for (let box = el; box && box !== article; box = box.parentElement) chain.push(box);
    return chain;
  };
  const scrolls = box => box.scrollWidth > box.clientWidth + 1
    && getComputedStyle(box).overflowX !== 'visible';
  const tooWide = el => el.getBoundingClientRect().right > area.right + 1
    || boxes(el).some(scrolls);
  const tables = [...article.querySelectorAll('table')];
  const wide = [...tables, ...article.querySelectorAll('pre > code')].filter(tooWide);
  const linked = new Set([...document.querySelectorAll('nav.md-nav--secondary a[href^="#"]')]
    .map(a => decodeURIComponent(a.getAttribute('href').slice(1))));
  const headings = [...article.querySelectorAll('h2, h3')];
  const words = el => el.innerText.split(/\\s+/).filter(Boolean).length;
  const stretches = [0];
  for (const child of article.children) {
    if (['H2', 'H3'].includes(child.tagName)) stretches.push(0);
    else stretches[stretches.length - 1] += words(child);
  }
  return {
    words: words(article),
    screens: document.documentElement.scrollHeight / window.innerHeight,
    tables: tables.length,
    wide_tables: tables.filter(tooWide).length,
    widest_columns: Math.max(0, ...tables.map(t => t.rows.length ? t.rows[0].cells.length : 0)),
    longest_unheaded: Math.max(...stretches),
    wide: wide.map(name),
    unlinked: headings.filter(h => !h.id || !linked.has(h.id))
      .map(h => `${h.tagName.toLowerCase()} "${title(h)}"`),
  };
}"""
"""Too wide: a table or code block that sticks out of the content column, or that the reader
must scroll sideways (it, or a box around it that scrolls, holds more than it shows);
unlinked: an h2 or h3 the page's table of contents does not link to; the longest stretch
without a heading: the most words between two h2 or h3."""


@dataclass(frozen=True)
class Measure:
    """One page as the reader sees it."""

    path: str
    words: int
    screens: float
    tables: int
    wide_tables: int
    widest_columns: int
    longest_unheaded: int
    wide: list[str]
    """Every table and code block too wide for the page, named by the heading above it."""
    unlinked: list[str]
    """Every h2 and h3 the table of contents does not link to."""


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """No access log on the report."""


@contextmanager
def served(site: Path) -> Iterator[str]:
    """`site` served on a free port of 127.0.0.1, for as long as the block runs."""
    handler = functools.partial(_Quiet, directory=str(site))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def site_pages(site: Path) -> list[str]:
    """Every page of the built site, as its path under the site's root (``api/``)."""
    return sorted(
        f"{page.parent.relative_to(site).as_posix()}/".removeprefix("./")
        for page in site.rglob("index.html")
        if "assets" not in page.parts
    )


def measure(page: Page, url: str, path: str) -> Measure:
    """`path` of the site at `url`, opened in `page` (a 1280 x 900 viewport)."""
    page.goto(f"{url}/{path}", wait_until="load")
    return measure_open(page, path)


def measure_open(page: Page, path: str) -> Measure:
    """The page `page` shows (`path`), every tab and collapsed block opened first."""
    page.add_style_tag(content=REVEAL)
    page.evaluate(OPEN)
    found: dict[str, Any] = page.evaluate(MEASURE)
    return Measure(path=path, **found)


def measure_all(browser: Browser, url: str, paths: list[str]) -> list[Measure]:
    """Each of `paths`, in one page of `browser`."""
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    try:
        return [measure(page, url, path) for path in paths]
    finally:
        page.close()


def report(measures: list[Measure]) -> str:
    """A markdown table of `measures`, then what is too wide or unlinked, page by page."""
    lines = [
        "| page | words | screens | tables | too wide | widest (columns) | most words unheaded"
        " | h2/h3 not in TOC |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for m in measures:
        lines.append(f"| {m.path} | {m.words:,} | {m.screens:.1f} | {m.tables} | "
                     f"{m.wide_tables} | {m.widest_columns} | {m.longest_unheaded:,} | "
                     f"{len(m.unlinked)} |")  # fmt: skip
    lines.extend(offenders(measures))
    return "\n".join(lines)


def offenders(measures: list[Measure]) -> list[str]:
    """Every table or code block too wide and every heading not in the table of contents,
    one line each, named by page."""
    wide = [f"{m.path}: too wide: {name}" for m in measures for name in m.wide]
    unlinked = [f"{m.path}: not in the table of contents: {name}" for m in measures
                for name in m.unlinked]  # fmt: skip
    return wide + unlinked


def main() -> None:
    """Print the measures of the pages asked for (all of them without any)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path, help="the built site (make docs-build: site/)")
    parser.add_argument("pages", nargs="*", help="paths under the site's root, e.g. api/")
    args = parser.parse_args()
    paths = args.pages or site_pages(args.site)
    with served(args.site) as url, chromium() as browser:
        print(report(measure_all(browser, url, paths)))


if __name__ == "__main__":
    main()
