"""Charts of the bench results, drawn by the docs build from ``bench/results/`` (never by
hand), one question each, sized for the page's content column at 1280 px: one panel, fonts
as large as the text around them, axis labels with their units, and the legend under the
plot, where it cannot cover a line or a bar.

A chart is an SVG at ``bench/charts/<name>.svg`` of the built site; the page writes
``{{ chart: <name> }}`` where it goes (see `tools.docs_hooks`).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display at build time

from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter
from matplotlib.typing import RcKeyType

from incidents.incident.queries import MAX_TEAMS
from tools.bench_results import Results, load

FOLDER = "bench/charts"
STYLE: dict[RcKeyType, Any] = {
    "font.size": 12,
    "axes.labelsize": 12,
    "xtick.labelsize": 11,
    "ytick.labelsize": 11,
    "legend.fontsize": 11,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "svg.fonttype": "none",  # text stays text: the reader's font, searchable
    "svg.hashsalt": "bench-charts",  # the same results draw the same file
}
SIZE = (7.2, 4.2)
"""Inches at 96 px an inch: the content column's width at 1280 px, so text reads at its
size."""


@dataclass(frozen=True)
class Chart:
    """One question's chart: the result files it reads and how it draws them."""

    title: str
    """What it shows, as the image's alternative text."""
    sources: tuple[str, ...]
    draw: Callable[[Axes, list[Results]], None]


def svg(chart: Chart) -> bytes:
    """`chart` drawn from its result files (a missing one fails the build)."""
    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=SIZE, layout="constrained")
        axes = figure.add_subplot()
        chart.draw(axes, [load(stem) for stem in chart.sources])
        handles, labels = axes.get_legend_handles_labels()
        if handles:
            figure.legend(handles, labels, loc="outside lower center", ncols=2, frameon=False)
        out = io.BytesIO()
        figure.savefig(out, format="svg", metadata={"Date": None})
    return out.getvalue()


def _log_x(axes: Axes, label: str, base: int = 10) -> None:
    """A log x axis labelled `label`, its ticks plain numbers."""
    axes.set_xscale("log", base=base)
    _plain(axes.xaxis)
    axes.set_xlabel(f"{label} (log scale)")


def _log_y(axes: Axes, label: str) -> None:
    """A log y axis labelled `label`, its ticks plain numbers."""
    axes.set_yscale("log")
    _plain(axes.yaxis)
    axes.set_ylabel(f"{label} (log scale)")


def _plain(axis: Axis) -> None:
    """Ticks that read 1, 10, 100 rather than powers of ten, and no minor labels."""
    axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    axis.set_minor_formatter(NullFormatter())


def _bars(axes: Axes, groups: list[str], series: dict[str, list[float]]) -> None:
    """Horizontal bars: one row a group, one bar a series in each row, first on top."""
    height = 0.8 / len(series)
    for index, (label, values) in enumerate(series.items()):
        offsets = [row + index * height for row in range(len(groups))]
        axes.barh(offsets, values, height=height, label=label)
    axes.set_yticks([row + height * (len(series) - 1) / 2 for row in range(len(groups))])
    axes.set_yticklabels(groups)
    axes.invert_yaxis()
    axes.grid(axis="y", visible=False)


def _cost_against_shards(axes: Axes, results: list[Results]) -> None:
    rows = [r for r in results[0]["scenarios"] if r["shape"] == "teams" and r["page_size"] == 50]
    streams = [r["width"] for r in rows]
    ordered = [r["ordered"]["rcu_per_page"] for r in rows]
    oracle = [cost / r["ordered_rcu_over_oracle"] for cost, r in zip(ordered, rows, strict=True)]
    axes.plot(streams, ordered, "o-", linewidth=2.5, label="ordered merge (shipped)")
    axes.plot(streams, oracle, "s--", label="oracle: each stream read once")
    axes.plot(streams, [r["one-wave"]["rcu_per_page"] for r in rows], "^:",
              label="one wave of a full page a stream")  # fmt: skip
    _log_x(axes, "streams a list fans out over (shards x teams)", base=2)
    _log_y(axes, "read units a page of 50")


def _cost_against_teams(axes: Axes, results: list[Results]) -> None:
    for page in (10, 25):
        rows = [r for r in results[0]["results"] if r["page"] == page and r["budget"]]
        teams = [r["teams"] for r in rows]
        axes.plot(teams, [r["rcu_per_page"] for r in rows], "o-", linewidth=2.5,
                  label=f"pages of {page}, {rows[0]['budget']:.0f}-unit budget")  # fmt: skip
        axes.plot(teams, [r["rcu_per_page"] / r["rcu_x_oracle"] for r in rows], "s--",
                  label=f"oracle, pages of {page}")  # fmt: skip
    axes.axvline(MAX_TEAMS, color="grey", linewidth=1)
    axes.annotate("the API's cap", (MAX_TEAMS, 0.5), xytext=(4, 0), textcoords="offset points")
    _log_x(axes, "teams of the member")
    _log_y(axes, "read units a page")


def _latency_under_load(axes: Axes, results: list[Results]) -> None:
    runs = [results[0]["runs"][workers] for workers in sorted(results[0]["runs"], key=int)]
    routes = sorted(runs[0]["routes"])
    _bars(axes, routes, {
        f"{quantile}, {run['workers']} worker{'s' if run['workers'] > 1 else ''}": [
            run["routes"][route][f"{quantile}_ms"] for route in routes
        ]
        for run in runs
        for quantile in ("p50", "p99")
    })  # fmt: skip
    axes.set_xlabel(f"latency (ms), {results[0]['clients']} clients at once")


def _alert_storm(axes: Axes, results: list[Results]) -> None:
    quiet = results[0]["isolation"]
    _bars(axes, ["p50", "slowest"], {
        "the other account alone": [quiet["quiet_alone_p50_ms"], quiet["quiet_alone_max_ms"]],
        "beside the storm": [quiet["quiet_beside_p50_ms"], quiet["quiet_beside_max_ms"]],
    })  # fmt: skip
    axes.set_xlabel("latency of the other account's alerts (ms)")


def _hot_key(axes: Axes, results: list[Results]) -> None:
    hot = results[0]
    styles = ["-", "--", "-", "-."]
    for (name, scenario), style in zip(hot["scenarios"].items(), styles, strict=False):
        admitted = scenario["admitted_wcu_per_second"]
        axes.plot(range(len(admitted)), admitted, style, linewidth=2, label=name)
    axes.axhline(hot["offered_wcu"], color="grey", linestyle=":", linewidth=1.5,
                 label="offered")  # fmt: skip
    axes.set_xlabel("seconds since the load started")
    axes.set_ylabel("write units admitted a second")
    axes.set_ylim(bottom=0)


FIRST_PAGE = ("requests", "read_units", "ms")
"""What `bench.shard_shrink` records of the open list's first page."""


def _shard_moves(axes: Axes, results: list[Results]) -> None:
    moved = results[0]
    peak, back = moved["storm"][-1], moved["storm"][0]
    _bars(axes, ["requests", "read units", "latency (ms)"], {
        f"at {peak} shards, grown by the storm": [moved["at_peak"][k] for k in FIRST_PAGE],
        f"at {back} shard, halved back": [moved["after"][k] for k in FIRST_PAGE],
    })  # fmt: skip
    _log_x(axes, "the open list's first page")


def _filtered_lists(axes: Axes, results: list[Results]) -> None:
    walks = results[0]["sparse_index_walks"]
    opened = [w["open"] for w in walks]
    for name, label, style in (
        ("filter", "by the filter", "o-"),
        ("sparse index", "by a sparse index", "s--"),
    ):
        walked = [w[name]["rcu_per_page"] * w[name]["pages"] for w in walks]
        axes.plot(opened, walked, style, linewidth=2.5, label=label)
    _log_x(axes, "open incidents in the caller's teams")
    axes.set_ylabel("read units a whole walk")
    axes.set_ylim(bottom=0)


def _write_cost(axes: Axes, results: list[Results]) -> None:
    now, before = results[0]["commands"], results[1]["commands"]
    commands = list(now)
    _bars(axes, commands, {
        "before the timeline": [before[c]["wcu"] if c in before else 0 for c in commands],
        "with its timeline event": [now[c]["wcu"] for c in commands],
    })  # fmt: skip
    axes.set_xlabel("write units a command")


def _events_out(axes: Axes, results: list[Results]) -> None:
    labels = {
        "alone": "alone",
        "fast": "beside an endpoint answering at once",
        "slow": "beside a slow endpoint",
        "turning": "beside one turning slow",
        "trickle": "beside one trickling bytes",
    }
    runs = results[0]["isolation"]
    _bars(axes, [labels[name] for name in runs], {
        "p50": [run["p50_ms"] / 1000 for run in runs.values()],
        "p99": [run["p99_ms"] / 1000 for run in runs.values()],
    })  # fmt: skip
    axes.set_xlabel("change-to-delivery latency (s)")


def _small_tenant(axes: Axes, results: list[Results]) -> None:
    before, after = results[0]["before"], results[0]["after"]
    pages = list(before)
    _bars(axes, pages, {
        "stage-wide shard counts (before)": [before[p]["calls"]["Query"] for p in pages],
        "its own counts (now)": [after[p]["calls"]["Query"] for p in pages],
    })  # fmt: skip
    axes.set_xlabel("Queries a first page of a small account")


def _timers(axes: Axes, results: list[Results]) -> None:
    sweeps = results[0]["sweeps"]
    _bars(axes, ["lateness p50", "lateness p99", "time to fire 1,000"], {
        f"{s['workers']} at once" if s["workers"] > 1 else "one at a time":
            [s["late_p50_s"], s["late_p99_s"], s["seconds_per_1000"]]
        for s in sweeps
    })  # fmt: skip
    axes.set_xlabel("seconds")


def _cold_start(axes: Axes, results: list[Results]) -> None:
    cold = results[0]
    variants = list(cold["ms"])
    modules = list(cold["ms"][variants[0]])
    _bars(
        axes,
        modules,
        {variant: [cold["ms"][variant][m]["median"] for m in modules] for variant in variants},
    )
    axes.axvline(cold["target_ms"], color="grey", linestyle=":", linewidth=1.5,
                 label="target")  # fmt: skip
    axes.set_xlabel(f"import time (ms, median of {cold['runs']})")


CHARTS: dict[str, Chart] = {
    "cost_against_shards": Chart(
        "Read units a page against the streams a list fans out over", ("fanout",),
        _cost_against_shards),
    "cost_against_teams": Chart(
        "Read units a page of 'my teams' against the member's teams", ("many_teams",),
        _cost_against_teams),
    "latency_under_load": Chart(
        "Latency of each route under load, p50 and p99, each run of the bench",
        ("load",), _latency_under_load),
    "alert_storm": Chart(
        "Another account's alert latency alone and beside a storm", ("alert_storm",),
        _alert_storm),
    "hot_key": Chart(
        "Write units admitted a second on one hot key: unsharded, fixed and dynamic shards",
        ("hot_key",), _hot_key),
    "shard_moves": Chart(
        "The open list's first page at its grown shard count and halved back",
        ("shard_shrink",),
        _shard_moves),
    "filtered_lists": Chart(
        "Read units of a filtered walk and of a sparse index against open incidents",
        ("filters",), _filtered_lists),
    "write_cost": Chart(
        "Write units a command before the timeline and with it",
        ("write_cost", "write_cost_baseline"), _write_cost),
    "events_out": Chart(
        "A healthy webhook's latency beside another account's misbehaving endpoint",
        ("endpoint_isolation",), _events_out),
    "small_tenant": Chart(
        "Queries a first page of a small account, stage-wide counts against its own",
        ("small_tenant",), _small_tenant),
    "timers": Chart(
        "Timer lateness and sweep time, one at a time and several at once", ("timers",),
        _timers),
    "cold_start": Chart(
        "Import time of each handler, by how it is packaged", ("cold_start",), _cold_start),
}  # fmt: skip
