"""Filters and projections on streams, against the embedded DynamoDB server."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from dynashard import CursorCodec, FanOutEngine, FanOutQuery, PartitionStream
from dynashard.testing.fanout_data import SECRET, Entity, new_prefix, write_entities

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

pytestmark = pytest.mark.integration


def test_filtered_projected_pages_keep_exact_order(
    dynamodb: DynamoDBClient, new_table: Callable[[], str]
) -> None:
    table, prefix = new_table(), new_prefix()
    entities = [Entity(f"id{n:02d}", f"k{n:03d}", (n % 3,)) for n in range(60)]
    write_entities(dynamodb, table, prefix, entities)
    streams = [
        PartitionStream(
            table_name=table,
            partition_key="PK",
            partition_value=f"{prefix}#{n}",
            sort_key="SK",
            filter_expression="#copy <> :skip",
            expression_names={"#copy": "Copy"},
            expression_values={":skip": {"N": "1"}},
            projection="SK, Ident",
        )
        for n in range(3)
    ]
    returned: list[dict[str, dict[str, str]]] = []
    cursor = None
    with FanOutEngine(dynamodb, CursorCodec(SECRET), max_workers=3) as engine:
        while True:
            page = engine.page(
                FanOutQuery(streams=streams, binding="f", limit=7, descending=True, cursor=cursor)
            )
            returned += page.items
            assert page.stats.items_read >= page.stats.items_returned
            if not page.has_more:
                break
            cursor = page.next_cursor
    expected = [e.sort_key for e in reversed(entities) if e.streams != (1,)]
    assert [item["SK"]["S"] for item in returned] == expected
    assert all(set(item) == {"SK", "Ident"} for item in returned)
