"""MkDocs hook: the bench's tables and charts rendered from its result files, the event and
webhook body examples written by the code, and table cells that fit the page.

A page writes ``{{ bench: local_pages }}`` (a table rendered from a result file's figures:
`tools.bench_tables.RENDERERS`) or ``{{ bench: fanout#2 }}`` (the second markdown table
the bench printed) where a table goes; ``columns=1,4,5`` keeps those columns (numbered
from 1), and a table wider than the page allows is split into several whose first
``keys=N`` columns (1 unless told) name the rows. ``{{ chart: hot_key }}`` places a chart
(`tools.bench_charts.CHARTS`). Each is stamped with the run it comes from. The figures
come from ``bench/results/<name>.json`` as the last ``make bench`` or ``make load`` wrote
them, never typed by hand; a missing file, or a name nothing renders, fails the build.
"""

from __future__ import annotations

import json
import posixpath
import re
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from local.openapi.webhooks import example_documents
from tools import schedule_figures
from tools.bench_charts import CHARTS, FOLDER, svg
from tools.bench_results import source
from tools.bench_tables import table

EXAMPLES = re.compile(r"\{\{\s*examples:\s*(events|bodies)\s*\}\}")
"""Where the event and webhook body examples go: written by the code that writes the API's
events and the deliveries' bodies (`local.openapi.webhooks`), as the OpenAPI document has them."""
TABLE = re.compile(
    r"\{\{\s*bench:\s*(?P<name>\w+(?:\.\w+)?)(?:#(?P<number>\d+))?"
    r"(?:\s+columns=(?P<columns>\d+(?:,\d+)*))?(?:\s+keys=(?P<keys>[1-5]))?\s*\}\}"
)
CHART = re.compile(r"\{\{\s*chart:\s*(?P<name>\w+)\s*\}\}")
SCHEDULE = re.compile(r"\{\{\s*schedule:\s*(?P<name>\w+)\s*\}\}")
"""A schedule's picture or table of handoffs, drawn by the engine (`tools.schedule_figures`)."""
MALFORMED = re.compile(r"\{\{\s*(?:bench|chart|schedule):[^}]*\}\}")
"""A placeholder left after rendering: misspelt, so the page would show it raw."""
CELL = re.compile(r"<(td|th)\b[^>]*>.*?</\1>", re.DOTALL)
SPACED_CODE = re.compile(r"<code>([^<]*\s[^<]*)</code>")
"""Inline code holding a space: a phrase (``{"id", "name"}``) that may wrap at its spaces,
where an identifier (``incident.resolved``) stays whole (``docs/css/reading.css``)."""


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Every chart, drawn from its result files, as ``bench/charts/<name>.svg`` of the site."""
    for name, chart in CHARTS.items():
        files.append(File.generated(config, f"{FOLDER}/{name}.svg", content=svg(chart)))
    for name, example in schedule_figures.EXAMPLES.items():
        path = f"{schedule_figures.FOLDER}/{name}.svg"
        files.append(File.generated(config, path, content=schedule_figures.svg(example)))
    return files


def on_page_markdown(markdown: str, *, page: Page, **_: Any) -> str:
    """Every placeholder replaced: tables, charts, and ``{{ examples: events }}`` /
    ``{{ examples: bodies }}`` by one tab per event type."""
    markdown = TABLE.sub(_table, markdown)
    markdown = CHART.sub(lambda m: _chart(m.group("name"), page), markdown)
    markdown = SCHEDULE.sub(lambda m: _schedule(m.group("name"), page), markdown)
    if left := MALFORMED.search(markdown):
        raise PluginError(f"{page.file.src_uri}: a placeholder nothing renders: {left[0]}")
    return EXAMPLES.sub(lambda m: _tabs(example_documents(m.group(1))), markdown)


def on_page_content(html: str, **_: Any) -> str:
    """Inline code with a space in a table cell marked ``spaced``, so that it may wrap."""
    return CELL.sub(
        lambda cell: SPACED_CODE.sub(r'<code class="spaced">\1</code>', cell.group(0)), html
    )


def _table(match: re.Match[str]) -> str:
    """A table placeholder's table, then the run it comes from."""
    name, number, columns = match.group("name"), match.group("number"), match.group("columns")
    rendered = table(
        name,
        int(number) if number else None,
        [int(c) for c in columns.split(",")] if columns else None,
        int(match.group("keys") or 1),
    )
    return f"{rendered}\n\n*{source(name.split('.', 1)[0])}*"


def _chart(name: str, page: Page) -> str:
    """A chart placeholder's image, linked relative to `page`, then the runs it draws."""
    if name not in CHARTS:
        raise PluginError(f"{page.file.src_uri}: no chart named {name!r} in tools/bench_charts")
    chart = CHARTS[name]
    where = posixpath.relpath(f"{FOLDER}/{name}.svg", posixpath.dirname(page.file.src_uri) or ".")
    sources = " ".join(source(stem) for stem in chart.sources)
    return f"![{chart.title}]({where})\n\n*{sources}*"


def _schedule(name: str, page: Page) -> str:
    """A schedule placeholder's picture (linked relative to `page`) or table."""
    if name in schedule_figures.TABLES:
        return schedule_figures.TABLES[name]()
    if name not in schedule_figures.EXAMPLES:
        raise PluginError(
            f"{page.file.src_uri}: no schedule named {name!r} in tools/schedule_figures"
        )
    where = posixpath.relpath(
        f"{schedule_figures.FOLDER}/{name}.svg", posixpath.dirname(page.file.src_uri) or "."
    )
    return f"![{schedule_figures.EXAMPLES[name].title}]({where})"


def _tabs(documents: dict[str, Any]) -> str:
    """One pymdownx tab per document, its JSON in a code block."""
    blocks = []
    for title, document in documents.items():
        code = json.dumps(document, indent=2, ensure_ascii=False).replace("\n", "\n    ")
        blocks.append(f'=== "{title}"\n\n    ```json\n    {code}\n    ```\n')
    return "\n".join(blocks)
