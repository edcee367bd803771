"""A shard count halved online (issue 38, point 2, in `dynashard`), on DynamoDB Local: a
base key of 8 shards goes to 4 while its items are read, updated and created, and the
mover's steps (some with an update landing between a copy and its delete) interleave
with them in an order hypothesis chooses. Throughout, every item is found by a point read
at its latest version and listed by a reader covering `read_count` shards; at the end the
upper half is empty, every item sits where 4 shards put it, and readers cover 4."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dynashard import (
    CursorCodec,
    FanOutEngine,
    FanOutQuery,
    GrowthPolicy,
    PartitionStream,
    ShardCounts,
    ShardMetaKey,
    ShardMover,
    Table,
    admin,
    calculated_shard,
    find_item,
    shard_keys,
    sharded_key,
)
from dynashard.errors import ShardMetadataError
from dynashard.resharding import (
    MOVE_AFTER_SECONDS,
    MoveReport,
    RegisteredMove,
    ShardMeta,
    registered_moves,
    run_moves,
)
from dynashard.testing.dynamodb_local import SINGLE_TABLE

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

pytestmark = pytest.mark.integration
ITEMS, BEFORE, AFTER = 12, 8, 4
POLICY = GrowthPolicy(
    default_count=BEFORE, max_count=64, cooldown_seconds=0, max_jitter_seconds=0, cache_seconds=0
)
PK, SK = SINGLE_TABLE.partition_key, SINGLE_TABLE.sort_key
tenants = itertools.count()


class UpdateBetweenCopyAndDelete:
    """The mover's client, updating the item it just copied where it was, before the delete
    goes out (a writer that found it there a moment before the copy)."""

    def __init__(self, client: DynamoDBClient, update: Callable[[str], None]) -> None:
        self._client, self._update = client, update
        self.exceptions = client.exceptions

    def put_item(self, **request: Any) -> Any:
        answer = self._client.put_item(**request)
        self._update(request["Item"][SK]["S"])
        return answer

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


@dataclass
class Key:
    """One base key's items on the table, and what the test knows of them."""

    client: DynamoDBClient
    table: str
    counts: ShardCounts
    key: ShardMetaKey
    versions: dict[str, int] = field(default_factory=dict)

    def create(self, sort_key: str) -> None:
        count = self.counts.get(self.key).shard_count
        shard = calculated_shard(self.key.base, sort_key, count)
        self.client.put_item(
            TableName=self.table,
            Item={
                PK: {"S": sharded_key(self.key.base, shard, count)},
                SK: {"S": sort_key},
                "version": {"N": "1"},
            },
            ConditionExpression="attribute_not_exists(#pk)",
            ExpressionAttributeNames={"#pk": PK},
        )
        self.versions[sort_key] = 1

    def find(self, sort_key: str) -> dict[str, Any] | None:
        read_count = self.counts.get(self.key).read_count

        def read(shard: int) -> dict[str, Any] | None:
            key = {PK: {"S": sharded_key(self.key.base, shard, read_count)}, SK: {"S": sort_key}}
            item = self.client.get_item(TableName=self.table, Key=key, ConsistentRead=True)
            return item.get("Item")

        return find_item(self.counts, self.key, self.key.base, sort_key, read)

    def update(self, sort_key: str) -> None:
        """Where a point read finds it, conditioned on the version it read."""
        found = self.find(sort_key)
        assert found is not None, f"{sort_key} not found"
        self._raise_version(found[PK]["S"], sort_key, found["version"])

    def update_where_it_was(self, sort_key: str) -> None:
        """At its shard under the old count, as a writer that found it there before."""
        shard = calculated_shard(self.key.base, sort_key, BEFORE)
        version = {"N": str(self.versions[sort_key])}
        self._raise_version(sharded_key(self.key.base, shard, BEFORE), sort_key, version)

    def _raise_version(self, partition: str, sort_key: str, seen: dict[str, str]) -> None:
        self.client.update_item(
            TableName=self.table,
            Key={PK: {"S": partition}, SK: {"S": sort_key}},
            UpdateExpression="SET version = version + :one",
            ConditionExpression="version = :seen",
            ExpressionAttributeValues={":one": {"N": "1"}, ":seen": seen},
        )
        self.versions[sort_key] += 1

    def listed(self) -> dict[str, list[int]]:
        """Each sort key a reader covering `read_count` shards sees, with its copies'
        shards."""
        seen: dict[str, list[int]] = {}
        for shard in range(self.counts.get(self.key).read_count):
            partition = sharded_key(self.key.base, shard, BEFORE)
            items = self.client.query(
                TableName=self.table, KeyConditionExpression="#pk = :pk",
                ExpressionAttributeNames={"#pk": PK},
                ExpressionAttributeValues={":pk": {"S": partition}}, ConsistentRead=True,
            )["Items"]  # fmt: skip
            for item in items:
                seen.setdefault(item[SK]["S"], []).append(shard)
        return seen

    def check(self) -> None:
        listed = self.listed()
        assert set(listed) == set(self.versions), "every item listed, nothing else"
        assert all(len(shards) <= 2 for shards in listed.values()), "a copy and its original"
        for sort_key, version in self.versions.items():
            found = self.find(sort_key)
            assert found is not None
            assert int(found["version"]["N"]) == version, f"{sort_key}: a stale copy read"


OPERATIONS = st.lists(
    st.sampled_from(["step", "step with an update", "update", "create", "check", "page"]),
    max_size=30,
)


@dataclass
class Walk:
    """A list of the key's items walked a page at a time, with the cursor, over the shards
    readers cover when each page is read (the copy and its original deduplicated)."""

    engine: FanOutEngine
    key: Key
    cursor: str | None = None
    seen: list[str] = field(default_factory=list)
    done: bool = False

    def page(self) -> None:
        if self.done:
            return
        meta = self.key.counts.get(self.key.key)
        read_count = meta.read_count
        streams = [
            PartitionStream(self.key.table, PK, pk, SK)
            for pk in shard_keys(self.key.key.base, read_count)
        ]
        page = self.engine.page(
            FanOutQuery(
                streams,
                "walk",
                limit=3,
                identity=lambda item: item[SK]["S"],
                cursor=self.cursor,
                items_moving=meta.moving_from is not None,
            )
        )
        self.seen += [item[SK]["S"] for item in page.items]
        self.cursor, self.done = page.next_cursor, not page.has_more

    def finish(self) -> list[str]:
        while not self.done:
            self.page()
        return self.seen


@pytest.mark.slow
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations=OPERATIONS, picks=st.randoms(use_true_random=False))
def test_a_halving_moves_every_item_once_and_nothing_reads_a_stale_copy(
    dynamodb: DynamoDBClient,
    halving_table: str,
    fanout: FanOutEngine,
    operations: list[str],
    picks: Any,
) -> None:
    tenant = f"tenant_{next(tenants)}"
    counts = ShardCounts(Table(dynamodb, halving_table, SINGLE_TABLE), policy=POLICY)
    key = Key(dynamodb, halving_table, counts, ShardMetaKey.for_tenant(tenant, f"{tenant}#k"))
    for n in range(ITEMS):
        key.create(f"item{n:03d}")
    walk = Walk(fanout, key)
    walk.page()  # a cursor made before the halving
    counts.shrink(key.key)
    created = itertools.count(ITEMS)
    mover = ShardMover(
        counts, Table(dynamodb, halving_table, SINGLE_TABLE), "version", page_size=2,
        move_after_seconds=0,
    )  # fmt: skip
    racing_client = cast(
        "DynamoDBClient", UpdateBetweenCopyAndDelete(dynamodb, key.update_where_it_was)
    )
    racing = ShardMover(
        counts, Table(racing_client, halving_table, SINGLE_TABLE), "version", page_size=1,
        move_after_seconds=0,
    )  # fmt: skip
    for operation in operations:
        if operation == "step":
            mover.step(key.key)
        elif operation == "step with an update":
            racing.step(key.key)
        elif operation == "update":
            key.update(picks.choice(sorted(key.versions)))
        elif operation == "create":
            key.create(f"item{next(created):03d}")
        elif operation == "page":
            walk.page()
        key.check()
    while not mover.step(key.key).settled:
        key.check()
    meta = counts.refresh(key.key)
    assert (meta.shard_count, meta.read_count, meta.moving_from) == (AFTER, AFTER, None)
    listed = key.listed()
    where = {sk: [calculated_shard(key.key.base, sk, AFTER)] for sk in listed}
    assert listed == where, "each item once, where 4 shards put it"
    key.check()
    walked = walk.finish()
    assert walked == sorted(set(walked)), "the walk: each item once, in order"
    assert {f"item{n:03d}" for n in range(ITEMS)} <= set(walked), "none missed"


def test_a_count_of_one_or_a_halving_still_moving_is_not_halved(
    dynamodb: DynamoDBClient, halving_table: str
) -> None:
    counts = ShardCounts(Table(dynamodb, halving_table, SINGLE_TABLE), policy=POLICY)
    key = ShardMetaKey.for_tenant("tenant_x", "tenant_x#k")
    counts.shrink(key)
    with pytest.raises(ShardMetadataError, match="still moving"):
        counts.shrink(key)
    single = ShardCounts(
        Table(dynamodb, halving_table, SINGLE_TABLE), policy=GrowthPolicy(default_count=1)
    )
    with pytest.raises(ShardMetadataError, match="count of 1"):
        single.shrink(ShardMetaKey.for_tenant("tenant_y", "tenant_y#k"))


def test_nothing_moves_or_settles_until_every_cached_map_has_lapsed(
    dynamodb: DynamoDBClient, halving_table: str
) -> None:
    """A process that cached the old count may still act on it for its cache's lifetime
    and one request: a reader would miss items moved behind a cursor, a writer may still
    write to the upper half. A step sooner waits, and `run_moves` leaves the move to a
    later run."""
    now = [1_800_000_000.0]
    counts = ShardCounts(
        Table(dynamodb, halving_table, SINGLE_TABLE), policy=POLICY, clock=lambda: now[0]
    )
    key = ShardMetaKey.for_tenant("tenant_w", "tenant_w#k")
    counts.shrink(key)
    mover = ShardMover(counts, Table(dynamodb, halving_table, SINGLE_TABLE), clock=lambda: now[0])
    early = mover.step(key)
    assert (early.settled, early.waiting) == (False, True)
    assert run_moves(mover, registered(dynamodb, halving_table, key), lambda: 60.0, _ignored) == [
        *registered(dynamodb, halving_table, key)
    ], "still registered, not stepped again in this run"
    now[0] += MOVE_AFTER_SECONDS
    assert mover.step(key).settled
    assert counts.refresh(key).moving_from is None


def registered(dynamodb: DynamoDBClient, table: str, key: ShardMetaKey) -> list[RegisteredMove]:
    return [
        move for move in registered_moves(Table(dynamodb, table, SINGLE_TABLE)) if move.key == key
    ]


def _ignored(move: RegisteredMove, report: MoveReport) -> None:
    """A step hook that keeps nothing."""


def test_doubling_back_during_a_move_ends_it(dynamodb: DynamoDBClient, halving_table: str) -> None:
    counts = ShardCounts(Table(dynamodb, halving_table, SINGLE_TABLE), policy=POLICY)
    key = ShardMetaKey.for_tenant("tenant_z", "tenant_z#k")
    halved = counts.shrink(key)
    grown = counts.grow(key, halved)
    assert (grown.shard_count, grown.moving_from, grown.read_count) == (BEFORE, None, BEFORE)
    assert counts.refresh(key).moving_from is None


@pytest.fixture(scope="module")
def fanout(dynamodb: DynamoDBClient) -> Iterator[FanOutEngine]:
    with FanOutEngine(dynamodb, CursorCodec(b"k" * 32), max_workers=8) as running:
        yield running


@pytest.fixture(scope="module")
def halving_table(module_table: str) -> str:
    return module_table


def test_the_admin_command_halves_a_key_and_moves_its_items(
    dynamodb: DynamoDBClient, halving_table: str, dynamodb_endpoint: str, capsys: Any
) -> None:
    counts = ShardCounts(Table(dynamodb, halving_table, SINGLE_TABLE), policy=POLICY)
    key = Key(dynamodb, halving_table, counts, ShardMetaKey.for_tenant("tenant_c", "tenant_c#k"))
    for n in range(ITEMS):
        key.create(f"item{n:03d}")
    where = ["--table", halving_table, "--tenant", "tenant_c", "--base", "tenant_c#k",
             "--default-count", str(BEFORE), "--endpoint", dynamodb_endpoint,
             "--region", "us-east-1", "--page-size", "3", "--pause", "0",
             "--move-after", "0"]  # fmt: skip
    assert admin.main(["shrink", *where]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert (lines[0]["count"], lines[0]["moving_from"]) == (AFTER, BEFORE)
    assert sum(line["step"]["moved"] for line in lines[1:-1]) == len(
        [sk for sk in key.versions if calculated_shard(key.key.base, sk, BEFORE) >= AFTER]
    ), "each item of the upper half moved once"
    assert (lines[-1]["count"], lines[-1]["read_count"], lines[-1]["moving_from"]) == (4, 4, None)
    key.check()


class DoubledBackMeanwhile(ShardCounts):
    """A mover's counts whose second read of the map finds it doubled back by a writer."""

    def __init__(self, client: DynamoDBClient, table: str) -> None:
        super().__init__(Table(client, table, SINGLE_TABLE), policy=POLICY)
        self.writer = ShardCounts(Table(client, table, SINGLE_TABLE), policy=POLICY)
        self.reads = 0

    def refresh(self, key: ShardMetaKey) -> ShardMeta:
        self.reads += 1
        if self.reads == 2:
            self.writer.grow(key, self.writer.refresh(key))
        return super().refresh(key)


def test_a_step_stops_at_the_next_shard_once_a_doubling_back_ended_its_move(
    dynamodb: DynamoDBClient, halving_table: str
) -> None:
    """A doubling back ends a move; a step that began before it re-reads the map before
    each shard it pages and stops, so it moves no item behind a list that trusts the
    doubled count."""
    counts = DoubledBackMeanwhile(dynamodb, halving_table)
    key = Key(dynamodb, halving_table, counts, ShardMetaKey.for_tenant("tenant_d", "tenant_d#k"))
    for n in range(ITEMS):
        key.create(f"item{n:03d}")
    counts.shrink(key.key)
    counts.reads = 0
    mover = ShardMover(counts, Table(dynamodb, halving_table, SINGLE_TABLE), move_after_seconds=0)
    report = mover.step(key.key)
    first = [s for s in key.versions if calculated_shard(key.key.base, s, BEFORE) == AFTER]
    assert 0 < len(first) < len(key.versions) - 1, "items in the first shard and the others"
    assert (report.moved, report.settled) == (len(first), False), "the first shard only"
    meta = counts.refresh(key.key)
    assert (meta.shard_count, meta.moving_from) == (BEFORE, None), "doubled back"
    for sort_key, shards in key.listed().items():
        if sort_key not in first:
            assert shards == [calculated_shard(key.key.base, sort_key, BEFORE)], "not moved"
    key.check()
    assert mover.step(key.key).settled, "the move is over"
