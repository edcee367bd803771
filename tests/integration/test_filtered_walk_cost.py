"""Cost that follows the answer (issue 31), on the session's engine (DynamoDB Local, whose
ConsumedCapacity bills a filtered Query for every item it read):

- a filtered walk never costs more than the unfiltered walk of the same list (within
  `OVERHEAD`), whatever the page size and the share of items the filter passes: a page cut
  by its budget used to resume at its least-read stream, throwing away what the others had
  read, and a filter passing few items made every request read a handful of items;
- no page spends more than its read units, its first wave included (the first wave used to
  run whole: 15 units on a budget of 5)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from dynashard import CursorCodec, FanOutEngine, FanOutQuery, PartitionStream, SortKeyRange
from dynashard.query import PageBudget
from local.engines.embedded_dynamodb import DYNAMODB_LOCAL, backend_from_env
from local.workloads.filtered_lists import Shape, load, streams, walk

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        backend_from_env() != DYNAMODB_LOCAL, reason="read units as DynamoDB bills them"
    ),
]
OVERHEAD = 1.1
"""A filtered walk may cost 10 % more than the unfiltered one: its pages end elsewhere."""
BUDGET = 20.0
"""Read units a page: small enough for these lists to cut many pages."""


@pytest.mark.slow
@settings(
    max_examples=2,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # a shrink runs for minutes
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    streams_count=st.sampled_from((4, 16, 40)),
    copies=st.integers(1, 3),
    percent=st.integers(1, 100),
    limit=st.integers(1, 100),
    seed=st.integers(0, 10**6),
)
@example(streams_count=40, copies=3, percent=1, limit=100, seed=1)
@example(streams_count=40, copies=3, percent=5, limit=25, seed=2)
@example(streams_count=4, copies=2, percent=30, limit=1, seed=601820)
def test_a_filtered_walk_costs_no_more_than_the_unfiltered_walk(
    dynamodb: DynamoDBClient,
    new_table: Callable[[], str],
    streams_count: int,
    copies: int,
    percent: int,
    limit: int,
    seed: int,
) -> None:
    table = new_table()
    incidents = 300
    shape = Shape(streams_count, incidents, copies, max(1, incidents * percent // 100), seed)
    expected = load(dynamodb, table, shape)
    plain, _ = walk(dynamodb, streams(table, shape, filtered=False), limit, BUDGET)
    filtered, keys = walk(dynamodb, streams(table, shape, filtered=True), limit, BUDGET)
    case = f"{shape}, pages of {limit}: filtered {filtered}, unfiltered {plain}"
    assert keys == expected, f"the filtered walk is not the filtered list: {case}"
    assert filtered.read_units <= OVERHEAD * plain.read_units, case
    assert max(plain.heaviest_page, filtered.heaviest_page) <= BUDGET, case


def test_the_first_wave_keeps_to_the_budget(
    dynamodb: DynamoDBClient, new_table: Callable[[], str]
) -> None:
    """10 streams of 40 items of ~900 bytes, pages of 100: the first wave asked each stream
    for 10 items (9 KB, 1.5 units a request: 15 units) whatever the budget; on 5 units it
    now asks for what one unit holds, and every page of the walk keeps to 5."""
    table = new_table()
    for stream in range(10):
        for n in range(40):
            item = {
                "PK": {"S": f"p#{stream}"},
                "SK": {"S": f"{n:03d}#{stream}"},
                "B": {"S": "x" * 880},
            }
            dynamodb.put_item(TableName=table, Item=item)
    listed = [PartitionStream(table, "PK", f"p#{s}", "SK", SortKeyRange()) for s in range(10)]
    query = FanOutQuery(listed, "first-wave", 100, budget=PageBudget(read_units=5.0))
    seen: list[str] = []
    with FanOutEngine(dynamodb, CursorCodec(b"f" * 32), max_workers=16) as engine:
        page = engine.page(query)
        while True:
            assert page.stats.read_units <= 5.0, page.stats
            seen += [item["SK"]["S"] for item in page.items]
            if not page.next_cursor:
                break
            page = engine.page(replace(query, cursor=page.next_cursor))
    assert seen == sorted(f"{n:03d}#{s}" for n in range(40) for s in range(10))
