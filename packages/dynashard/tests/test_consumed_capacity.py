"""Page statistics take RCU from the engine, and DynamoDB Local's figure agrees with the model.

DynamoDB bills a Query for the summed size of the items it read, rounded up to 4 KB once per
request, halved when eventually consistent (`dynashard.query.capacity`). DynamoDB Local computes
``ConsumedCapacity`` itself; on every request that read items the two must be equal. One
known difference: DynamoDB Local reports 0 for a Query that reads nothing, where DynamoDB
bills the minimum unit; the model, and the page's figure, keep DynamoDB's rule.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pytest

from dynashard import CursorCodec, FanOutEngine, FanOutQuery, PartitionStream
from dynashard.query import query_read_units
from dynashard.testing.fanout_data import SECRET, make_streams, new_prefix

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

pytestmark = pytest.mark.integration
STREAMS, ITEMS_PER_STREAM, PAGE = 4, 15, 7


def write_sized_items(client: DynamoDBClient, table: str, prefix: str) -> None:
    """Items of 100 B to 9 KB (seeded) in every stream, so that 4 KB rounding matters."""
    rng = random.Random(11)
    for stream in range(STREAMS):
        for n in range(ITEMS_PER_STREAM):
            client.put_item(
                TableName=table,
                Item={
                    "PK": {"S": f"{prefix}#{stream}"},
                    "SK": {"S": f"{n:03d}#{stream}"},
                    "Ident": {"S": f"{stream}-{n}"},
                    "GSI1PK": {"S": f"{prefix}#{stream}"},
                    "GSI1SK": {"S": f"{n:03d}#{stream}"},
                    "Body": {"S": "x" * rng.randint(100, 9000)},
                    "Size": {"N": str(rng.randint(1, 10**6))},
                },
            )


@pytest.mark.parametrize(("consistent", "index"), [(True, None), (False, None), (False, "GSI1")])
def test_engine_figures_equal_the_model_page_by_page(
    dynamodb: DynamoDBClient, table_name: str, consistent: bool, index: str | None
) -> None:
    prefix = new_prefix()
    write_sized_items(dynamodb, table_name, prefix)
    streams = [
        replace(
            stream,
            consistent_read=consistent,
            index_name=index,
            partition_key="GSI1PK" if index else "PK",
            sort_key="GSI1SK" if index else "SK",
        )
        for stream in make_streams(table_name, prefix, STREAMS)
    ]
    responses: list[dict[str, Any]] = []

    def record(parsed: dict[str, Any], **_: Any) -> None:
        responses.append(parsed)

    dynamodb.meta.events.register("after-call.dynamodb.Query", record)
    try:
        pages = read_pages(dynamodb, streams)
    finally:
        dynamodb.meta.events.unregister("after-call.dynamodb.Query", record)

    assert sum(len(items) for items, _ in pages) == STREAMS * ITEMS_PER_STREAM
    least = query_read_units([], consistent)
    assert sum(p.read_units for _, p in pages) == sum(
        max(r["ConsumedCapacity"]["CapacityUnits"], least) for r in responses
    )
    checked = 0
    for response in responses:
        reported = response["ConsumedCapacity"]["CapacityUnits"]
        if response["Items"]:
            assert reported == query_read_units(response["Items"], consistent)
            checked += 1
        else:
            assert reported == 0, "DynamoDB Local bills nothing for an empty Query"
    assert checked >= STREAMS


def read_pages(
    client: DynamoDBClient, streams: list[PartitionStream]
) -> list[tuple[list[Any], Any]]:
    """Every page of the fan-out, with its statistics."""
    pages = []
    query = FanOutQuery(streams=streams, binding="capacity", limit=PAGE)
    with FanOutEngine(client, CursorCodec(SECRET), max_workers=4) as engine:
        while True:
            page = engine.page(query)
            assert page.stats.every_request_reported
            pages.append((page.items, page.stats))
            if not page.next_cursor:
                return pages
            query = replace(query, cursor=page.next_cursor)
