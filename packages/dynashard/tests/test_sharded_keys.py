"""Sharded keys on a real DynamoDB-compatible server: write by calculated shard, read back."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from dynashard import build_key, calculated_shard, shard_keys, sharded_key
from dynashard.testing.dynamodb_local import SINGLE_TABLE

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

pytestmark = pytest.mark.integration
SHARDS = 8


def test_table_has_the_shared_schema(dynamodb: DynamoDBClient, table_name: str) -> None:
    table = dynamodb.describe_table(TableName=table_name)["Table"]
    assert table["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert [(k["AttributeName"], k["KeyType"]) for k in table["KeySchema"]] == [
        ("PK", "HASH"),
        ("SK", "RANGE"),
    ]
    indexes = {
        i["IndexName"]: [k["AttributeName"] for k in i["KeySchema"]]
        for i in table["GlobalSecondaryIndexes"]
    }
    assert indexes == {f"GSI{n}": [f"GSI{n}PK", f"GSI{n}SK"] for n in (1, 2, 3)}
    ttl = dynamodb.describe_time_to_live(TableName=table_name)["TimeToLiveDescription"]
    assert ttl.get("AttributeName") == SINGLE_TABLE.ttl_attribute


def test_point_reads_and_fan_out_find_every_item_once(
    dynamodb: DynamoDBClient, table_name: str
) -> None:
    base = build_key("tenant_1", "things")
    ids = [f"thing_{n:04d}" for n in range(200)]
    for item_id in ids:
        shard = calculated_shard(base, item_id, SHARDS)
        dynamodb.put_item(
            TableName=table_name,
            Item={"PK": {"S": sharded_key(base, shard, SHARDS)}, "SK": {"S": item_id}},
        )

    for item_id in ids[::17]:
        key = sharded_key(base, calculated_shard(base, item_id, SHARDS), SHARDS)
        got = dynamodb.get_item(TableName=table_name, Key={"PK": {"S": key}, "SK": {"S": item_id}})
        assert got["Item"]["SK"]["S"] == item_id

    found: list[str] = []
    per_shard: list[int] = []
    for key in shard_keys(base, SHARDS):
        pages = dynamodb.get_paginator("query").paginate(
            TableName=table_name,
            KeyConditionExpression="PK = :pk",
            ExpressionAttributeValues={":pk": {"S": key}},
        )
        items = [item["SK"]["S"] for page in pages for item in page["Items"]]
        per_shard.append(len(items))
        found += items
    assert sorted(found) == ids
    assert min(per_shard) > 0, "200 items over 8 shards should touch every shard"

    other_tenant = shard_keys(build_key("tenant_2", "things"), SHARDS)
    for key in other_tenant:
        response = dynamodb.query(
            TableName=table_name,
            KeyConditionExpression="PK = :pk",
            ExpressionAttributeValues={":pk": {"S": key}},
        )
        assert response["Items"] == []
