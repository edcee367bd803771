"""Fan-out read cost: the ordered merge against three simpler exact strategies.

Reproduce: ``make bench`` (or ``PYTHONPATH=layers/shared/python:. python -m bench.fanout``).
Deterministic: seeded data in an in-process fake of DynamoDB's Query
(`dynashard.testing.fake_client`, same Limit / LastEvaluatedKey / 1 MB rules) and a seeded
per-request latency model (log-normal, median 6 ms, sigma 0.4) on a pool of 16 workers, as
the functions run it: a wave lasts until its last request ends. For every width
(streams), page size and data shape, the first pages of the newest-first list are read
with ``ordered`` and, from the same cursors, with the baselines:

- all-sort: query every stream to its end and sort in memory;
- one-wave: one wave with Limit = page size on every stream, then merge;
- sequential: the one-wave requests, one stream after another.

The floor of items read per page (`floor`) is what an exact merge must read to return it
and know that nothing else comes before its end: every item in it, copies included, and the
next item of each stream that holds more. (Until issue 31 the floor was max(page size,
streams holding items after the cursor), which left out copies and the item past the page
that every stream must show, so that exact pages missed it by construction.)
"""

from __future__ import annotations

import heapq
import math
import random
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import matplotlib
import matplotlib.pyplot as plt

from bench.support.fanout_peers import PerShardMerge
from bench.support.report import RESULTS_DIR, recording_tables, save
from dynashard import (
    CursorCodec,
    FanOutEngine,
    FanOutQuery,
    PartitionStream,
    SortKeyRange,
    Strategy,
)
from dynashard.query import PageStats, query_read_units
from dynashard.testing import FakeQueryClient
from local.workloads.teams import TEAMS_RANGE, teams_keys

WIDTHS = (1, 4, 16, 64, 256)
PAGE_SIZES = (10, 50, 100)
SHAPES = ("uniform", "zipf", "teams")
ZIPF_S = 1.2
TOTAL_ITEMS = 5000
PAGES = 100
TARGET_READ = {"uniform": 1.3, "zipf": 2.0, "teams": 2.0}
PEERS = ("round-robin", "per-shard")
REPORTED_PAGES = (1, 2, 10, 100)
LARGE_ITEM_BYTES = 2000


@dataclass
class Cost:
    """Cost of reading one page one way."""

    items_read: int
    round_trips: int
    read_units: float
    latency_ms: float
    requests: int = 0


WORKERS = 16
"""The functions' fan-out pool (`lambdas.runtime.MAX_WORKERS`): a wave of more requests
queues on it."""


class Latency:
    """Seeded per-request latencies; a wave is its requests run on `WORKERS` threads, each
    taking the next request when free, and lasts until the last one ends."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)

    def wave(self, requests: int) -> float:
        free_at = [0.0] * min(WORKERS, max(requests, 1))
        for _ in range(requests):
            start = heapq.heappop(free_at)
            heapq.heappush(free_at, start + self._rng.lognormvariate(math.log(6.0), 0.4))
        return max(free_at)


def build(
    width: int, shape: str, seed: int, title_bytes: int = 120
) -> tuple[FakeQueryClient, list[PartitionStream], list[list[str]]]:
    """Seeded data: TOTAL_ITEMS sort keys over `width` streams; the keys per stream that the
    list reads (the teams set reads its OPEN incidents only)."""
    rng = random.Random(seed)
    sort_range = TEAMS_RANGE if shape == "teams" else SortKeyRange()
    if shape == "teams":
        keys = teams_keys(width, TOTAL_ITEMS, rng)
    else:
        weights = [1.0 if shape == "uniform" else 1 / (r + 1) ** ZIPF_S for r in range(width)]
        homes = rng.choices(range(width), weights=weights, k=TOTAL_ITEMS)
        keys = [[] for _ in range(width)]
        for n, home in enumerate(homes):
            keys[home].append(f"{rng.randrange(10**12):012d}#{n:05d}")
    client = FakeQueryClient(title_bytes)
    streams = []
    for index, stream_keys in enumerate(keys):
        client.load(f"p#{index}", stream_keys)
        streams.append(PartitionStream("bench", "PK", f"p#{index}", "SK", sort_range))
    return client, streams, [[k for k in ks if sort_range.contains(k)] for ks in keys]


def _query_all(
    client: FakeQueryClient, stream: PartitionStream, sort_range: SortKeyRange, limit: int | None
) -> tuple[int, int, float]:
    """Read a stream (to its end when limit is None): items, requests, read units."""
    items = requests = 0
    units = 0.0
    start: dict[str, Any] | None = None
    while True:
        response = client.query(**stream.query_request(sort_range, True, limit, start))
        requests += 1
        items += len(response["Items"])
        units += query_read_units(response["Items"], consistent=False)
        start = response.get("LastEvaluatedKey")
        if limit is not None or start is None:
            return items, requests, units


def baselines(
    client: FakeQueryClient,
    streams: Sequence[PartitionStream],
    after: str | None,
    size: int,
    latency: Latency,
) -> dict[str, Cost]:
    """Costs of the three baselines for the page that starts after `after`."""
    ranges = [s.sort_range.after(after, True) if after else s.sort_range for s in streams]
    full = [_query_all(client, s, r, None) for s, r in zip(streams, ranges, strict=True)]
    wave = [_query_all(client, s, r, size) for s, r in zip(streams, ranges, strict=True)]
    waves_all = max(requests for _, requests, _ in full)
    return {
        "all-sort": Cost(
            sum(i for i, _, _ in full),
            waves_all,
            sum(u for _, _, u in full),
            sum(latency.wave(len(streams)) for _ in range(waves_all)),
            sum(r for _, r, _ in full),
        ),
        "one-wave": Cost(
            sum(i for i, _, _ in wave),
            1,
            sum(u for _, _, u in wave),
            latency.wave(len(streams)),
            len(streams),
        ),
        "sequential": Cost(
            sum(i for i, _, _ in wave),
            len(streams),
            sum(u for _, _, u in wave),
            sum(latency.wave(1) for _ in streams),
            len(streams),
        ),
    }


def floor(keys: list[list[str]], after: str | None, last: str) -> int:
    """Items an exact merge must read for the page that starts after `after` and ends at
    `last`, newest first: every item in it, copies included, and from each stream holding
    more, its next item: only that item shows the stream has nothing else before the page's
    end (a reader that knew the end could bound its reads by it, but the end is what the
    merge is finding)."""
    total = 0
    for stream in keys:
        total += sum(1 for k in stream if (after is None or k < after) and k >= last)
        total += any(k < last for k in stream)
    return total


def scenario(width: int, size: int, shape: str, title_bytes: int = 120) -> dict[str, Any]:
    """Page the newest-first list PAGES times; collect per-page costs of every strategy."""
    seed = width * 1000 + size + {"uniform": 0, "zipf": 7, "teams": 13}[shape]
    client, streams, keys = build(width, shape, seed, title_bytes)
    latency = Latency(seed)
    costs: dict[str, list[Cost]] = {
        name: [] for name in ("ordered", *PEERS, "all-sort", "one-wave", "sequential")
    }
    cursor_chars = dict.fromkeys(("ordered", *PEERS), 0)
    robin = FanOutQuery(streams, "bench", size, descending=True, strategy=Strategy.ROUND_ROBIN)
    per_shard = PerShardMerge(client, streams, size)
    floors: list[int] = []
    returned: list[int] = []
    contributors: list[int] = []
    oracle: list[float] = []
    cursor: str | None = None
    after: str | None = None
    with FanOutEngine(client, CursorCodec(b"b" * 32), max_workers=8) as engine:  # type: ignore[arg-type]
        for _ in range(PAGES):
            query = FanOutQuery(
                streams, "bench", size, descending=True, cursor=cursor, identity=identity
            )
            page = engine.page(query)
            stats = page.stats
            costs["ordered"].append(engine_cost(stats, latency))
            supplying = sorted({int(item["PK"]["S"].split("#")[1]) for item in page.items})
            assert stats.contributors == len(supplying), "PageStats.contributors, checked"
            contributors.append(len(supplying))
            oracle.append(oracle_units(client, streams, supplying, after, page.items))
            for name, cost in baselines(client, streams, after, size, latency).items():
                costs[name].append(cost)
            robin_page = engine.page(robin)
            costs["round-robin"].append(engine_cost(robin_page.stats, latency))
            robin = replace(robin, cursor=robin_page.next_cursor)
            costs["per-shard"].append(engine_cost(per_shard.page()[1], latency))
            cursor_chars["ordered"] = max(cursor_chars["ordered"], len(page.next_cursor or ""))
            cursor_chars["round-robin"] = max(
                cursor_chars["round-robin"], len(robin_page.next_cursor or "")
            )
            cursor_chars["per-shard"] = max(cursor_chars["per-shard"], per_shard.cursor_chars())
            end = page.items[-1]["SK"]["S"] if page.items else None
            floors.append(floor(keys, after, end) if end else 0)
            returned.append(len(page.items))
            if not page.next_cursor:
                break
            cursor, after = page.next_cursor, page.items[-1]["SK"]["S"]
    summary = summarise(
        width,
        size,
        shape,
        costs=costs,
        floors=floors,
        returned=returned,
        contributors=contributors,
        oracle=oracle,
    )
    summary["cursor_chars"] = cursor_chars
    return summary


def identity(item: dict[str, Any]) -> str:
    """Sort keys are unique per incident: copies in two teams' streams share theirs."""
    key: str = item["SK"]["S"]
    return key


def engine_cost(stats: PageStats, latency: Latency) -> Cost:
    """A page's cost from its statistics (the engine's, or a peer's)."""
    return Cost(
        stats.items_read,
        stats.round_trips,
        stats.read_units,
        sum(latency.wave(n) for n in stats.requests_per_wave),
        stats.requests,
    )


def oracle_units(
    client: FakeQueryClient,
    streams: Sequence[PartitionStream],
    supplying: Sequence[int],
    after: str | None,
    items: Sequence[dict[str, Any]],
) -> float:
    """RCU of one wave that knows the page's exact end: each contributing stream read once,
    bounded to the page's key span (at least one unit per request, as DynamoDB bills). The
    first page knows nothing of the streams (no cursor, no plan): an exact merge must read
    every stream once to learn that none holds an earlier item, so its floor counts them
    all (the oracle counted only those that supplied an item, 8 units for a first page of
    25 over 100 teams that no exact reader can read for less than 50)."""
    if not items:
        return 0.0
    if after is None:
        supplying = range(len(streams))
    last = items[-1]["SK"]["S"]
    units = 0.0
    for index in supplying:
        window = streams[index].sort_range.up_to(last, True)
        if after:
            window = window.after(after, True)
        units += _query_all(client, streams[index], window, None)[2]
    return units


def summarise(
    width: int,
    size: int,
    shape: str,
    *,
    costs: dict[str, list[Cost]],
    floors: list[int],
    returned: list[int],
    contributors: list[int],
    oracle: list[float],
) -> dict[str, Any]:
    def per(name: str, pick: Callable[[Cost], float]) -> float:
        return statistics.mean(pick(c) for c in costs[name])

    total_floor = sum(floors)
    trips = sorted(c.round_trips for c in costs["ordered"])
    ordered = costs["ordered"]
    return {
        "by_page": {
            number: {
                "read_over_floor": ordered[number - 1].items_read / floors[number - 1],
                "requests": ordered[number - 1].requests,
                "contributors": contributors[number - 1],
                "round_trips": ordered[number - 1].round_trips,
                "rcu": ordered[number - 1].read_units,
                "rcu_over_oracle": ordered[number - 1].read_units / oracle[number - 1],
                "latency_ms": ordered[number - 1].latency_ms,
            }
            for number in REPORTED_PAGES
            if number <= len(floors) and floors[number - 1] and oracle[number - 1]
        },
        "width": width,
        "page_size": size,
        "shape": shape,
        "pages": len(floors),
        "contributors_per_page": statistics.mean(contributors),
        "ordered_requests_per_page": per("ordered", lambda c: c.requests),
        "ordered_rcu_over_oracle": sum(c.read_units for c in costs["ordered"]) / sum(oracle),
        "ordered_p95_round_trips": trips[min(len(trips) - 1, int(len(trips) * 0.95))],
        **{
            name: {
                "read_over_floor": sum(c.items_read for c in costs[name]) / total_floor,
                "read_per_returned": sum(c.items_read for c in costs[name]) / sum(returned),
                "median_round_trips": statistics.median(c.round_trips for c in costs[name]),
                "max_round_trips": max(c.round_trips for c in costs[name]),
                "rcu_per_page": per(name, lambda c: c.read_units),
                "latency_ms_per_page": per(name, lambda c: c.latency_ms),
            }
            for name in costs
        },
    }


def target_misses(result: dict[str, Any]) -> list[str]:
    """The issue's targets a scenario misses, each with its figure."""
    o, shape = result["ordered"], result["shape"]
    requests_cap = 2 * result["contributors_per_page"] + 2
    checks = [
        (o["read_over_floor"] <= TARGET_READ[shape], f"read/floor {o['read_over_floor']:.2f}"
         f" > {TARGET_READ[shape]}"),
        (result["ordered_requests_per_page"] <= requests_cap,
         f"requests {result['ordered_requests_per_page']:.1f} > 2 x contributors + 2"
         f" = {requests_cap:.1f}"),
        (o["median_round_trips"] <= 2, f"median trips {o['median_round_trips']:g} > 2"),
        (result["ordered_p95_round_trips"] <= 3,
         f"p95 trips {result['ordered_p95_round_trips']} > 3"),
        (result["ordered_rcu_over_oracle"] <= 2,
         f"RCU {result['ordered_rcu_over_oracle']:.1f}x the one-wave oracle > 2x"),
    ]  # fmt: skip
    return [text for ok, text in checks if not ok]


def print_by_page(results: list[dict[str, Any]]) -> None:
    """`ordered` on pages 1, 2, 10 and 100: RCU (x oracle) / round trips / requests
    (contributors) / items read over the floor."""
    print(
        "\nordered by page: RCU (x oracle) / round trips / requests (contributors) / read/floor\n"
    )
    print(
        "| shape | streams | page size | " + " | ".join(f"page {n}" for n in REPORTED_PAGES) + " |"
    )
    print("|---|---:|---:|" + "---|" * len(REPORTED_PAGES))
    for r in results:
        cells = []
        for number in REPORTED_PAGES:
            p = r["by_page"].get(number)
            cells.append(
                f"{p['rcu']:.1f} ({p['rcu_over_oracle']:.1f}x) / {p['round_trips']} / "
                f"{p['requests']} ({p['contributors']}) / {p['read_over_floor']:.2f}"
                if p
                else "-"
            )
        print(f"| {r['shape']} | {r['width']} | {r['page_size']} | " + " | ".join(cells) + " |")


def print_peers(results: list[dict[str, Any]]) -> None:
    """The strategies side by side: RCU per page, median round trips, longest cursor."""
    names = ("ordered", *PEERS, "one-wave", "all-sort")
    print("\npeers, pages of 10: RCU per page / median round trips / longest cursor (chars)\n")
    print("| shape | streams | " + " | ".join(names) + " |")
    print("|---|---:|" + "---:|" * len(names))
    for r in (r for r in results if r["page_size"] == 10):
        cells = []
        for name in names:
            o, chars = r[name], r["cursor_chars"].get(name)
            cell = f"{o['rcu_per_page']:.1f} / {o['median_round_trips']:g}"
            cells.append(cell + (f" / {chars}" if chars is not None else ""))
        print(f"| {r['shape']} | {r['width']} | " + " | ".join(cells) + " |")


def plot(results: list[dict[str, Any]], path: Path) -> None:
    """RCU per page and round trips against streams, pages of 10, one column per shape."""
    matplotlib.use("Agg")
    figure, axes = plt.subplots(2, len(SHAPES), figsize=(5 * len(SHAPES), 7), squeeze=False)
    for column, shape in enumerate(SHAPES):
        rows = [r for r in results if r["shape"] == shape and r["page_size"] == 10]
        widths = [r["width"] for r in rows]
        for name in ("ordered", *PEERS, "one-wave", "all-sort"):
            axes[0][column].plot(widths, [r[name]["rcu_per_page"] for r in rows], "o-", label=name)
            axes[1][column].plot(
                widths, [r[name]["median_round_trips"] for r in rows], "o-", label=name
            )
        for row, label in enumerate(("RCU per page", "median round trips")):
            axes[row][column].set_xscale("log", base=2)
            axes[row][column].set_yscale("log")
            axes[row][column].set_xlabel("streams")
            axes[row][column].set_ylabel(label)
            axes[row][column].set_title(f"{shape}, pages of 10")
    axes[0][0].legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)


def print_shape(shape: str, results: list[dict[str, Any]]) -> None:
    """One row a scenario of `shape`: each target's goal beside what `ordered` measured."""
    print(f"\n{shape} data ({TOTAL_ITEMS} items, first {PAGES} pages, newest first)\n")
    print(
        f"| streams | page | read/floor (goal {TARGET_READ[shape]}) | requests a page "
        "(goal 2 x contributors + 2) | trips median/p95/max (goal 2/3) | RCU a page "
        "(x oracle, goal 2x) | ms a page | one-wave RCU | one-wave ms | sequential ms "
        "| targets |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in (r for r in results if r["shape"] == shape):
        o = r["ordered"]
        missed = len(target_misses(r))
        print(
            f"| {r['width']} | {r['page_size']} | {o['read_over_floor']:.2f} | "
            f"{r['ordered_requests_per_page']:.1f} ({2 * r['contributors_per_page'] + 2:.1f}) | "
            f"{o['median_round_trips']:g}/{r['ordered_p95_round_trips']}/"
            f"{o['max_round_trips']} | "
            f"{o['rcu_per_page']:.1f} ({r['ordered_rcu_over_oracle']:.1f}x) | "
            f"{o['latency_ms_per_page']:.1f} | {r['one-wave']['rcu_per_page']:.1f} | "
            f"{r['one-wave']['latency_ms_per_page']:.1f} | "
            f"{r['sequential']['latency_ms_per_page']:.1f} | "
            f"{'met' if not missed else f'{missed} missed'} |"
        )


def print_large_items(results: list[dict[str, Any]]) -> None:
    """Where a request reads more than the 4 KB minimum, reading a plan's items twice shows."""
    print(f"\nteams data, {LARGE_ITEM_BYTES:,}-byte items: RCU a page (x oracle)\n")
    print("| streams | page | ordered | one-wave |")
    print("|---:|---:|---:|---:|")
    for r in results:
        print(
            f"| {r['width']} | {r['page_size']} | {r['ordered']['rcu_per_page']:.1f} "
            f"({r['ordered_rcu_over_oracle']:.1f}x) | {r['one-wave']['rcu_per_page']:.1f} |"
        )


def main() -> None:
    """Run every scenario, print Markdown tables and the targets missed, save JSON."""
    results = [scenario(w, s, shape) for shape in SHAPES for w in WIDTHS for s in PAGE_SIZES]
    for shape in SHAPES:
        print_shape(shape, results)
    missed = [(r, target_misses(r)) for r in results if target_misses(r)]
    print(f"\n{len(results) - len(missed)} of {len(results)} scenarios meet every target")
    for r, misses in missed:
        print(f"MISSED {r['shape']} width={r['width']} page={r['page_size']}: {'; '.join(misses)}")
    print_by_page(results)
    print_peers(results)
    large = [scenario(w, s, "teams", LARGE_ITEM_BYTES) for w in (16, 64, 256) for s in (10, 100)]
    print_large_items(large)
    plot(results, RESULTS_DIR / "fanout.png")
    path = save("fanout", {"scenarios": results, "large_items": large})
    print(f"saved {path}; reproduce with: make bench")


if __name__ == "__main__":
    with recording_tables():
        main()
