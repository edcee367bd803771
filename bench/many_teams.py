"""Many teams: "all my teams" for members of 1 to 400 teams, incidents on 1 to 40 of them.

Reproduce: ``make bench`` (or ``PYTHONPATH=layers/shared/python:. python -m bench.many_teams``).
Deterministic: seeded data in the in-process fake of DynamoDB's Query
(`dynashard.testing.fake_client`, which costs what DynamoDB Local costs page by page:
`tests/integration/test_bench_fake_agrees`) and the seeded latency model of `bench.fanout` on
the functions' 16-worker pool.

A second pass walks the same shape on AWS DynamoDB Local (`LOCAL_INCIDENTS` incidents, pages
of 25, 10 to 100 teams) with the handlers' budget (3 s, 200 read units), measuring wall-clock
milliseconds a page, the read units DynamoDB Local reports, and the pages cut short.

Each team is one stream (one shard). An incident on k of the member's teams has a copy in
each of those k streams under one sort key; the list returns it once. 70 % of incidents are
on one team, the rest on 2 to 40. Pages of 10 and 25 are read newest first, up to
`PAGES` pages, twice: without a budget, and with the handlers' read budget (200 units), to
count the pages it cuts short. Per page: RCU against the one-wave oracle (each contributing
stream read once up to the page's end), requests, round trips and modelled milliseconds.
The API refuses "all my teams" above 100 teams (``400 too_many_teams``); the 400-team rows
show the engine's cost behind that decision.
"""

from __future__ import annotations

import random
import statistics
from typing import TYPE_CHECKING, Any

from bench.fanout import Latency, engine_cost, identity, oracle_units
from bench.support.report import save
from dynashard import CursorCodec, FanOutEngine, FanOutQuery, PartitionStream, SortKeyRange
from dynashard.query import PageBudget
from dynashard.testing import FakeQueryClient
from incidents.table import TABLE_SCHEMA
from local.engines.clients import create_table, local_client
from local.engines.embedded_dynamodb import DYNAMODB_LOCAL, local_engine

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

TEAMS = (1, 10, 50, 100, 400)
LOCAL_TEAMS = (10, 50, 100)
LOCAL_INCIDENTS = 1000
LOCAL_PAGES = 10
PAGE_SECONDS = 3.0
TITLE = {"S": "x" * 120}
PAGE_SIZES = (10, 25)
INCIDENTS = 3000
PAGES = 30
MAX_COPIES = 40
READ_BUDGET = 200.0
TARGET_MS = 1000.0
TARGET_RCU_RATIO = 2.0
OPEN = SortKeyRange.begins_with("OPEN#")


def team_keys(teams: int, seed: int, incidents: int = INCIDENTS) -> list[list[str]]:
    """Each team's sort keys: `incidents` open incidents, each on 1-40 of the teams."""
    rng = random.Random(seed)
    keys: list[list[str]] = [[] for _ in range(teams)]
    for n in range(incidents):
        copies = 1 if rng.random() < 0.7 else rng.randint(2, min(MAX_COPIES, max(2, teams)))
        key = f"OPEN#{rng.randrange(10**12):012d}#inc{n:05d}"
        for team in rng.sample(range(teams), min(copies, teams)):
            keys[team].append(key)
    return keys


def build(teams: int, seed: int) -> tuple[FakeQueryClient, list[PartitionStream]]:
    """The fake engine holding `team_keys`, and a stream a team."""
    keys = team_keys(teams, seed)
    client = FakeQueryClient(120)
    streams = []
    for index, one_team in enumerate(keys):
        client.load(f"p#{index}", one_team)
        streams.append(PartitionStream("bench", "PK", f"p#{index}", "SK", OPEN))
    return client, streams


def walk(teams: int, size: int, budget: float | None) -> dict[str, Any]:
    """Per-page figures of one walk."""
    seed = teams * 100 + size
    client, streams = build(teams, seed)
    latency = Latency(seed)
    pages: list[dict[str, float]] = []
    cursor, after = None, None
    with FanOutEngine(client, CursorCodec(b"b" * 32), max_workers=16) as engine:  # type: ignore[arg-type]
        for _ in range(PAGES):
            query = FanOutQuery(
                streams,
                "bench",
                size,
                descending=True,
                cursor=cursor,
                identity=identity,
                budget=PageBudget(read_units=budget),
            )
            page = engine.page(query)
            cost = engine_cost(page.stats, latency)
            supplying = sorted({int(item["PK"]["S"].split("#")[1]) for item in page.items})
            oracle = oracle_units(client, streams, supplying, after, page.items)
            pages.append(
                {
                    "items": len(page.items),
                    "rcu": cost.read_units,
                    "oracle": oracle,
                    "requests": cost.requests,
                    "round_trips": cost.round_trips,
                    "ms": cost.latency_ms,
                    "short": float(page.stats.budget_spent),
                }
            )
            if not page.next_cursor:
                break
            cursor = page.next_cursor
            if page.items:
                after = page.items[-1]["SK"]["S"]
    return summarise(teams, size, budget, pages)


def summarise(
    teams: int, size: int, budget: float | None, pages: list[dict[str, float]]
) -> dict[str, Any]:
    rcu = sum(p["rcu"] for p in pages)
    oracle = sum(p["oracle"] for p in pages)
    return {
        "teams": teams,
        "page": size,
        "budget": budget,
        "pages": len(pages),
        "items_per_page": statistics.mean(p["items"] for p in pages),
        "rcu_per_page": rcu / len(pages),
        "rcu_x_oracle": rcu / oracle if oracle else 1.0,
        "requests_per_page": statistics.mean(p["requests"] for p in pages),
        "round_trips_p95": sorted(p["round_trips"] for p in pages)[int(0.95 * (len(pages) - 1))],
        "ms_max": max(p["ms"] for p in pages),
        "ms_mean": statistics.mean(p["ms"] for p in pages),
        "short_pages": int(sum(p["short"] for p in pages)),
    }


def local_walk(client: DynamoDBClient, table: str, teams: int) -> dict[str, Any]:
    """Pages of 25 on DynamoDB Local over `teams` teams, with the handlers' budget."""
    keys = team_keys(teams, teams, LOCAL_INCIDENTS)
    items = [
        {"PutRequest": {"Item": {"PK": {"S": f"{teams}#{i}"}, "SK": {"S": k}, "Title": TITLE}}}
        for i, team in enumerate(keys)
        for k in team
    ]
    for start in range(0, len(items), 25):
        request: Any = {table: items[start : start + 25]}
        while request:
            request = client.batch_write_item(RequestItems=request).get("UnprocessedItems")
    streams = [PartitionStream(table, "PK", f"{teams}#{i}", "SK", OPEN) for i in range(teams)]
    pages: list[dict[str, float]] = []
    cursor = None
    with FanOutEngine(client, CursorCodec(b"b" * 32), max_workers=16) as engine:
        for _ in range(LOCAL_PAGES):
            budget = PageBudget.within(PAGE_SECONDS, READ_BUDGET)
            query = FanOutQuery(
                streams,
                "bench",
                25,
                descending=True,
                cursor=cursor,
                identity=identity,
                budget=budget,
            )
            page = engine.page(query)
            pages.append(
                {
                    "ms": page.stats.elapsed_ms,
                    "rcu": page.stats.read_units,
                    "requests": page.stats.requests,
                    "short": float(page.stats.budget_spent),
                }
            )
            if not page.next_cursor:
                break
            cursor = page.next_cursor
    return {
        "teams": teams,
        "items": len(items),
        "pages": len(pages),
        "ms_median": statistics.median(p["ms"] for p in pages),
        "ms_max": max(p["ms"] for p in pages),
        "rcu_per_page": statistics.mean(p["rcu"] for p in pages),
        "requests_per_page": statistics.mean(p["requests"] for p in pages),
        "short_pages": int(sum(p["short"] for p in pages)),
    }


def local_pass() -> list[dict[str, Any]]:
    """`local_walk` for each of `LOCAL_TEAMS` on a fresh DynamoDB Local."""
    with local_engine(DYNAMODB_LOCAL) as engine:
        client = local_client(engine.endpoint, max_pool_connections=16)
        create_table(client, TABLE_SCHEMA, "bench-many-teams")
        results = [local_walk(client, "bench-many-teams", teams) for teams in LOCAL_TEAMS]
    print(f"on {engine.description}: {LOCAL_INCIDENTS} incidents, pages of 25, budget 3 s / 200 RU")
    print("teams  items  pages  ms median  ms max  RCU/page  requests/page  short")
    for r in results:
        print(
            f"{r['teams']:5d} {r['items']:6d} {r['pages']:6d} {r['ms_median']:10.1f}"
            f" {r['ms_max']:7.1f} {r['rcu_per_page']:9.1f} {r['requests_per_page']:14.1f}"
            f" {r['short_pages']:6d}"
        )
    return results


def main() -> None:
    """Every team count and page size, without and with the read budget; then the local
    pass on DynamoDB Local."""
    results = [
        walk(teams, size, budget)
        for teams in TEAMS
        for size in PAGE_SIZES
        for budget in (None, READ_BUDGET)
    ]
    print(
        f"many teams: {INCIDENTS} open incidents, 70 % on one team, else 2-{MAX_COPIES}; "
        f"first {PAGES} pages (targets: every page < {TARGET_MS:.0f} ms modelled, "
        f"RCU <= {TARGET_RCU_RATIO}x the oracle)"
    )
    header = "teams page budget  pages items/page  RCU/page  x oracle  requests  trips p95"
    print(header + "  ms mean  ms max  short  verdict")
    for r in results:
        misses = []
        if r["ms_max"] >= TARGET_MS:
            misses.append("ms")
        if r["rcu_x_oracle"] > TARGET_RCU_RATIO:
            misses.append("rcu")
        verdict = "ok" if not misses else "MISS " + ",".join(misses)
        budget = f"{r['budget']:.0f}" if r["budget"] else "none"
        print(
            f"{r['teams']:5d} {r['page']:4d} {budget:>6} {r['pages']:6d}"
            f" {r['items_per_page']:10.1f} {r['rcu_per_page']:9.1f}"
            f" {r['rcu_x_oracle']:8.2f}x {r['requests_per_page']:9.1f}"
            f" {r['round_trips_p95']:10d} {r['ms_mean']:8.1f} {r['ms_max']:7.1f}"
            f" {r['short_pages']:6d}  {verdict}"
        )
    local = local_pass()
    print(f"written to {save('many_teams', {'results': results, 'dynamodb_local': local})}")


if __name__ == "__main__":
    main()
