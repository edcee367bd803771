"""A stream batch the publisher's mapping gave up on is published again (issue 37, point
5), on DynamoDB Local's stream: the on-failure record names only where the batch was; the
recovery function reads its records back from the stream and publishes them in order, once
however often the record comes. Before it, such a batch waited in the stream-failures queue
for a person (its events never went out, and the bus's consumers lost them for good)."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import boto3
import pytest

from incidents.store import Caller, new_id
from lambdas import runtime, stream_recovery
from local.api.call_log import RUNNING, CallRecorder
from local.api.proxy_events import LocalLambdaContext
from local.events.event_pipeline import running, sender_poller
from local.events.messaging import REGION, Messaging
from local.webhook_receiver import Receiver, serving
from tests.conftest import HandlerCalls
from tests.helpers.api_harness import Api
from tests.helpers.deliveries import (
    add_note,
    assert_duplicates_share_their_id,
    assert_ordered_per_incident,
    event_of,
    new_incident,
    register,
    wait_for,
)
from tests.integration.conftest import API_TABLE

pytestmark = pytest.mark.integration
NOTES = 3


def stream_records(endpoint: str, account: str) -> tuple[str, dict[str, list[dict[str, Any]]]]:
    """The stream's ARN and, per shard, the records of `account`'s items, oldest first."""
    table = boto3.client("dynamodb", endpoint_url=endpoint, region_name=REGION)
    arn = table.describe_table(TableName=API_TABLE)["Table"]["LatestStreamArn"]
    streams = boto3.client("dynamodbstreams", endpoint_url=endpoint, region_name=REGION)
    found: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
        iterator: str | None = streams.get_shard_iterator(
            StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        while iterator:
            page = streams.get_records(ShardIterator=iterator)
            found[shard["ShardId"]] += [
                dict(r) for r in page["Records"]
                if str(r["dynamodb"].get("Keys", {}).get("PK", {}).get("S", "")).startswith(account)
            ]  # fmt: skip
            iterator = page.get("NextShardIterator") if page["Records"] else None
    return arn, {shard: records for shard, records in found.items() if records}


def on_failure(arn: str, shard: str, records: list[dict[str, Any]]) -> dict[str, Any]:
    """The SQS message Lambda's on-failure destination gets for a stream batch."""
    info = {
        "shardId": shard, "streamArn": arn, "batchSize": len(records),
        "startSequenceNumber": records[0]["dynamodb"]["SequenceNumber"],
        "endSequenceNumber": records[-1]["dynamodb"]["SequenceNumber"],
        "approximateArrivalOfFirstRecord": "2026-11-26T01:00:00Z",
        "approximateArrivalOfLastRecord": "2026-11-26T01:00:01Z",
    }  # fmt: skip
    body = {
        "requestContext": {"condition": "RetryAttemptsExhausted", "approximateInvokeCount": 11},
        "responseContext": {"statusCode": 200, "functionError": "Unhandled"},
        "version": "1.0", "timestamp": "2026-11-26T01:05:00.000Z", "DDBStreamBatchInfo": info,
    }  # fmt: skip
    return {
        "messageId": new_id("msg"), "receiptHandle": "r", "body": json.dumps(body),
        "attributes": {}, "messageAttributes": {}, "md5OfBody": "", "eventSource": "aws:sqs",
        "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:stream-failures",
        "awsRegion": REGION,
    }  # fmt: skip


@pytest.fixture
def recovering(handler_calls: HandlerCalls) -> None:
    """The recovery function's stream reads recorded (least privilege)."""
    CallRecorder(API_TABLE, lambda: None, handler_calls.calls.add).attach(runtime.streams())


def recover(messages: list[dict[str, Any]]) -> list[str]:
    """The recovery function on `messages`, its calls recorded as its own; the ids it
    reports failed."""
    token = RUNNING.set("stream-recovery")
    try:
        answer = stream_recovery.handler({"Records": messages}, LocalLambdaContext())
    finally:
        RUNNING.reset(token)
    return [failure["itemIdentifier"] for failure in answer["batchItemFailures"]]


def test_a_batch_given_up_is_published_again_in_order_and_once(
    api: Api, messaging: Messaging, dynamodb_endpoint: str, recovering: None
) -> None:
    alice = Caller(new_id("acct"), new_id("user"))
    receiver = Receiver(secrets=[])
    with serving(receiver) as url, running({"queue": sender_poller(messaging.queue_url)}):
        register(api, alice, receiver, url)
        incident = new_incident(api, alice)
        for n in range(NOTES):
            add_note(api, alice, incident, f"note {n}")
        arn, shards = stream_records(dynamodb_endpoint, alice.account_id)
        messages = [on_failure(arn, shard, records) for shard, records in shards.items()]
        assert recover(messages) == []
        assert recover(messages) == [], "the on-failure record delivered twice"
        wait_for(lambda: len(receiver.accepted()) >= 1 + NOTES, 30)
    got = receiver.accepted()
    assert [event_of(d)["seq"] for d in got] == list(range(1, 2 + NOTES)), "each once, in order"
    assert_ordered_per_incident(got)
    assert_duplicates_share_their_id(receiver.received)


def test_a_batch_no_longer_in_the_stream_stays_failed_for_its_alarm(
    api: Api, dynamodb_endpoint: str, recovering: None
) -> None:
    alice = Caller(new_id("acct"), new_id("user"))
    new_incident(api, alice)
    arn, shards = stream_records(dynamodb_endpoint, alice.account_id)
    (records,) = shards.values()
    gone = on_failure(arn, "shardId-00000000000000000000-00000000", records)
    assert recover([gone]) == [gone["messageId"]]
