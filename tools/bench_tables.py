"""Markdown tables of the bench results, narrow enough for the page at 1280 px.

A table is one the bench printed (recorded in its result file, the n-th: ``fanout#2``), or
one rendered here from its figures (`RENDERERS`). Either may be cut to some of its columns;
a table still wider than `MAX_COLUMNS` is split into several, each repeating the columns
that name its rows, so no figure is dropped and none needs a sideways scroll.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from mkdocs.exceptions import PluginError

from tools.bench_results import Results, load

MAX_COLUMNS = 6
Rows = list[list[str]]
"""A table's lines as cells: the header, the alignment line, then the rows."""


def table(name: str, number: int | None, columns: list[int] | None, keys: int) -> str:
    """`name`'s table (the `number`-th the bench printed, else rendered from its figures),
    cut to `columns` (numbered from 1) and split to fit, its first `keys` columns naming
    the rows in every part."""
    results = load(name.split(".", 1)[0])  # many_teams.local: a table of many_teams.json
    if number is None and name not in RENDERERS:
        raise PluginError(f"no table named {name!r}: tools/bench_tables.RENDERERS has none")
    text = results["tables"][number - 1] if number else RENDERERS[name](results)
    parts = [_fitted(_parse(part), columns, keys) for part in text.split("\n\n")]
    return "\n\n".join(_format(rows) for part in parts for rows in part)


def _fitted(rows: Rows, columns: list[int] | None, keys: int) -> list[Rows]:
    """`rows` cut to `columns`, then as tables of at most `MAX_COLUMNS` columns each."""
    if columns:
        rows = [[row[c - 1] for c in columns] for row in rows]
    if len(rows[0]) <= MAX_COLUMNS:
        return [rows]
    values = list(range(keys, len(rows[0])))
    size = math.ceil(len(values) / math.ceil(len(values) / (MAX_COLUMNS - keys)))
    chunks = [values[start : start + size] for start in range(0, len(values), size)]
    return [[[row[c] for c in [*range(keys), *chunk]] for row in rows] for chunk in chunks]


def _parse(text: str) -> Rows:
    """A markdown table's cells, ``\\|`` inside a cell kept."""
    return [
        [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip()[1:-1])]
        for line in text.strip().splitlines()
    ]


def _format(rows: Rows) -> str:
    return "\n".join("| " + " | ".join(row) + " |" for row in rows)


def _rows(header: list[str], rows: list[list[str]]) -> str:
    """A table of `rows` under `header`: its first column text, the others figures."""
    return _format([header, ["---"] + ["---:"] * (len(header) - 1), *rows])


def _local_pages(results: Results) -> str:
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


def _load(results: Results) -> str:
    return f"{_load_runs(results)}\n\n{_load_routes(results)}"


def _load_runs(results: Results) -> str:
    rows = []
    for workers, run in results["runs"].items():
        rows.append([f"{workers} worker(s)", f"{run['requests']:,}", f"{run['rps']:.0f}",
                     f"{run['p99_ms']:,.0f} ms",
                     "yes" if all(run["invariants"].values()) else "**no**"])  # fmt: skip
    header = ["run", "requests", "per second", "p99, every request", "invariants held"]
    return _rows(header, rows)


def _load_routes(results: Results) -> str:
    runs = results["runs"]
    per_route = [
        [route, *(_route_cell(run["routes"].get(route)) for run in runs.values())]
        for route in next(iter(runs.values()))["routes"]
    ]
    columns = ["route", *(f"{w} worker(s): requests / p50 / p99" for w in runs)]
    return _rows(columns, per_route)


def _route_cell(route: dict[str, Any] | None) -> str:
    if route is None:
        return "-"
    return f"{route['requests']:,} / {route['p50_ms']:,.0f} ms / {route['p99_ms']:,.0f} ms"


def _filters(results: Results) -> str:
    rows = []
    for scenario, walks in results["results"].items():
        for name, walk in walks.items():
            rows.append([scenario, name, f"{walk['rcu_per_page']:.1f}",
                         f"{walk['rcu_per_item']:.3f}", f"{walk['requests_per_page']:.1f}",
                         str(walk["short_pages"])])  # fmt: skip
    header = ["scenario", "filter", "RCU a page", "RCU an item", "requests a page", "short pages"]
    return _rows(header, rows)


def _cold_start(results: Results) -> str:
    variants = list(results["ms"])
    modules = list(results["ms"][variants[0]])
    rows = [
        [m, *(f"{results['ms'][v][m]['median']:,.0f} ms" if m in results["ms"][v] else "-"
              for v in variants)]
        for m in modules
    ]  # fmt: skip
    return _rows(["import (median)", *variants], rows)


def _many_teams(results: Results) -> str:
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


def _many_teams_local(results: Results) -> str:
    rows = [
        [str(r["teams"]), f"{r['items']:,}", f"{r['ms_median']:.0f} / {r['ms_max']:.0f}",
         f"{r['rcu_per_page']:.1f}", f"{r['requests_per_page']:.1f}", str(r["short_pages"])]
        for r in results["dynamodb_local"]
    ]  # fmt: skip
    header = ["teams", "items stored", "ms a page, median / max", "RCU a page",
              "requests a page", "pages cut short"]  # fmt: skip
    return _rows(header, rows)


def _filtered_walk(results: Results) -> str:
    rows = [
        [f"{r['streams']} streams, {r['incidents']} incidents, {r['copies']} copies an incident, "
         f"{r['matches']} matching", str(r["limit"]),
         f"{r['plain_pages']} / {r['plain_rcu']:,.1f}",
         f"{r['filtered_pages']} / {r['filtered_rcu']:,.1f} ({r['ratio']:.2f}x)",
         f"{r['heaviest_page']:,.1f}", "met" if r["met"] else "**missed**"]
        for r in results["rows"]
    ]  # fmt: skip
    header = ["data", "page", "unfiltered: pages / RCU", "filtered: pages / RCU (x unfiltered)",
              "heaviest page RCU", "goals"]  # fmt: skip
    return _rows(header, rows)


def _patch_refresh(results: Results) -> str:
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


RENDERERS: dict[str, Callable[[Results], str]] = {
    "local_pages": _local_pages,
    "load": _load,
    "load.runs": _load_runs,
    "filters": _filters,
    "filtered_walk": _filtered_walk,
    "cold_start": _cold_start,
    "many_teams": _many_teams,
    "many_teams.local": _many_teams_local,
    "patch_refresh": _patch_refresh,
}
