"""The mover of a halving: after a count went from 2N to N (`ShardCounts.shrink`), each item
of shards N..2N-1 is copied to ``h & (N-1)`` and then deleted where it was, a page at a
time, until a step finds the upper half empty and settles the metadata (readers then drop
to N shards). It moves nothing until `MOVE_AFTER_SECONDS` after the halving: a reader that
still holds the map from before it would trust a cursor's per-stream positions and miss
the items moved behind them. Where the sharded key is an index's partition key (`index`),
moving an item is one conditional update of that attribute on the table's item.

Every write is conditioned on the item's version attribute, so a concurrent update is
never overwritten with an old copy: the copy goes in only where there is none or an older
one, and the old item is deleted only if it is still the version copied. An update that
lands between the two makes the delete fail; the next step copies the newer version. A
point read meanwhile finds the item: it probes the old shard first (`ShardMeta.probe_shards`)
and the copy exists before the old one goes. A step is idempotent, so the mover resumes
after a crash at any point. It writes at its `Pace` (write units a second, 100 by default:
a tenth of the partition a halving to one shard writes into), and a write DynamoDB
throttles anyway ends the step and halves the pace: the tenant's writes come first.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from dynashard.handle import TableHandle
from dynashard.item import Item
from dynashard.keys.keys import sharded_key
from dynashard.keys.schema import IndexSchema
from dynashard.keys.shards import calculated_shard
from dynashard.resharding.moves import RegisteredMove, unregister
from dynashard.resharding.pace import Pace, write_units
from dynashard.resharding.shard_counts import ShardCounts
from dynashard.resharding.shard_meta import MOVE_AFTER_SECONDS, ShardMeta, ShardMetaKey
from dynashard.throttling.codes import error_code, is_throttling

if TYPE_CHECKING:
    pass


STOP_SECONDS = 10.0
"""A scheduled mover stops stepping with this much of its invocation left."""


@dataclass(frozen=True)
class MoveReport:
    """What one step did."""

    moved: int
    """Items copied to their new shard and deleted from the old one."""
    changed: int
    """Items updated while they were moved: taken again by the next step."""
    settled: bool
    """The upper half was empty: the metadata no longer moves, readers cover the count."""
    throttled: bool = False
    """DynamoDB throttled a read or a write: the step ended there and the pace slowed."""

    @property
    def waiting(self) -> bool:
        """Too soon to move or to settle (`MOVE_AFTER_SECONDS`): a later step does it."""
        return not (self.moved or self.changed or self.settled or self.throttled)


@dataclass(frozen=True)
class ShardMover:
    """Moves the items a halving stranded, for base keys of one table."""

    counts: ShardCounts
    table: TableHandle
    version_attribute: str = "version"
    """A number every item carries and every update raises (items without it count as 0);
    unused where the key is an index's (its one update is conditioned on the old key)."""
    page_size: int = 100
    index: IndexSchema | None = None
    """The index whose partition key is sharded, if it is not the table's."""
    hashed: str | None = None
    """The string attribute an item's shard is the hash of (the sort key if None)."""
    move_after_seconds: float = MOVE_AFTER_SECONDS
    """Nothing moves or settles sooner after the halving: no process may still act on the
    map from before it (its readers would miss moved items; its writers, writing to the
    upper half, would strand theirs). Shorter only where every reader's cache and request
    are (a test's single process)."""
    clock: Callable[[], float] = time.time
    pace: Pace = field(default_factory=Pace)
    """Write units a second across every step that shares this pace (`run_moves` does)."""

    def step(self, key: ShardMetaKey) -> MoveReport:
        """Move up to `page_size` items of each vacated shard; settle when none is left."""
        meta = self.counts.refresh(key)
        if meta.moving_from is None:  # settled, or ended by a doubling back
            unregister(self.table, key)
            return MoveReport(0, 0, settled=True)
        if self.clock() * 1000 - meta.last_updated < self.move_after_seconds * 1000:
            return MoveReport(0, 0, settled=False)
        moved = changed = 0
        found = False
        try:
            for shard in range(meta.shard_count, meta.moving_from):
                if shard > meta.shard_count and self.counts.refresh(key) != meta:
                    return MoveReport(moved, changed, settled=False)  # doubled back: stop
                for item in self._page(sharded_key(key.base, shard, meta.moving_from)):
                    found = True
                    if self._move(key.base, meta, item):
                        moved += 1
                    else:
                        changed += 1
        except ClientError as error:
            if not is_throttling(error):
                raise
            self.pace.throttled()
            return MoveReport(moved, changed, settled=False, throttled=True)
        if found:
            return MoveReport(moved, changed, settled=False)
        self.counts.settle(meta)
        return MoveReport(moved, changed, settled=True)

    def _page(self, partition: str) -> list[Item]:
        where = {"TableName": self.table.name, "ConsistentRead": True}
        if self.index is not None:  # an index is read eventually consistent
            where = {"TableName": self.table.name, "IndexName": self.index.name}
        response = self.table.client.query(
            **where,  # type: ignore[arg-type]
            KeyConditionExpression="#pk = :pk",
            ExpressionAttributeNames={"#pk": self._sharded_attribute()},
            ExpressionAttributeValues={":pk": {"S": partition}},
            Limit=self.page_size,
        )
        return list(response.get("Items", []))

    def _sharded_attribute(self) -> str:
        return self.table.schema.partition_key if self.index is None else self.index.partition_key

    def _target(self, base: str, meta: ShardMeta, item: Item) -> str:
        """The item's partition under the current count."""
        sort_key = self.table.schema.sort_key if self.index is None else self.index.sort_key
        count, value = meta.shard_count, item[self.hashed or sort_key]["S"]
        return sharded_key(base, calculated_shard(base, value, count), count)

    def _move(self, base: str, meta: ShardMeta, item: Item) -> bool:
        """Move `item` to its shard under the current count; False if it changed meanwhile
        (the next step takes it again)."""
        target = self._target(base, meta, item)
        if self.index is not None:
            return self._reindex(item, target)
        pk, sk = self.table.schema.partition_key, self.table.schema.sort_key
        version = item.get(self.version_attribute, {"N": "0"})
        self._write(  # refused: the new shard holds this version or a newer one already
            "put_item",
            Item={**item, pk: {"S": target}},
            ConditionExpression="attribute_not_exists(#pk) OR #v < :v",
            ExpressionAttributeNames={"#pk": pk, "#v": self.version_attribute},
            ExpressionAttributeValues={":v": version},
        )
        unchanged = "#v = :v" if self.version_attribute in item else "attribute_not_exists(#v)"
        return self._write(
            "delete_item",
            Key={pk: item[pk], sk: item[sk]},
            ConditionExpression=unchanged,
            ExpressionAttributeNames={"#v": self.version_attribute},
            **({"ExpressionAttributeValues": {":v": version}} if ":v" in unchanged else {}),
        )

    def _reindex(self, item: Item, target: str) -> bool:
        """Point the item's index key at `target`, if it is still where the index showed it."""
        pk, sk, attribute = (
            self.table.schema.partition_key,
            self.table.schema.sort_key,
            self._sharded_attribute(),
        )
        return self._write(
            "update_item",
            Key={pk: item[pk], sk: item[sk]},
            UpdateExpression="SET #ipk = :target",
            ConditionExpression="#ipk = :seen",
            ExpressionAttributeNames={"#ipk": attribute},
            ExpressionAttributeValues={":target": {"S": target}, ":seen": item[attribute]},
        )

    def _write(self, operation: str, **request: Any) -> bool:
        """One conditional write at the pace; False if its condition failed.

        The pace is taken before the write for the table's own write units (an estimate
        from the item's size) and charged after it for what DynamoDB reports it consumed,
        indexes included.
        """
        item = request.get("Item") or request["Key"]
        estimate = write_units(item)
        self.pace.take(estimate)
        try:
            answer = getattr(self.table.client, operation)(
                TableName=self.table.name, ReturnConsumedCapacity="TOTAL", **request
            )
        except ClientError as error:
            if error_code(error) == "ConditionalCheckFailedException":
                return False
            raise
        consumed = answer.get("ConsumedCapacity", {}).get("CapacityUnits")
        if consumed is not None:
            self.pace.charge(float(consumed) - estimate)
        return True


StepHook = Callable[[RegisteredMove, MoveReport], None]


def run_moves(
    mover: ShardMover,
    moves: list[RegisteredMove],
    time_left: Callable[[], float],
    on_step: StepHook,
) -> list[RegisteredMove]:
    """Step each of `moves` (`registered_moves`) in turn, oldest first, while `time_left()`
    (seconds) stays above `STOP_SECONDS`, reporting each step; the moves not settled."""
    unsettled, running = list(moves), list(moves)
    while running and time_left() > STOP_SECONDS:
        for move in list(running):
            how = replace(
                mover, version_attribute=move.spec.version_attribute,
                index=move.spec.index, hashed=move.spec.hashed,
            )  # fmt: skip
            report = how.step(move.key)
            on_step(move, report)
            if report.settled or report.waiting:  # waiting: a later run settles it
                running.remove(move)
            if report.settled:
                unsettled.remove(move)
            if time_left() <= STOP_SECONDS:
                break
    return unsettled
