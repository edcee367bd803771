"""The fan-out bench runs on an in-process fake of Query; its figures hold only if the fake
answers as DynamoDB does. The same walk, on the same teams data, on the fake and on the
session's engine: every page must return the same items at the same cost."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pytest

from dynashard import CursorCodec, FanOutEngine, FanOutQuery, PartitionStream
from dynashard.query import PageStats
from dynashard.testing import FakeQueryClient
from local.engines.embedded_dynamodb import DYNAMODB_LOCAL, Engine
from local.workloads.teams import TEAMS_RANGE, teams_keys

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_dynamodb.type_defs import WriteRequestTypeDef

pytestmark = pytest.mark.integration
CODEC = CursorCodec(b"f" * 32)


def walk(
    client: Any, streams: list[PartitionStream], size: int
) -> list[tuple[list[str], tuple[Any, ...]]]:
    """Every page newest first: its sort keys and what it cost."""
    pages = []
    query = FanOutQuery(streams, "b", size, descending=True, identity=lambda i: i["SK"]["S"])
    with FanOutEngine(client, CODEC, max_workers=8) as engine:
        while True:
            page = engine.page(query)
            pages.append(([i["SK"]["S"] for i in page.items], cost(page.stats)))
            if page.next_cursor is None:
                return pages
            query = replace(query, cursor=page.next_cursor)


def cost(stats: PageStats) -> tuple[Any, ...]:
    return (
        stats.requests,
        stats.round_trips,
        stats.items_read,
        stats.contributors,
        stats.modelled_read_units,
    )


@pytest.mark.parametrize(("width", "size"), [(4, 25), (16, 10), (24, 10)])
def test_the_bench_fake_costs_what_the_engine_costs(
    engine: Engine,
    dynamodb: DynamoDBClient,
    new_table: Callable[[], str],
    width: int,
    size: int,
) -> None:
    """Narrow (key spans, quiet streams) and wide (plans) walks over 400 incidents."""
    if engine.backend != DYNAMODB_LOCAL:
        pytest.skip("compares the fake with DynamoDB Local, not with another fake")
    keys = teams_keys(width, 400, random.Random(width))
    table, fake = new_table(), FakeQueryClient()
    requests: list[WriteRequestTypeDef] = []
    for index, stream_keys in enumerate(keys):
        fake.load(f"p#{index}", stream_keys)
        for key in stream_keys:
            item = {"PK": {"S": f"p#{index}"}, "SK": {"S": key}, "Title": {"S": "x" * 120}}
            requests.append({"PutRequest": {"Item": item}})
    for start in range(0, len(requests), 25):
        written = dynamodb.batch_write_item(RequestItems={table: requests[start : start + 25]})
        assert not written["UnprocessedItems"]
    streams = [PartitionStream(table, "PK", f"p#{i}", "SK", TEAMS_RANGE) for i in range(width)]
    on_engine = walk(dynamodb, streams, size)
    assert len(on_engine) > 3
    assert walk(fake, streams, size) == on_engine
