"""Dynamic shard counts with botocore's Stubber: growth, cooldown, lost races, maximum, probes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from botocore.stub import Stubber

from dynashard import (
    GrowthPolicy,
    ShardCounts,
    ShardMetaKey,
    Table,
    TableSchema,
    WriteThrottledError,
    calculated_shard,
    find_item,
    sharded_key,
    write_growing,
)
from dynashard.errors import ShardMetadataError
from dynashard.resharding import (
    MOVE_AFTER_SECONDS,
    GrowthEvent,
    Operation,
    ShardedKey,
    ShardMeta,
    Transaction,
    TransactionCancelledError,
    TransactionThrottledError,
    shard_counts,
    transact_growing,
)
from dynashard.resharding.shard_meta import HistoryEntry
from dynashard.throttling import RetryPolicy, is_hot_key_throttling

SCHEMA = TableSchema("PK", "SK")
KEY = ShardMetaKey.for_tenant("acme", "acme#HOT")
NOW = 1_000_000.0
HOT = [{"reason": "TableWriteKeyRangeThroughputExceeded", "resource": "arn:aws:dynamodb:t"}]


class Clock:
    """A clock tests move by hand; ``sleep`` records the delay and advances it."""

    def __init__(self) -> None:
        self.now = NOW
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def stubbed() -> Iterator[tuple[Any, Stubber]]:
    client = boto3.client("dynamodb", region_name="us-east-1")
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


def make_counts(client: Any, clock: Clock, events: list[GrowthEvent], **policy: Any) -> ShardCounts:
    return ShardCounts(
        Table(client, "tbl", SCHEMA),
        policy=GrowthPolicy(**{"cooldown_seconds": 30.0, "max_count": 8, **policy}),
        on_growth=events.append,
        clock=clock,
        sleep=clock.sleep,
    )


def meta_item(*history: tuple[int, int]) -> dict[str, Any]:
    at, count = history[-1]
    return {
        "PK": {"S": KEY.partition},
        "SK": {"S": KEY.base},
        "ShardCount": {"N": str(count)},
        "LastUpdated": {"N": str(at)},
        "ShardHistory": {
            "L": [{"M": {"At": {"N": str(a)}, "Count": {"N": str(c)}}} for a, c in history]
        },
    }


def expect_meta_read(stubber: Stubber, item: dict[str, Any] | None, consistent: bool) -> None:
    response = {"Item": item} if item else {}
    stubber.add_response(
        "get_item",
        response,
        {
            "TableName": "tbl",
            "Key": {"PK": {"S": KEY.partition}, "SK": {"S": KEY.base}},
            "ConsistentRead": consistent,
        },
    )


def expect_put(stubber: Stubber, shard_count: int, error: str | None = None, **fields: Any) -> None:
    params = {"TableName": "tbl", "Item": item_at(shard_count)}
    if error:
        stubber.add_client_error(
            "put_item", service_error_code=error, expected_params=params, modeled_fields=fields
        )
    else:
        stubber.add_response("put_item", {}, params)


def item_at(shard_count: int) -> dict[str, Any]:
    shard = calculated_shard(KEY.base, "item-1", shard_count)
    return {"PK": {"S": sharded_key(KEY.base, shard, shard_count)}, "SK": {"S": "item-1"}}


def put(client: Any) -> Any:
    return lambda count: client.put_item(TableName="tbl", Item=item_at(count))


def expect_growth(stubber: Stubber, before: ShardMeta, at: int, new_count: int) -> None:
    after_history = [*[(e.at, e.count) for e in before.history], (at, new_count)]
    values = {
        ":ShardCount": {"N": str(new_count)},
        ":LastUpdated": {"N": str(at)},
        ":ShardHistory": meta_item(*after_history)["ShardHistory"],
    }
    if before.stored:
        condition = "LastUpdated = :seen"
        values[":seen"] = {"N": str(before.last_updated)}
    else:
        condition = "attribute_not_exists(LastUpdated)"
    update = {
        "TableName": "tbl",
        "Key": {"PK": {"S": KEY.partition}, "SK": {"S": KEY.base}},
        "UpdateExpression": (
            "SET ShardCount = :ShardCount, LastUpdated = :LastUpdated, ShardHistory = :ShardHistory"
        ),
        "ConditionExpression": condition,
        "ExpressionAttributeValues": values,
    }
    counted = {  # listed as counted above one shard, in the same transaction
        "PK": {"S": "dynashard#counted"},
        "SK": {"S": f"{KEY.partition}#{KEY.base}"},
        "MetaPartition": {"S": KEY.partition},
        "Base": {"S": KEY.base},
    }
    stubber.add_response(
        "transact_write_items",
        {},
        {"TransactItems": [{"Update": update}, {"Put": {"TableName": "tbl", "Item": counted}}]},
    )


def test_throttled_write_grows_once_and_retries_on_the_new_key(stubbed: Any, clock: Clock) -> None:
    client, stubber = stubbed
    events: list[GrowthEvent] = []
    counts = make_counts(client, clock, events, max_jitter_seconds=0.0)
    expect_meta_read(stubber, None, consistent=False)
    expect_put(stubber, 1, "ProvisionedThroughputExceededException", ThrottlingReasons=HOT)
    expect_meta_read(stubber, None, consistent=True)
    expect_growth(stubber, ShardMeta.initial(KEY, 1), int(NOW * 1000), 2)
    expect_put(stubber, 2)

    write_growing(counts, KEY, put(client))

    assert [(e.old_count, e.new_count, e.base) for e in events] == [(1, 2, KEY.base)]
    assert counts.get(KEY).shard_count == 2, "the grown count is cached for the next write"


def test_growth_waits_a_random_jitter_before_racing(stubbed: Any, clock: Clock) -> None:
    client, stubber = stubbed
    events: list[GrowthEvent] = []
    counts = make_counts(client, clock, events, max_jitter_seconds=0.5)
    expect_meta_read(stubber, None, consistent=True)
    stubber.add_response("transact_write_items", {})

    grown = counts.grow(KEY, ShardMeta.initial(KEY, 1))

    assert len(clock.sleeps) == 1
    assert 0 < clock.sleeps[0] <= 0.5
    assert grown.last_updated == int((NOW + clock.sleeps[0]) * 1000), "stamped after the wait"
    assert events[0].jitter_seconds == clock.sleeps[0]


def test_cooldown_keeps_the_count_and_backs_off(stubbed: Any, clock: Clock) -> None:
    client, stubber = stubbed
    events: list[GrowthEvent] = []
    counts = make_counts(client, clock, events)
    recent = int(NOW * 1000) - 1_000
    expect_meta_read(stubber, meta_item((0, 1), (recent, 2)), consistent=False)
    expect_put(stubber, 2, "ProvisionedThroughputExceededException", ThrottlingReasons=HOT)
    expect_put(stubber, 2)

    write_growing(counts, KEY, put(client), RetryPolicy(sleep=clock.sleep))

    assert events == []
    assert len(clock.sleeps) == 1, "one back-off, no growth jitter"


def test_lost_race_before_the_update_takes_the_winners_count(stubbed: Any, clock: Clock) -> None:
    client, stubber = stubbed
    events: list[GrowthEvent] = []
    counts = make_counts(client, clock, events)
    expect_meta_read(stubber, None, consistent=False)
    expect_put(stubber, 1, "ThrottlingException", throttlingReasons=HOT)
    expect_meta_read(stubber, meta_item((0, 1), (int(NOW * 1000) - 5, 2)), consistent=True)
    expect_put(stubber, 2)

    write_growing(counts, KEY, put(client))

    assert events == []


def test_lost_race_on_the_conditional_update_rereads(stubbed: Any, clock: Clock) -> None:
    client, stubber = stubbed
    events: list[GrowthEvent] = []
    counts = make_counts(client, clock, events, max_jitter_seconds=0.0)
    old = int(NOW * 1000) - 60_000
    stored = meta_item((0, 1), (old, 2))
    expect_meta_read(stubber, stored, consistent=False)
    expect_put(stubber, 2, "ProvisionedThroughputExceededException", ThrottlingReasons=HOT)
    expect_meta_read(stubber, stored, consistent=True)
    stubber.add_client_error(
        "transact_write_items",
        service_error_code="TransactionCanceledException",
        modeled_fields={
            "CancellationReasons": [{"Code": "ConditionalCheckFailed"}, {"Code": "None"}]
        },
    )
    expect_meta_read(stubber, meta_item((0, 1), (old, 2), (old + 59_000, 4)), consistent=True)
    expect_put(stubber, 4)

    write_growing(counts, KEY, put(client))

    assert events == [], "the loser reports no growth; the winner did"


def test_count_stops_at_the_maximum(stubbed: Any, clock: Clock) -> None:
    client, stubber = stubbed
    events: list[GrowthEvent] = []
    counts = make_counts(client, clock, events, max_count=2)
    expect_meta_read(stubber, meta_item((0, 1), (1, 2)), consistent=False)
    expect_put(stubber, 2, "ProvisionedThroughputExceededException", ThrottlingReasons=HOT)
    stubber.add_response("update_item", {})  # LastThrottled stamped, once a cooldown
    for _ in range(2):
        expect_put(stubber, 2, "ProvisionedThroughputExceededException", ThrottlingReasons=HOT)

    with pytest.raises(WriteThrottledError, match="still throttled at 2 shards") as raised:
        write_growing(counts, KEY, put(client), RetryPolicy(max_attempts=3, sleep=clock.sleep))

    assert raised.value.code == "ProvisionedThroughputExceededException"
    assert events == []
    assert counts.get(KEY).last_throttled == int(NOW * 1000), "the cold check waits past it"


def test_table_level_throttling_does_not_grow(stubbed: Any, clock: Clock) -> None:
    client, stubber = stubbed
    events: list[GrowthEvent] = []
    counts = make_counts(client, clock, events)
    account = [{"reason": "TableWriteAccountLimitExceeded", "resource": "arn:aws:dynamodb:t"}]
    expect_meta_read(stubber, None, consistent=False)
    expect_put(stubber, 1, "ProvisionedThroughputExceededException", ThrottlingReasons=account)
    expect_put(stubber, 1)

    write_growing(counts, KEY, put(client), RetryPolicy(sleep=clock.sleep))

    assert events == []


def test_other_errors_propagate_untouched(stubbed: Any, clock: Clock) -> None:
    client, stubber = stubbed
    counts = make_counts(client, clock, [])
    expect_meta_read(stubber, None, consistent=False)
    expect_put(stubber, 1, "ValidationException")

    with pytest.raises(ClientError, match="ValidationException"):
        write_growing(counts, KEY, put(client))


def all_distinct_probe_sk() -> str:
    """A sort key whose shards under 8, 4, 2 and 1 are all different (h & 7 == 7)."""
    return next(sk for n in range(1000) if calculated_shard(KEY.base, sk := f"item-{n}", 8) == 7)


def expect_item_read(stubber: Stubber, shard: int, count: int, sk: str, found: bool) -> None:
    key = {"PK": {"S": sharded_key(KEY.base, shard, count)}, "SK": {"S": sk}}
    stubber.add_response(
        "get_item", {"Item": key} if found else {}, {"TableName": "tbl", "Key": key}
    )


def read_at(client: Any, count: int, sk: str) -> Any:
    def read(shard: int) -> dict[str, Any] | None:
        key = {"PK": {"S": sharded_key(KEY.base, shard, count)}, "SK": {"S": sk}}
        item: dict[str, Any] | None = client.get_item(TableName="tbl", Key=key).get("Item")
        return item

    return read


def test_point_read_probes_newest_count_first_then_history(stubbed: Any, clock: Clock) -> None:
    client, stubber = stubbed
    counts = make_counts(client, clock, [])
    sk = all_distinct_probe_sk()
    expect_meta_read(stubber, meta_item((0, 1), (1, 2), (2, 4), (3, 8)), consistent=False)
    for shard, found in ((7, False), (3, False), (1, True)):
        expect_item_read(stubber, shard, 8, sk, found)

    item = find_item(counts, KEY, KEY.base, sk, read_at(client, 8, sk))

    assert item is not None
    assert item["PK"]["S"] == sharded_key(KEY.base, 1, 8)


def test_point_read_miss_rereads_metadata_and_probes_only_new_shards(
    stubbed: Any, clock: Clock
) -> None:
    client, stubber = stubbed
    counts = make_counts(client, clock, [])
    sk = all_distinct_probe_sk()
    expect_meta_read(stubber, meta_item((0, 1), (1, 2)), consistent=False)
    expect_item_read(stubber, 1, 8, sk, found=False)
    expect_item_read(stubber, 0, 8, sk, found=False)
    expect_meta_read(stubber, meta_item((0, 1), (1, 2), (2, 4)), consistent=True)
    expect_item_read(stubber, 3, 8, sk, found=False)

    assert find_item(counts, KEY, KEY.base, sk, read_at(client, 8, sk)) is None


def test_readers_cache_the_count_for_a_few_seconds(stubbed: Any, clock: Clock) -> None:
    client, stubber = stubbed
    counts = make_counts(client, clock, [], cache_seconds=5.0)
    expect_meta_read(stubber, meta_item((0, 1), (1, 2)), consistent=False)
    expect_meta_read(stubber, meta_item((0, 1), (1, 2), (2, 4)), consistent=False)

    assert counts.get(KEY).read_count == 2
    clock.now += 4.9
    assert counts.get(KEY).read_count == 2, "served from the cache"
    clock.now += 0.2
    assert counts.get(KEY).read_count == 4, "re-read after cache_seconds"


def test_history_must_double_in_time_order() -> None:
    with pytest.raises(ShardMetadataError, match="not a doubling"):
        ShardMeta(KEY, (HistoryEntry(0, 1), HistoryEntry(5, 4)))
    with pytest.raises(ShardMetadataError, match="not a doubling"):
        ShardMeta(KEY, (HistoryEntry(9, 1), HistoryEntry(5, 2)))
    with pytest.raises(ShardMetadataError, match="power of two"):
        ShardMeta(KEY, (HistoryEntry(0, 3),))


def test_stored_metadata_is_checked() -> None:
    with pytest.raises(ShardMetadataError, match="disagree"):
        ShardMeta.from_item(KEY, {**meta_item((0, 1), (5, 2)), "ShardCount": {"N": "4"}})
    with pytest.raises(ShardMetadataError, match="malformed"):
        ShardMeta.from_item(KEY, {"PK": {"S": KEY.partition}, "SK": {"S": KEY.base}})
    parsed = ShardMeta.from_item(KEY, meta_item((0, 1), (5, 2), (7, 4)))
    assert (parsed.shard_count, parsed.last_updated, parsed.read_count) == (4, 7, 4)


def test_history_is_bounded_by_the_doublings_to_the_maximum() -> None:
    meta = ShardMeta.initial(KEY, 1)
    for at in range(16):
        meta = meta.doubled(at)
    assert meta.shard_count == 2**16
    assert len(meta.history) == 17
    with pytest.raises(ShardMetadataError):
        meta.doubled(99)


def test_policy_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="above max_count"):
        GrowthPolicy(default_count=16, max_count=8)
    with pytest.raises(ValueError, match="power of two"):
        GrowthPolicy(max_count=12)
    with pytest.raises(ValueError, match="cooldown_seconds"):
        GrowthPolicy(cooldown_seconds=-1)


@pytest.mark.parametrize(
    ("code", "reasons", "hot"),
    [
        ("ProvisionedThroughputExceededException", HOT, True),
        ("ProvisionedThroughputExceededException", None, True),
        (
            "ProvisionedThroughputExceededException",
            [{"reason": "IndexWriteKeyRangeThroughputExceeded"}],
            True,
        ),
        (
            "ProvisionedThroughputExceededException",
            [{"reason": "TableWriteMaxOnDemandThroughputExceeded"}],
            False,
        ),
        ("ValidationException", None, False),
    ],
)
def test_hot_key_throttling_is_told_apart(
    code: str, reasons: list[dict[str, str]] | None, hot: bool
) -> None:
    response: dict[str, Any] = {"Error": {"Code": code, "Message": "m"}}
    if reasons is not None:
        response["ThrottlingReasons"] = reasons
    assert is_hot_key_throttling(ClientError(response, "PutItem")) is hot  # type: ignore[arg-type]


def test_the_cache_holds_a_bounded_number_of_keys(
    stubbed: Any, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long-lived container meets every participant: the least recently read key goes."""
    monkeypatch.setattr(shard_counts, "MAX_CACHED", 3)
    client, stubber = stubbed
    counts = make_counts(client, clock, [], cache_seconds=60.0)
    keys = [ShardMetaKey.for_tenant("acme", f"acme#K{n}") for n in range(5)]
    for key in [*keys, keys[0]]:  # keys[0] was evicted: read again
        stubber.add_response(
            "get_item",
            {},
            {
                "TableName": "tbl",
                "Key": {"PK": {"S": key.partition}, "SK": {"S": key.base}},
                "ConsistentRead": False,
            },
        )
    for key in keys:
        counts.get(key)
    counts.get(keys[4])  # still cached: no request
    counts.get(keys[0])


def test_a_halving_keeps_the_smaller_counts_and_reads_the_old_one_until_settled() -> None:
    history = tuple(HistoryEntry(at, count) for at, count in ((0, 1), (5, 2), (9, 4), (12, 8)))
    halved = ShardMeta(KEY, history, stored=True).halved(20)
    assert [(e.at, e.count) for e in halved.history] == [(0, 1), (5, 2), (20, 4)]
    assert (halved.shard_count, halved.moving_from, halved.read_count) == (4, 8, 8)
    first = halved.probe_shards(KEY.base, "sk")[0]
    assert first == calculated_shard(KEY.base, "sk", 8), "the old copy first while moving"
    stored = {
        name: shard_counts._serializer.serialize(v) for name, v in halved.attributes().items()
    }
    assert ShardMeta.from_item(KEY, stored) == halved
    settled = halved.settled()
    assert (settled.read_count, settled.moving_from, "MovingFrom" in settled.attributes()) == (
        4, None, False,
    )  # fmt: skip
    with pytest.raises(ShardMetadataError, match="not a halving"):
        ShardMeta(KEY, history, stored=True, moving_from=4)


def test_items_may_move_while_a_halving_moves_and_a_minute_after_any_change() -> None:
    """A list trusts a cursor's per-stream plan only when no item can have moved behind it:
    not while a halving moves, nor within `MOVE_AFTER_SECONDS` of a change (a doubling
    back ends a move whose last step may still be writing)."""
    history = (HistoryEntry(0, 1), HistoryEntry(10_000, 2))
    grown = ShardMeta(KEY, history, stored=True)
    assert grown.items_may_move(10.0 + MOVE_AFTER_SECONDS - 0.001)
    assert not grown.items_may_move(10.0 + MOVE_AFTER_SECONDS)
    halved = grown.halved(100_000)
    assert halved.items_may_move(100.0 + 3600), "moving until settled, however long"
    assert not halved.settled().items_may_move(100.0 + MOVE_AFTER_SECONDS)
    assert not ShardMeta.initial(KEY, 4).items_may_move(NOW), "a stage's count never changed"


def batch_keys(*keys: ShardMetaKey) -> dict[str, Any]:
    return {"tbl": {"Keys": [{"PK": {"S": k.partition}, "SK": {"S": k.base}} for k in keys]}}


def meta_item_of(key: ShardMetaKey, count: int) -> dict[str, Any]:
    history = [(n, 2**n) for n in range(count.bit_length())]
    return meta_item(*history) | {
        "PK": {"S": key.partition},
        "SK": {"S": key.base},
    }


def test_many_maps_are_read_in_one_batch_and_the_cached_ones_not_at_all(
    stubbed: Any, clock: Clock
) -> None:
    client, stubber = stubbed
    counts = make_counts(client, clock, [], cache_seconds=5.0)
    keys = [ShardMetaKey.for_tenant("acme", f"acme#team{n}") for n in range(3)]
    expect_meta_read(stubber, meta_item((0, 1), (1, 2)), consistent=False)
    stubber.add_response(
        "batch_get_item",
        {"Responses": {"tbl": [meta_item_of(keys[2], 4), meta_item_of(keys[0], 2)]}},
        {"RequestItems": batch_keys(*keys)},
    )
    counts.get(KEY)  # cached
    metas = counts.get_many([keys[0], KEY, keys[1], keys[2]])
    assert [meta.key for meta in metas] == [keys[0], KEY, keys[1], keys[2]], "in the asked order"
    assert [meta.read_count for meta in metas] == [2, 2, 1, 4], "keys[1] has none: the default"
    assert [meta.stored for meta in metas] == [True, True, False, True]
    assert counts.get_many(keys) == metas[:1] + metas[2:], "all cached now: no request"


def test_keys_a_batch_leaves_unprocessed_are_asked_again_then_read_one_by_one(
    stubbed: Any, clock: Clock
) -> None:
    client, stubber = stubbed
    counts = make_counts(client, clock, [])
    keys = [ShardMetaKey.for_tenant("acme", f"acme#team{n}") for n in range(2)]
    stubber.add_response(
        "batch_get_item",
        {"Responses": {"tbl": [meta_item_of(keys[0], 2)]}, "UnprocessedKeys": batch_keys(keys[1])},
        {"RequestItems": batch_keys(*keys)},
    )
    for _ in range(shard_counts.UNPROCESSED_ATTEMPTS - 1):
        stubber.add_response(
            "batch_get_item",
            {"Responses": {"tbl": []}, "UnprocessedKeys": batch_keys(keys[1])},
            {"RequestItems": batch_keys(keys[1])},
        )
    stubber.add_client_error(
        "get_item", service_error_code="ThrottlingException", http_status_code=400,
        expected_params={
            "TableName": "tbl",
            "Key": {"PK": {"S": keys[1].partition}, "SK": {"S": keys[1].base}},
            "ConsistentRead": False,
        },
    )  # fmt: skip
    with pytest.raises(ClientError, match="ThrottlingException"):
        counts.get_many(keys)
    assert len(clock.sleeps) == shard_counts.UNPROCESSED_ATTEMPTS, "backed off between rounds"


def cancelled(stubber: Stubber, *codes: str) -> None:
    """A TransactWriteItems cancelled with one reason per operation, as DynamoDB answers."""
    stubber.add_client_error(
        "transact_write_items",
        service_error_code="TransactionCanceledException",
        response_meta={},
        modeled_fields={"CancellationReasons": [{"Code": code} for code in codes]},
    )


def labelled_put(counts: ShardCounts, label: str, *, sharded: bool) -> Operation[str]:
    """A put of ``item-1`` at `KEY`'s current count, growing `KEY` if `sharded`."""
    request = {"Put": {"TableName": "tbl", "Item": item_at(counts.get(KEY).shard_count)}}
    return Operation(request, label, (ShardedKey(counts, KEY),) if sharded else ())


def counter(label: str) -> Operation[str]:
    """An update of a fixed key: nothing to grow."""
    key = {"PK": {"S": "acme#counter"}, "SK": {"S": "n"}}
    check = {"TableName": "tbl", "Key": key, "ConditionExpression": "attribute_exists(PK)"}
    return Operation({"ConditionCheck": check}, label)


def test_a_throttled_transaction_grows_the_keys_it_names_and_is_built_again(
    stubbed: Any, clock: Clock
) -> None:
    client, stubber = stubbed
    events: list[GrowthEvent] = []
    counts = make_counts(client, clock, events, max_jitter_seconds=0.0)
    built: list[int] = []

    def build() -> Transaction[str, str]:
        built.append(counts.get(KEY).shard_count)
        return Transaction([counter("counter"), labelled_put(counts, "item", sharded=True)], "ok")

    expect_meta_read(stubber, None, consistent=False)
    cancelled(stubber, "None", "ThrottlingError")
    expect_meta_read(stubber, None, consistent=True)
    expect_growth(stubber, ShardMeta.initial(KEY, 1), int(NOW * 1000), 2)
    stubber.add_response("transact_write_items", {})

    assert transact_growing(client, build) == "ok"

    assert built == [1, 2], "the second attempt derives its keys from the grown count"
    assert [(e.old_count, e.new_count) for e in events] == [(1, 2)]


def test_a_throttle_on_fixed_keys_grows_nothing_and_names_its_operations(
    stubbed: Any, clock: Clock
) -> None:
    client, stubber = stubbed
    counts = make_counts(client, clock, [])
    expect_meta_read(stubber, None, consistent=False)
    cancelled(stubber, "ThrottlingError", "None")

    with pytest.raises(TransactionThrottledError, match="no sharded key") as raised:
        transact_growing(
            client,
            lambda: Transaction(
                [counter("counter"), labelled_put(counts, "item", sharded=True)], None
            ),
        )

    assert raised.value.labels == ("counter",)
    assert raised.value.keys == ()


def test_a_key_that_cannot_grow_further_ends_the_retries(stubbed: Any, clock: Clock) -> None:
    client, stubber = stubbed
    counts = make_counts(client, clock, [], max_count=2)
    expect_meta_read(stubber, meta_item((0, 1), (1, 2)), consistent=False)
    cancelled(stubber, "ThrottlingError")
    stubber.add_response("update_item", {})  # LastThrottled stamped: the cold check waits

    with pytest.raises(TransactionThrottledError, match=KEY.base) as raised:
        transact_growing(
            client, lambda: Transaction([labelled_put(counts, "item", sharded=True)], None)
        )

    assert raised.value.keys == (KEY,)
    assert isinstance(raised.value, WriteThrottledError), "one except clause catches both"


def test_growths_are_bounded_per_call(stubbed: Any, clock: Clock) -> None:
    client, stubber = stubbed
    counts = make_counts(client, clock, [], cooldown_seconds=0.0, max_jitter_seconds=0.0)
    expect_meta_read(stubber, None, consistent=False)
    cancelled(stubber, "ThrottlingError")
    expect_meta_read(stubber, None, consistent=True)
    expect_growth(stubber, ShardMeta.initial(KEY, 1), int(NOW * 1000), 2)
    cancelled(stubber, "ThrottlingError")

    with pytest.raises(TransactionThrottledError, match="throttled on"):
        transact_growing(
            client,
            lambda: Transaction([labelled_put(counts, "item", sharded=True)], None),
            growths=1,
        )

    assert counts.get(KEY).shard_count == 2


def test_a_failed_condition_wins_over_a_throttle(stubbed: Any, clock: Clock) -> None:
    client, stubber = stubbed
    counts = make_counts(client, clock, [])
    expect_meta_read(stubber, None, consistent=False)
    cancelled(stubber, "ConditionalCheckFailed", "ThrottlingError")

    with pytest.raises(TransactionCancelledError, match="ConditionalCheckFailed") as raised:
        transact_growing(
            client,
            lambda: Transaction(
                [counter("counter"), labelled_put(counts, "item", sharded=True)], None
            ),
        )

    failed = raised.value.first("ConditionalCheckFailed")
    assert failed is not None
    assert failed.label == "counter"
    assert [item.label for item in raised.value.cancellations] == ["counter", "item"]


def test_errors_other_than_a_cancellation_pass_through(stubbed: Any) -> None:
    client, stubber = stubbed
    stubber.add_client_error("transact_write_items", service_error_code="ValidationException")

    with pytest.raises(ClientError, match="ValidationException"):
        transact_growing(client, lambda: Transaction([counter("counter")], None))
