"""The mover of a halving writes at its pace (issue 38: "rate-limited so it never throttles
the tenant"), on DynamoDB Local behind a stand-in that throttles a partition past its
write units a second (`dynashard.testing.partition_capacity`), on a simulated clock that only the
pace's waits move. A halving of 2 shards to 1 moves about half of 40 two-unit items into
the partition the tenant keeps writing to."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pytest

from dynashard import GrowthPolicy, ShardCounts, ShardMetaKey, ShardMover, Table, sharded_key
from dynashard.keys.shards import calculated_shard
from dynashard.resharding import Pace
from dynashard.testing import PartitionCapacity
from dynashard.testing.dynamodb_local import SINGLE_TABLE

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

pytestmark = pytest.mark.integration
PK, SK = SINGLE_TABLE.partition_key, SINGLE_TABLE.sort_key
POLICY = GrowthPolicy(
    default_count=2, max_count=64, cooldown_seconds=0, max_jitter_seconds=0, cache_seconds=0
)
ITEMS = 40
PADDING = "x" * 1500
"""Two write units an item."""
PARTITION_UNITS = 20
"""The stand-in partition's write units a second (DynamoDB's 1,000, scaled down)."""
MOVER_UNITS = 10.0
TENANT_EVERY = 0.4
"""The tenant writes a two-unit item this often (5 units a second)."""
tenants = itertools.count()


@dataclass
class SimulatedTime:
    """A clock the pace's waits move, with the tenant's writes due meanwhile."""

    tenant_write: list[object] = field(default_factory=list)
    now: float = 0.0
    next_write: float = TENANT_EVERY
    writes: int = 0

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        until = self.now + seconds
        while self.tenant_write and self.next_write <= until:
            self.now = self.next_write
            self.tenant_write[0]()  # type: ignore[operator]
            self.writes += 1
            self.next_write += TENANT_EVERY
        self.now = until


@dataclass
class HalvedKey:
    """A tenant's key of 2 shards holding `ITEMS` items, just halved to 1."""

    client: DynamoDBClient
    table: str
    counts: ShardCounts
    key: ShardMetaKey
    written: itertools.count[int] = field(default_factory=itertools.count)

    @classmethod
    def make(cls, client: DynamoDBClient, table: str) -> HalvedKey:
        tenant = f"paced_{next(tenants)}"
        counts = ShardCounts(Table(client, table, SINGLE_TABLE), policy=POLICY)
        halved = cls(client, table, counts, ShardMetaKey.for_tenant(tenant, f"{tenant}#k"))
        for n in range(ITEMS):
            halved.put(client, f"item{n:03d}", count=2)
        counts.shrink(halved.key)
        return halved

    def put(self, client: DynamoDBClient, sort_key: str, count: int) -> None:
        shard = calculated_shard(self.key.base, sort_key, count)
        client.put_item(
            TableName=self.table,
            Item={
                PK: {"S": sharded_key(self.key.base, shard, count)},
                SK: {"S": sort_key},
                "version": {"N": "1"},
                "padding": {"S": PADDING},
            },
        )

    def tenant_writes_through(self, capacity: PartitionCapacity) -> None:
        """One write of the tenant's, at the count writers use now (1)."""
        self.put(capacity, f"new{next(self.written):03d}", count=1)  # type: ignore[arg-type]

    def mover(self, client: object, pace: Pace, page_size: int = 10) -> ShardMover:
        return ShardMover(
            self.counts, Table(client, self.table, SINGLE_TABLE), page_size=page_size,  # type: ignore[arg-type]
            move_after_seconds=0, pace=pace,
        )  # fmt: skip

    def upper_half(self) -> int:
        response = self.client.query(
            TableName=self.table,
            KeyConditionExpression="#pk = :pk",
            ExpressionAttributeNames={"#pk": PK},
            ExpressionAttributeValues={":pk": {"S": sharded_key(self.key.base, 1, 2)}},
            Select="COUNT",
        )
        return response["Count"]


@pytest.fixture
def halved(dynamodb: DynamoDBClient, module_table: str) -> HalvedKey:
    return HalvedKey.make(dynamodb, module_table)


def test_a_mover_at_its_client_s_speed_is_throttled_by_the_partition_it_fills(
    dynamodb: DynamoDBClient, halved: HalvedKey
) -> None:
    """What the pace is for: unpaced, the move takes the whole partition at once."""
    time = SimulatedTime()
    capacity = PartitionCapacity(dynamodb, PARTITION_UNITS, time.clock)
    unpaced = Pace(1e9, clock=time.clock, sleep=time.sleep)
    report = halved.mover(capacity, unpaced, page_size=ITEMS).step(halved.key)
    assert report.throttled, "a move at full speed is throttled"
    assert capacity.throttled
    assert unpaced.rate == 1e9 / 2, "and halves its pace"


def test_the_paced_mover_leaves_the_tenant_its_share_of_the_partition(
    dynamodb: DynamoDBClient, halved: HalvedKey
) -> None:
    time = SimulatedTime()
    capacity = PartitionCapacity(dynamodb, PARTITION_UNITS, time.clock)
    time.tenant_write.append(lambda: halved.tenant_writes_through(capacity))
    to_move = halved.upper_half()
    mover = halved.mover(capacity, Pace(MOVER_UNITS, clock=time.clock, sleep=time.sleep))
    reports = []
    while not (report := mover.step(halved.key)).settled:
        reports.append(report)
    assert not capacity.throttled, "no write of the tenant's or the mover's was refused"
    assert sum(report.moved for report in reports) == to_move > 0
    assert halved.upper_half() == 0
    assert time.writes > 10, "the tenant wrote all along"
    units = 4 * to_move  # a copy and a delete of two units each
    assert time.now >= units / MOVER_UNITS * 0.9, "the move took as long as its pace says"
    assert capacity.busiest <= PARTITION_UNITS


def test_a_mover_throttled_at_its_pace_slows_down_and_finishes(
    dynamodb: DynamoDBClient, halved: HalvedKey
) -> None:
    """A partition with less room than the pace (the tenant took it): the mover halves its
    rate on each refusal, resumes where it stopped, and the move still settles."""
    time = SimulatedTime()
    capacity = PartitionCapacity(dynamodb, 3, time.clock)
    pace = Pace(MOVER_UNITS, clock=time.clock, sleep=time.sleep)
    mover = halved.mover(capacity, pace)
    to_move = halved.upper_half()
    reports = []
    while not (report := mover.step(halved.key)).settled:
        reports.append(report)
    throttled = [report for report in reports if report.throttled]
    assert throttled, "the partition refused the mover's first pace"
    assert len(capacity.throttled) < to_move / 2, "most writes went through at the slower pace"
    assert pace.rate < MOVER_UNITS
    assert sum(report.moved for report in reports) == to_move
    assert halved.upper_half() == 0
