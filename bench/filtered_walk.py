"""Filtered walks: what walking a filtered list to its end costs, beside the unfiltered walk.

Reproduce: ``make bench`` (or ``PYTHONPATH=layers/shared/python:. python -m bench.filtered_walk``).
On AWS DynamoDB Local, a member's "all my teams" shape: `STREAMS` team streams, incidents
each with a copy on several of them under one sort key, a fraction of them matching the
filter (an attribute the filter expression tests: DynamoDB reads every item of the key
range and bills for it, match or not). Each list is walked to its end, newest first, with
the handlers' budget (3 s, 200 read units a page), filtered and unfiltered, at several
page sizes. Per walk: pages, read units (as DynamoDB Local reports them), the heaviest
page, and the filtered walk's units over the unfiltered walk's (goal: at most
`WALK_OVERHEAD` times; and no page over its budget).

The first row is the shape reported in issue 31: 100 teams, 287 incidents with a copy on 45
of them each, 5 of which match (``status=ACKNOWLEDGED&severity=SEV5``), pages of 100.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bench.report import recording_tables, save
from dynashard import CursorCodec, FanOutEngine, FanOutQuery, PageBudget, SortKeyRange, Stream
from incidents.table import TABLE_SCHEMA
from local.clients import create_table, local_client
from local.embedded_dynamodb import DYNAMODB_LOCAL, local_engine

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

PAGE_SECONDS = 3.0
READ_BUDGET = 200.0
WALK_OVERHEAD = 1.1
"""A filtered walk may cost this much more than the unfiltered walk of its list."""
OPEN = SortKeyRange.begins_with("OPEN#")
BODY = {"S": "x" * 300}
"""About the size of an incident's copy in a team's list (title, status, severity, ids)."""


@dataclass(frozen=True)
class Shape:
    """A list: `streams` streams, `incidents` incidents with a copy on `copies` of them,
    `matches` of which match the filter."""

    streams: int
    incidents: int
    copies: int
    matches: int
    seed: int = 1

    @property
    def name(self) -> str:
        return f"s{self.streams}i{self.incidents}c{self.copies}m{self.matches}r{self.seed}"


@dataclass(frozen=True)
class Walk:
    """What walking one list to its end cost."""

    pages: int
    items: int
    read_units: float
    heaviest_page: float


def load(client: DynamoDBClient, table: str, shape: Shape) -> list[str]:
    """Write `shape`'s items; the sort keys of the matching incidents."""
    rng = random.Random(shape.seed)
    matching = set(rng.sample(range(shape.incidents), shape.matches))
    requests, matched = [], []
    for n in range(shape.incidents):
        key = f"OPEN#{rng.randrange(10**12):012d}#inc{n:05d}"
        flag = {"S": "y" if n in matching else "n"}
        if n in matching:
            matched.append(key)
        for team in rng.sample(range(shape.streams), shape.copies):
            item = {"PK": {"S": f"{shape.name}#{team}"}, "SK": {"S": key}, "M": flag, "B": BODY}
            requests.append({"PutRequest": {"Item": item}})
    for start in range(0, len(requests), 25):
        batch: Any = {table: requests[start : start + 25]}
        while batch:
            batch = client.batch_write_item(RequestItems=batch).get("UnprocessedItems")
    return sorted(matched, reverse=True)


def streams(table: str, shape: Shape, *, filtered: bool) -> list[Stream]:
    """One stream a team; with `filtered`, only the matching items."""
    extra: dict[str, Any] = {}
    if filtered:
        extra = {
            "filter_expression": "#m = :m",
            "expression_names": {"#m": "M"},
            "expression_values": {":m": {"S": "y"}},
        }
    return [
        Stream(table, "PK", f"{shape.name}#{team}", "SK", OPEN, **extra)
        for team in range(shape.streams)
    ]


def walk(
    client: DynamoDBClient, listed: list[Stream], limit: int, read_budget: float = READ_BUDGET
) -> tuple[Walk, list[str]]:
    """Page the list to its end with the handlers' budget (or `read_budget` read units a
    page); its cost and the keys returned."""
    keys: list[str] = []
    cost, heaviest, count, cursor = 0.0, 0.0, 0, None
    with FanOutEngine(client, CursorCodec(b"w" * 32), max_workers=16) as engine:
        while True:
            count += 1
            query = FanOutQuery(
                listed,
                "bench",
                limit,
                descending=True,
                cursor=cursor,
                identity=lambda item: item["SK"]["S"],
                budget=PageBudget.within(PAGE_SECONDS, read_budget),
            )
            page = engine.page(query)
            cost += page.stats.read_units
            heaviest = max(heaviest, page.stats.read_units)
            keys += [item["SK"]["S"] for item in page.items]
            if not page.next_cursor:
                break
            cursor = page.next_cursor
    return Walk(count, len(keys), cost, heaviest), keys


SHAPES = (
    (Shape(100, 287, 45, 5), (100, 25)),
    (Shape(100, 300, 3, 3), (100, 25, 10)),
    (Shape(100, 300, 3, 30), (100, 25, 10)),
    (Shape(16, 2000, 1, 20), (100, 25, 10)),
    (Shape(16, 2000, 1, 200), (100, 25, 10)),
    (Shape(16, 2000, 1, 1000), (100, 25)),
)


def measure(client: DynamoDBClient, table: str) -> list[dict[str, Any]]:
    """Every shape and page size: the filtered walk against the unfiltered one."""
    rows = []
    for shape, limits in SHAPES:
        expected = load(client, table, shape)
        for limit in limits:
            plain, _ = walk(client, streams(table, shape, filtered=False), limit)
            filtered, keys = walk(client, streams(table, shape, filtered=True), limit)
            if keys != expected:
                raise AssertionError(f"{shape.name} limit {limit}: the filtered walk is wrong")
            ratio = filtered.read_units / plain.read_units
            rows.append(
                {
                    "streams": shape.streams,
                    "incidents": shape.incidents,
                    "copies": shape.copies,
                    "matches": shape.matches,
                    "limit": limit,
                    "plain_pages": plain.pages,
                    "plain_rcu": plain.read_units,
                    "filtered_pages": filtered.pages,
                    "filtered_rcu": filtered.read_units,
                    "heaviest_page": max(plain.heaviest_page, filtered.heaviest_page),
                    "ratio": ratio,
                    "met": ratio <= WALK_OVERHEAD
                    and max(plain.heaviest_page, filtered.heaviest_page) <= READ_BUDGET,
                }
            )
    return rows


def main() -> None:
    """Measure on a fresh DynamoDB Local; print the table; save the JSON."""
    with local_engine(DYNAMODB_LOCAL) as engine:
        client = local_client(engine.endpoint, max_pool_connections=16)
        create_table(client, TABLE_SCHEMA, "bench-filtered-walk")
        rows = measure(client, "bench-filtered-walk")
    print(
        f"filtered walks on {engine.description}, newest first, budget {PAGE_SECONDS:.0f} s /"
        f" {READ_BUDGET:.0f} RU a page (goals: filtered walk <= {WALK_OVERHEAD}x the"
        " unfiltered walk, every page <= its budget)\n"
    )
    print(
        "| streams | incidents | copies | matching | page | unfiltered pages / RCU "
        "| filtered pages / RCU | x unfiltered | heaviest page RCU | goals |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print(
            f"| {r['streams']} | {r['incidents']} | {r['copies']} | {r['matches']} | {r['limit']}"
            f" | {r['plain_pages']} / {r['plain_rcu']:.1f} | {r['filtered_pages']} /"
            f" {r['filtered_rcu']:.1f} | {r['ratio']:.2f}x | {r['heaviest_page']:.1f} |"
            f" {'met' if r['met'] else 'MISSED'} |"
        )
    print(f"\nwritten to {save('filtered_walk', {'rows': rows})}")


if __name__ == "__main__":
    with recording_tables():
        main()
