"""The local stream poller reads on when DynamoDB Local says its iterator points past the
shard's oldest record: DynamoDB Local says so of an iterator taken on an empty shard once
another table is created (found when the code delivery's pipeline, started on a fresh
table, handed nothing); AWS says it of records past their 24 hours. The poller then reads
from the oldest record kept, skipping any it already handed on."""

from __future__ import annotations

from typing import Any

import boto3
import pytest

from incidents.table import TABLE_SCHEMA
from local.engines.clients import create_table
from local.events.event_pipeline import REGION, StreamPoller

pytestmark = pytest.mark.integration


def test_an_iterator_said_to_be_past_the_oldest_record_reads_on_once_each(
    dynamodb: Any, dynamodb_endpoint: str, new_table: Any
) -> None:
    watched = new_table()
    arn = dynamodb.describe_table(TableName=watched)["Table"]["LatestStreamArn"]
    streams = boto3.client("dynamodbstreams", endpoint_url=dynamodb_endpoint, region_name=REGION)
    handed: list[str] = []

    def handler(event: dict[str, Any], _: object) -> dict[str, list[str]]:
        handed.extend(r["dynamodb"]["NewImage"]["SK"]["S"] for r in event["Records"])
        return {"batchItemFailures": []}

    poller = StreamPoller(streams, arn, handler)
    assert poller.poll() == 0, "an empty shard: its iterator taken"
    create_table(dynamodb, TABLE_SCHEMA, f"{watched}-other")
    for n in range(2):
        item = {"PK": {"S": "acct_1#inc_1"}, "SK": {"S": f"event#{n}"}, "Type": {"S": "event"}}
        dynamodb.put_item(TableName=watched, Item=item)
        for _ in range(3):  # the refused read, the read from the oldest, one more
            poller.poll()
    assert handed == ["event#0", "event#1"]
    dynamodb.delete_table(TableName=f"{watched}-other")
