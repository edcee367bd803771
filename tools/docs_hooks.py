"""MkDocs hook: benchmark tables rendered from the bench's result files, and the event
and webhook body examples written by the code.

A page writes ``{{ bench: local_pages }}`` (or ``load``, ``filters``, ``cold_start``,
``many_teams``, ``many_teams.local``, ``patch_refresh``) where a table goes, or
``{{ bench: fanout#2 }}`` for the second markdown table a bench printed (``bench.fanout``,
``bench.keys`` and ``bench.hot_key`` record theirs); the figures come from
``bench/results/<name>.json`` as the last ``make bench`` or ``make load`` wrote them, never
typed by hand. The plots the benches draw (``bench/results/*.png``) are published with the
site under the same path.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

from local.openapi.webhooks import example_documents

RESULTS = Path(__file__).resolve().parents[1] / "bench" / "results"
EXAMPLES = re.compile(r"\{\{\s*examples:\s*(events|bodies)\s*\}\}")
"""Where the event and webhook body examples go: written by the code that writes the API's
events and the deliveries' bodies (`local.openapi.webhooks`), as the OpenAPI document has them."""
PLACEHOLDER = re.compile(r"\{\{\s*bench:\s*(\w+(?:\.\w+)?)(?:#(\d+))?\s*\}\}")


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """The bench's plots, as files of the site at ``bench/results/<name>.png``."""
    for plot in sorted(RESULTS.glob("*.png")):
        path = plot.relative_to(RESULTS.parents[1]).as_posix()
        files.append(
            File(path, str(RESULTS.parents[1]), config["site_dir"], config["use_directory_urls"])
        )
    return files


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Replace every placeholder by its table (an unknown name fails the build), and
    ``{{ examples: events }}`` / ``{{ examples: bodies }}`` by one tab per event type."""
    tables = PLACEHOLDER.sub(lambda m: _render(m.group(1), m.group(2)), markdown)
    return EXAMPLES.sub(lambda m: _tabs(example_documents(m.group(1))), tables)


def _tabs(documents: dict[str, Any]) -> str:
    """One pymdownx tab per document, its JSON in a code block that scrolls."""
    blocks = []
    for title, document in documents.items():
        code = json.dumps(document, indent=2, ensure_ascii=False).replace("\n", "\n    ")
        blocks.append(f'=== "{title}"\n\n    ```json\n    {code}\n    ```\n')
    return "\n".join(blocks)


def _render(name: str, number: str | None) -> str:
    """`name`'s table: the `number`-th markdown table the bench printed (recorded in its
    result file), or the one rendered here from its figures."""
    stem = name.split(".", 1)[0]  # many_teams.local: a second table of many_teams.json
    results = json.loads((RESULTS / f"{stem}.json").read_text())
    table = results["tables"][int(number) - 1] if number else RENDERERS[name](results)
    where = f"{results['machine']}, Python {results['python']}"
    return f"{table}\n\n*From `bench/results/{stem}.json` ({where}).*"


def _rows(header: list[str], rows: list[list[str]]) -> str:
    aligns = ["---"] + ["---:"] * (len(header) - 1)
    lines = [header, aligns, *rows]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in lines)


def _local_pages(results: dict[str, Any]) -> str:
    engines = list(results["results"])
    labels = {
        "startup_s": "start-up to the first answered page (s)",
        "engine_s": "of which: engine start (s)",
        "table_s": "of which: table creation (s)",
        "seeding_s": "of which: seeding (s)",
        "worker_s": "slowest worker cold start (s)",
    }
    names = next(iter(results["results"].values())).keys()
    rows = [
        [labels.get(n, f"{n} (ms)"), *(f"{results['results'][e][n]:,.1f}" for e in engines)]
        for n in names
    ]
    return _rows(["", *engines], rows)


def _load(results: dict[str, Any]) -> str:
    runs = results["runs"]
    rows = []
    for workers, run in runs.items():
        rows.append([f"{workers} worker(s)", f"{run['requests']:,}", f"{run['rps']:.0f}",
                     f"{run['p99_ms']:,.0f} ms",
                     "yes" if all(run["invariants"].values()) else "**no**"])  # fmt: skip
    header = ["run", "requests", "per second", "p99, every request", "invariants held"]
    summary = _rows(header, rows)
    per_route = [
        [route, *(_route_cell(run["routes"].get(route)) for run in runs.values())]
        for route in next(iter(runs.values()))["routes"]
    ]
    columns = ["route", *(f"{w} worker(s): requests / p50 / p99" for w in runs)]
    return f"{summary}\n\n{_rows(columns, per_route)}"


def _route_cell(route: dict[str, Any] | None) -> str:
    if route is None:
        return "-"
    return f"{route['requests']:,} / {route['p50_ms']:,.0f} ms / {route['p99_ms']:,.0f} ms"


def _filters(results: dict[str, Any]) -> str:
    rows = []
    for scenario, walks in results["results"].items():
        for name, walk in walks.items():
            rows.append([scenario, name, f"{walk['rcu_per_page']:.1f}",
                         f"{walk['rcu_per_item']:.3f}", f"{walk['requests_per_page']:.1f}",
                         str(walk["short_pages"])])  # fmt: skip
    header = ["scenario", "filter", "RCU a page", "RCU an item", "requests a page", "short pages"]
    return _rows(header, rows)


def _cold_start(results: dict[str, Any]) -> str:
    variants = list(results["ms"])
    modules = list(results["ms"][variants[0]])
    rows = [
        [m, *(f"{results['ms'][v][m]['median']:,.0f} ms" if m in results["ms"][v] else "-"
              for v in variants)]
        for m in modules
    ]  # fmt: skip
    return _rows(["import (median)", *variants], rows)


def _many_teams(results: dict[str, Any]) -> str:
    rows = [
        [str(r["teams"]), str(r["page"]), "200 units" if r["budget"] else "none",
         f"{r['rcu_per_page']:.1f} ({r['rcu_x_oracle']:.2f}x)", f"{r['requests_per_page']:.0f}",
         str(r["round_trips_p95"]), f"{r['ms_mean']:.0f} / {r['ms_max']:.0f}",
         str(r["short_pages"])]
        for r in results["results"]
    ]  # fmt: skip
    header = ["teams", "page", "budget", "RCU a page (x oracle)", "requests a page",
              "round trips p95", "ms mean / max", "pages cut short"]  # fmt: skip
    return _rows(header, rows)


def _many_teams_local(results: dict[str, Any]) -> str:
    rows = [
        [str(r["teams"]), f"{r['items']:,}", f"{r['ms_median']:.0f} / {r['ms_max']:.0f}",
         f"{r['rcu_per_page']:.1f}", f"{r['requests_per_page']:.1f}", str(r["short_pages"])]
        for r in results["dynamodb_local"]
    ]  # fmt: skip
    header = ["teams", "items stored", "ms a page, median / max", "RCU a page",
              "requests a page", "pages cut short"]  # fmt: skip
    return _rows(header, rows)


def _patch_refresh(results: dict[str, Any]) -> str:
    before, now = results["before"], results["now"]
    rows = [
        ["one `UpdateItem` a copy (before)", str(before["requests"]),
         f"{before['ms_median']:.0f}"],
        ["one transaction of conditional updates (now)", str(now["requests"]),
         f"{now['ms_median']:.0f}"],
        ["ratio", f"{before['requests'] / now['requests']:.1f}x fewer",
         f"{before['ms_median'] / now['ms_median']:.1f}x faster"],
    ]  # fmt: skip
    return _rows(["refresh", "requests", "ms (median)"], rows)


RENDERERS: dict[str, Callable[[dict[str, Any]], str]] = {
    "local_pages": _local_pages,
    "load": _load,
    "filters": _filters,
    "cold_start": _cold_start,
    "many_teams": _many_teams,
    "many_teams.local": _many_teams_local,
    "patch_refresh": _patch_refresh,
}
