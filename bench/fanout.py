"""Fan-out read cost: the ordered merge against three simpler exact strategies.

Reproduce: ``make bench`` (or ``PYTHONPATH=layers/shared/python:. python -m bench.fanout``).
Deterministic: seeded data in an in-process fake of DynamoDB's Query (`bench.fake_dynamodb`,
same Limit / LastEvaluatedKey / 1 MB rules) and a seeded per-request latency model
(log-normal, median 6 ms, sigma 0.4) on a pool of 16 workers, as the functions run it: a
wave lasts until its last request ends. For every width
(streams), page size and data shape, the first pages of the newest-first list are read
with ``ordered`` and, from the same cursors, with the baselines:

- all-sort: query every stream to its end and sort in memory;
- one-wave: one wave with Limit = page size on every stream, then merge;
- sequential: the one-wave requests, one stream after another.

The floor of items read per page is max(page size, streams still holding items after the
cursor): an exact merge must ask each of those at least once.
"""

from __future__ import annotations

import heapq
import math
import random
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bench.fake_dynamodb import FakeQueryClient
from bench.report import save
from dynashard import (
    CursorCodec,
    FanOutEngine,
    FanOutQuery,
    SortKeyRange,
    Stream,
    query_read_units,
)

WIDTHS = (1, 4, 16, 64, 256)
PAGE_SIZES = (10, 50, 100)
SHAPES = ("uniform", "zipf")
ZIPF_S = 1.2
TOTAL_ITEMS = 5000
PAGES = 100
TARGET_READ = {"uniform": 1.3, "zipf": 2.0}
TARGET_TRIPS = {"uniform": 2, "zipf": 4}


@dataclass
class Cost:
    """Cost of reading one page one way."""

    items_read: int
    round_trips: int
    read_units: float
    latency_ms: float


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
    width: int, shape: str, seed: int
) -> tuple[FakeQueryClient, list[Stream], list[list[str]]]:
    """Seeded data: TOTAL_ITEMS unique sort keys spread over `width` streams."""
    rng = random.Random(seed)
    weights = [1.0 if shape == "uniform" else 1 / (rank + 1) ** ZIPF_S for rank in range(width)]
    homes = rng.choices(range(width), weights=weights, k=TOTAL_ITEMS)
    keys: list[list[str]] = [[] for _ in range(width)]
    for n, home in enumerate(homes):
        keys[home].append(f"{rng.randrange(10**12):012d}#{n:05d}")
    client = FakeQueryClient()
    streams = []
    for index, stream_keys in enumerate(keys):
        client.load(f"p#{index}", stream_keys)
        streams.append(Stream("bench", "PK", f"p#{index}", "SK"))
    return client, streams, keys


def _query_all(
    client: FakeQueryClient, stream: Stream, sort_range: SortKeyRange, limit: int | None
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
    streams: Sequence[Stream],
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
        ),
        "one-wave": Cost(
            sum(i for i, _, _ in wave), 1, sum(u for _, _, u in wave), latency.wave(len(streams))
        ),
        "sequential": Cost(
            sum(i for i, _, _ in wave),
            len(streams),
            sum(u for _, _, u in wave),
            sum(latency.wave(1) for _ in streams),
        ),
    }


def floor(keys: list[list[str]], after: str | None, size: int) -> int:
    """max(page size, streams with an item after the cursor), newest first."""
    open_streams = sum(1 for stream in keys if stream and (after is None or min(stream) < after))
    return max(size, open_streams) if open_streams else 0


def scenario(width: int, size: int, shape: str) -> dict[str, Any]:
    """Page the newest-first list PAGES times; collect per-page costs of every strategy."""
    seed = width * 1000 + size + (7 if shape == "zipf" else 0)
    client, streams, keys = build(width, shape, seed)
    latency = Latency(seed)
    costs: dict[str, list[Cost]] = {"ordered": [], "all-sort": [], "one-wave": [], "sequential": []}
    floors: list[int] = []
    returned: list[int] = []
    cursor: str | None = None
    after: str | None = None
    with FanOutEngine(client, CursorCodec(b"b" * 32), max_workers=8) as engine:  # type: ignore[arg-type]
        for _ in range(PAGES):
            page = engine.page(FanOutQuery(streams, "bench", size, descending=True, cursor=cursor))
            stats = page.stats
            costs["ordered"].append(
                Cost(
                    stats.items_read,
                    stats.round_trips,
                    stats.read_units,
                    sum(latency.wave(n) for n in stats.requests_per_wave),
                )
            )
            for name, cost in baselines(client, streams, after, size, latency).items():
                costs[name].append(cost)
            floors.append(floor(keys, after, size))
            returned.append(len(page.items))
            if not page.next_cursor:
                break
            cursor, after = page.next_cursor, page.items[-1]["SK"]["S"]
    return summarise(width, size, shape, costs=costs, floors=floors, returned=returned)


def summarise(
    width: int,
    size: int,
    shape: str,
    *,
    costs: dict[str, list[Cost]],
    floors: list[int],
    returned: list[int],
) -> dict[str, Any]:
    def per(name: str, pick: Callable[[Cost], float]) -> float:
        return statistics.mean(pick(c) for c in costs[name])

    total_floor = sum(floors)
    return {
        "width": width,
        "page_size": size,
        "shape": shape,
        "pages": len(floors),
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


def main() -> None:
    """Run every scenario, print Markdown tables and the targets missed, save JSON."""
    results = [scenario(w, s, shape) for shape in SHAPES for w in WIDTHS for s in PAGE_SIZES]
    missed = []
    for shape in SHAPES:
        print(f"\n{shape} data ({TOTAL_ITEMS} items, first {PAGES} pages, newest first)\n")
        print(
            "| streams | page | ordered read/floor | ordered read/returned | "
            "ordered trips (median/max) | ordered RCU | ordered ms | all-sort read/floor | "
            "one-wave read/floor | one-wave ms | sequential ms |"
        )
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in (r for r in results if r["shape"] == shape):
            o = r["ordered"]
            print(
                f"| {r['width']} | {r['page_size']} | {o['read_over_floor']:.2f} | "
                f"{o['read_per_returned']:.2f} | "
                f"{o['median_round_trips']:g}/{o['max_round_trips']} | {o['rcu_per_page']:.1f} | "
                f"{o['latency_ms_per_page']:.1f} | {r['all-sort']['read_over_floor']:.1f} | "
                f"{r['one-wave']['read_over_floor']:.2f} | "
                f"{r['one-wave']['latency_ms_per_page']:.1f} | "
                f"{r['sequential']['latency_ms_per_page']:.1f} |"
            )
            if (
                o["read_over_floor"] > TARGET_READ[shape]
                or o["median_round_trips"] > TARGET_TRIPS[shape]
            ):
                missed.append(r)
    print()
    for r in missed:
        o = r["ordered"]
        print(
            f"MISSED {r['shape']} width={r['width']} page={r['page_size']}: read/floor "
            f"{o['read_over_floor']:.2f} (target {TARGET_READ[r['shape']]}), median trips "
            f"{o['median_round_trips']:g} (target {TARGET_TRIPS[r['shape']]})"
        )
    if not missed:
        print("every target met")
    path = save("fanout", {"scenarios": results})
    print(f"saved {path}; reproduce with: make bench")


if __name__ == "__main__":
    main()
