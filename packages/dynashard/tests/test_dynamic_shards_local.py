"""Dynamic shard counts on the embedded server: threads hammer one hot base key while
throttling is injected; nothing acknowledged is lost or duplicated and counts only double."""

from __future__ import annotations

import itertools
import random
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, cast

import pytest
from botocore.exceptions import ClientError

from dynashard import (
    CursorCodec,
    FanOutEngine,
    GrowthPolicy,
    PartitionStream,
    ShardCounts,
    ShardMetaKey,
    Table,
    WriteThrottledError,
    calculated_shard,
    find_item,
    shard_keys,
    sharded_key,
    write_growing,
)
from dynashard.resharding import GrowthEvent
from dynashard.testing.dynamodb_local import SINGLE_TABLE
from dynashard.throttling import RetryPolicy

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

pytestmark = pytest.mark.integration

KEY = ShardMetaKey.for_tenant("tenant_1", "tenant_1#hot")
WRITERS, ITEMS_PER_WRITER, THROTTLE_RATE = 4, 40, 0.3
POLICY = GrowthPolicy(
    max_count=16, cooldown_seconds=0.05, max_jitter_seconds=0.02, cache_seconds=0.05
)


HOT_PARTITION_ERROR: Any = {
    "Error": {
        "Code": "ProvisionedThroughputExceededException",
        "Message": "Throughput exceeds the current capacity for one or more partition keys.",
    },
    "ThrottlingReasons": [
        {
            "reason": "TableWriteKeyRangeThroughputExceeded",
            "resource": "arn:aws:dynamodb:us-east-1:123456789012:table/t",
        }
    ],
    "ResponseMetadata": {"HTTPStatusCode": 400},
}


class ThrottlingClient:
    """The real client, except that writes to the hot base key's shards fail at `rate`
    with the error DynamoDB sends for a hot partition (code, message and reasons)."""

    def __init__(self, client: DynamoDBClient, base: str, rate: float, seed: int) -> None:
        self._client = client
        self._prefix = base + "#"
        self._rate = rate
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self.throttled = 0

    def put_item(self, **request: Any) -> Any:
        if request["Item"]["PK"]["S"].startswith(self._prefix) and self._roll():
            raise ClientError(
                HOT_PARTITION_ERROR,
                "PutItem",
            )
        return self._client.put_item(**request)

    def _roll(self) -> bool:
        with self._lock:
            throttle = self._rng.random() < self._rate
            self.throttled += throttle
        return throttle

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def test_concurrent_hot_writes_grow_by_doubling_and_lose_nothing(
    dynamodb: DynamoDBClient, table_name: str
) -> None:
    throttling = ThrottlingClient(dynamodb, KEY.base, THROTTLE_RATE, seed=7)
    events: list[GrowthEvent] = []
    client = cast("DynamoDBClient", throttling)
    counts = ShardCounts(
        Table(client, table_name, SINGLE_TABLE), policy=POLICY, on_growth=events.append
    )
    retry = RetryPolicy(max_attempts=12, base_delay=0.005, max_delay=0.05)

    def put(sk: str) -> str:
        def write(count: int) -> None:
            shard = calculated_shard(KEY.base, sk, count)
            pk = sharded_key(KEY.base, shard, count)
            throttling.put_item(
                TableName=table_name,
                Item={"PK": {"S": pk}, "SK": {"S": sk}},
                ConditionExpression="attribute_not_exists(PK)",
            )

        write_growing(counts, KEY, write, retry)
        return sk

    def writer(worker: int) -> list[str]:
        acknowledged = []
        for n in range(ITEMS_PER_WRITER):
            try:
                acknowledged.append(put(f"item_{worker}_{n:03d}"))
            except WriteThrottledError:
                continue
        return acknowledged

    with ThreadPoolExecutor(WRITERS) as pool:
        acknowledged = {sk for batch in pool.map(writer, range(WRITERS)) for sk in batch}

    final = counts.refresh(KEY)
    history = [entry.count for entry in final.history]
    assert throttling.throttled > 0
    assert final.shard_count > 1, "throttling must have grown the count"
    assert history == [2**n for n in range(len(history))], "growth by doubling only, from 1"
    # Hooks run on the growing threads after their writes, so they may report out of order.
    assert sorted((e.old_count, e.new_count) for e in events) == list(
        itertools.pairwise(history)
    ), "one growth event per history entry: no lost race doubled twice"
    assert len(acknowledged) >= WRITERS * ITEMS_PER_WRITER * 0.95

    with FanOutEngine(dynamodb, CursorCodec(b"k" * 32), max_workers=16) as engine:
        streams = [
            PartitionStream(table_name, "PK", pk, "SK")
            for pk in shard_keys(KEY.base, final.read_count)
        ]
        stored = Counter(item["SK"]["S"] for item in engine.read_all(streams))
    assert set(stored) == acknowledged, "fan-out finds exactly the acknowledged items"
    assert set(stored.values()) == {1}, "no item was written twice"

    def point_read(sk: str) -> dict[str, Any] | None:
        def read(shard: int) -> dict[str, Any] | None:
            key = {"PK": {"S": sharded_key(KEY.base, shard, POLICY.max_count)}, "SK": {"S": sk}}
            item: dict[str, Any] | None = dynamodb.get_item(TableName=table_name, Key=key).get(
                "Item"
            )
            return item

        return find_item(counts, KEY, KEY.base, sk, read)

    missing = [sk for sk in sorted(acknowledged) if point_read(sk) is None]
    assert missing == []
