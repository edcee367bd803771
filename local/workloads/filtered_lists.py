"""Lists whose filter passes a share of their items, as an "all my teams" list holds them:
written, and walked to their end with the handlers' page budget. `bench.filtered_walk`
measures these walks and the filtered-walk cost property test checks them."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dynashard import CursorCodec, FanOutEngine, FanOutQuery, PartitionStream, SortKeyRange
from dynashard.query import PageBudget

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


def streams(table: str, shape: Shape, *, filtered: bool) -> list[PartitionStream]:
    """One stream a team; with `filtered`, only the matching items."""
    extra: dict[str, Any] = {}
    if filtered:
        extra = {
            "filter_expression": "#m = :m",
            "expression_names": {"#m": "M"},
            "expression_values": {":m": {"S": "y"}},
        }
    return [
        PartitionStream(table, "PK", f"{shape.name}#{team}", "SK", OPEN, **extra)
        for team in range(shape.streams)
    ]


def walk(
    client: DynamoDBClient,
    listed: list[PartitionStream],
    limit: int,
    read_budget: float = READ_BUDGET,
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
