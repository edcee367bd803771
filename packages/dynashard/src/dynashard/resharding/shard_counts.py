"""Dynamic shard counts: read them through a short cache, grow them by doubling on hot keys.

Growth is the AWS Database Blog's dynamic sharding mechanism adapted to calculated shards:
a throttled writer waits a random moment (so a crowd of throttled writers does not
stampede), re-reads the metadata, and doubles the count with an ``UpdateItem`` conditioned
on ``LastUpdated`` (optimistic locking), at most once per cooldown and never above a maximum.
A writer that loses the race takes the winner's count instead.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any, cast

from boto3.dynamodb.types import TypeSerializer
from botocore.exceptions import ClientError

from dynashard.handle import TableHandle
from dynashard.item import Item
from dynashard.keys.shards import validate_shard_count
from dynashard.resharding.counted import counted_entry, counted_entry_key
from dynashard.resharding.moves import MoveSpec, registration, registration_key
from dynashard.resharding.shard_meta import ShardMeta, ShardMetaKey
from dynashard.throttling.codes import cancellation_codes, error_code, is_throttling

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import TransactWriteItemTypeDef, UpdateTypeDef

_logger = logging.getLogger("dynashard.growth")
_serializer = TypeSerializer()


@dataclass(frozen=True)
class GrowthPolicy:
    """When and how far shard counts grow, and how long readers trust a cached count."""

    default_count: int = 1
    max_count: int = 64
    cooldown_seconds: float = 30.0
    max_jitter_seconds: float = 0.5
    cache_seconds: float = 5.0

    def __post_init__(self) -> None:
        validate_shard_count(self.default_count)
        validate_shard_count(self.max_count)
        if self.default_count > self.max_count:
            raise ValueError(
                f"default_count {self.default_count} is above max_count {self.max_count}"
            )
        for name in ("cooldown_seconds", "max_jitter_seconds", "cache_seconds"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0")

    def allows_growth(self, meta: ShardMeta, now: float) -> bool:
        """Whether `meta` may double at `now` (epoch seconds): below the maximum, cooldown over."""
        return (
            meta.shard_count < self.max_count
            and now * 1000 - meta.last_updated >= self.cooldown_seconds * 1000
        )


@dataclass(frozen=True)
class GrowthEvent:
    """One change of a count (a doubling, or a halving), as reported to the growth hook."""

    partition: str
    base: str
    old_count: int
    new_count: int
    at: int
    jitter_seconds: float


GrowthHook = Callable[[GrowthEvent], None]


def log_growth(event: GrowthEvent) -> None:
    """Default hook: one JSON log line per change on the ``dynashard.growth`` logger."""
    change = "shard_count_grew" if event.new_count > event.old_count else "shard_count_halved"
    _logger.warning(json.dumps({"event": change, **asdict(event)}))


MAX_CACHED = 10_000
"""Cached keys per process at most (each entry is a few hundred bytes)."""
BATCH_KEYS = 100
"""Keys one ``BatchGetItem`` may ask for."""
UNPROCESSED_ATTEMPTS = 4
"""Rounds of a batch read's unprocessed keys (throttled), with back-off, before the rest
are read one by one."""


class ShardCounts:
    """Shard metadata of base keys in one single table, cached per process (thread-safe)."""

    def __init__(
        self,
        table: TableHandle,
        *,
        policy: GrowthPolicy | None = None,
        on_growth: GrowthHook = log_growth,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self._client, self._table_name, self._schema = table.client, table.name, table.schema
        self.policy = policy or GrowthPolicy()
        self._on_growth = on_growth
        self._clock = clock
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._cache: dict[ShardMetaKey, tuple[float, ShardMeta]] = {}
        self._lock = threading.Lock()

    def get(self, key: ShardMetaKey) -> ShardMeta:
        """The metadata of `key`, from the cache while it is younger than ``cache_seconds``."""
        with self._lock:
            cached = self._cache.get(key)
        if cached and self._clock() < cached[0]:
            return cached[1]
        return self._read(key, consistent=False)

    def get_many(self, keys: Sequence[ShardMetaKey]) -> list[ShardMeta]:
        """The metadata of each of `keys`, in order: the cached ones, and the others in one
        ``BatchGetItem`` a hundred keys (a list over many base keys reads their counts in
        one round trip, not one each)."""
        now = self._clock()
        with self._lock:
            found = {
                key: cached[1]
                for key in keys
                if (cached := self._cache.get(key)) is not None and now < cached[0]
            }
        missing = list(dict.fromkeys(key for key in keys if key not in found))
        for start in range(0, len(missing), BATCH_KEYS):
            found |= self._read_batch(missing[start : start + BATCH_KEYS])
        return [found[key] for key in keys]

    def _read_batch(self, keys: list[ShardMetaKey]) -> dict[ShardMetaKey, ShardMeta]:
        """`keys`' metadata by ``BatchGetItem`` (eventually consistent, as `get` reads).
        Keys left unprocessed (throttled) are asked again with back-off, then read one by
        one, so a throttle still surfaces as a read's own error."""
        pk, sk = self._schema.partition_key, self._schema.sort_key
        by_key = {(key.partition, key.base): key for key in keys}
        asked: list[Item] = [key.table_key(pk, sk) for key in keys]
        read: dict[ShardMetaKey, ShardMeta] = {}
        for attempt in range(UNPROCESSED_ATTEMPTS):
            response = self._client.batch_get_item(RequestItems={self._table_name: {"Keys": asked}})
            for item in response.get("Responses", {}).get(self._table_name, []):
                key = by_key[(item[pk]["S"], item[sk]["S"])]
                read[key] = ShardMeta.from_item(key, item)
            unprocessed = response.get("UnprocessedKeys", {}).get(self._table_name)
            if not unprocessed:
                break
            asked = list(unprocessed["Keys"])
            self._sleep(min(1.0, 0.05 * 2**attempt) * self._rng.random())
        else:
            for item in asked:
                key = by_key[(item[pk]["S"], item[sk]["S"])]
                read[key] = self._read(key, consistent=False)
        for key in keys:
            if key not in read:  # no item: the default count
                read[key] = ShardMeta.initial(key, self.policy.default_count)
            self.remember(read[key])
        return read

    def items_may_move(self, meta: ShardMeta) -> bool:
        """`ShardMeta.items_may_move` now, by this process's clock."""
        return meta.items_may_move(self._clock())

    def get_for_write(self, key: ShardMetaKey) -> ShardMeta:
        """The metadata a writer uses: the cached one if it was stored, else a strongly
        consistent read (a key without metadata may be getting its first right now, and an
        item written at the default count would then be where no reader looks)."""
        with self._lock:
            cached = self._cache.get(key)
        if cached and cached[1].stored and self._clock() < cached[0]:
            return cached[1]
        return self.refresh(key)

    def refresh(self, key: ShardMetaKey) -> ShardMeta:
        """The metadata of `key` by a strongly consistent read, bypassing the cache."""
        return self._read(key, consistent=True)

    def grow(self, key: ShardMetaKey, seen: ShardMeta) -> ShardMeta:
        """Double the count of `key` if `seen` is still current; returns the count to use now.

        Returns `seen` unchanged at the maximum or within the cooldown, and the stored
        metadata when another writer changed it first (lost race) or the metadata
        partition itself is throttled.
        """
        if seen.shard_count >= self.policy.max_count:
            self._mark_throttled(key, seen)
        if not self.policy.allows_growth(seen, self._clock()):
            return seen
        jitter = self._rng.uniform(0, self.policy.max_jitter_seconds)
        self._sleep(jitter)
        try:
            current = self.refresh(key)
            if current.history != seen.history:
                return current
            grown = current.doubled(int(self._clock() * 1000))
            self._store(current, grown)
        except ClientError as error:
            if is_throttling(error) or _cancelled_by(error, "ThrottlingError"):
                return seen
            if not _cancelled_by(error, "ConditionalCheckFailed"):
                raise
            return self.refresh(key)
        self._changed(seen, grown, jitter)
        return grown

    def _read(self, key: ShardMetaKey, *, consistent: bool) -> ShardMeta:
        response = self._client.get_item(
            TableName=self._table_name,
            Key=key.table_key(self._schema.partition_key, self._schema.sort_key),
            ConsistentRead=consistent,
        )
        item = response.get("Item")
        meta = (
            ShardMeta.from_item(key, item)
            if item
            else ShardMeta.initial(key, self.policy.default_count)
        )
        self.remember(meta)
        return meta

    def remember(self, meta: ShardMeta) -> None:
        """Cache `meta` (read, or about to be written in the caller's transaction); the
        cache holds at most `MAX_CACHED` keys, so a long-lived process that meets many keys
        (every participant) does not grow without bound."""
        now = self._clock()
        with self._lock:
            self._cache.pop(meta.key, None)  # re-insert: dict order is insertion order
            self._cache[meta.key] = (now + self.policy.cache_seconds, meta)
            if len(self._cache) > MAX_CACHED:
                for key in [k for k, (expires, _) in self._cache.items() if expires <= now]:
                    del self._cache[key]
            while len(self._cache) > MAX_CACHED:
                del self._cache[next(iter(self._cache))]  # the longest unrefreshed

    def _first_put(self, meta: ShardMeta) -> dict[str, Any]:
        """A transaction's Put of `meta` as a key's first metadata (refused if it has some)."""
        key = meta.key.table_key(self._schema.partition_key, self._schema.sort_key)
        values = {name: _serializer.serialize(value) for name, value in meta.attributes().items()}
        return {
            "Put": {
                "TableName": self._table_name,
                "Item": key | values,
                "ConditionExpression": "attribute_not_exists(#pk)",
                "ExpressionAttributeNames": {"#pk": self._schema.partition_key},
            }
        }

    def put_first(self, meta: ShardMeta) -> ShardMeta:
        """Write `meta` as its key's first metadata, unless it has some; what is stored."""
        operations = [self._first_put(meta)]
        if meta.shard_count > 1:
            operations.append(
                {"Put": {"TableName": self._table_name, "Item": self._counted(meta.key)}}
            )
        try:
            self._client.transact_write_items(TransactItems=operations)  # type: ignore[arg-type]
        except ClientError as error:
            if error_code(error) != "TransactionCanceledException":
                raise
            return self.refresh(meta.key)  # it had some
        self.remember(meta)
        return meta

    def shrink(self, key: ShardMetaKey, spec: MoveSpec | None = None) -> ShardMeta:
        """Halve the count of `key` now (a command, or a cold key): writers use half at
        once; readers cover the old count until `dynashard.resharding.mover` has moved the
        items of the upper half and called `settle`. The move is registered
        (`dynashard.resharding.moves`, with `spec`) in the same transaction, for a scheduled
        mover to find. `ShardMetadataError` at a count of 1 or while an earlier halving still
        moves; a cancelled transaction if another process changed the count meanwhile."""
        current = self.refresh(key)
        halved = current.halved(int(self._clock() * 1000))
        register = registration(self._schema, key, spec or MoveSpec(), halved.last_updated)
        self._client.transact_write_items(
            TransactItems=[
                {"Update": cast("UpdateTypeDef", self._store_request(current, halved))},
                {"Put": {"TableName": self._table_name, "Item": register}},
            ]
        )
        self._changed(current, halved, 0.0)
        return halved

    def _changed(self, before: ShardMeta, after: ShardMeta, jitter: float) -> None:
        """Cache the stored change and report it to the hook (a growth or a halving)."""
        self.remember(after)
        self._on_growth(
            GrowthEvent(
                partition=after.key.partition,
                base=after.key.base,
                old_count=before.shard_count,
                new_count=after.shard_count,
                at=after.last_updated,
                jitter_seconds=jitter,
            )
        )

    def settle(self, seen: ShardMeta) -> ShardMeta:
        """End `seen`'s move (its items are all where the current count puts them): readers
        drop to the current count, and the move's registration goes, in one transaction
        conditioned on nothing having changed since `seen`."""
        settled = seen.settled()
        unregister = registration_key(self._schema, seen.key)
        operations: list[TransactWriteItemTypeDef] = [
            {"Update": cast("UpdateTypeDef", self._store_request(seen, settled))},
            {"Delete": {"TableName": self._table_name, "Key": unregister}},
        ]
        if settled.shard_count == 1:  # no longer counted above one shard
            uncount = counted_entry_key(self._schema, seen.key)
            operations.append({"Delete": {"TableName": self._table_name, "Key": uncount}})
        self._client.transact_write_items(TransactItems=operations)
        self.remember(settled)
        return settled

    def _store(self, before: ShardMeta, after: ShardMeta) -> None:
        """Write a growth `after` if the stored metadata is still `before` (optimistic
        lock), listing its key as counted above one shard in the same transaction."""
        self._client.transact_write_items(
            TransactItems=[
                {"Update": cast("UpdateTypeDef", self._store_request(before, after))},
                {"Put": {"TableName": self._table_name, "Item": self._counted(after.key)}},
            ]
        )

    def _counted(self, key: ShardMetaKey) -> Item:
        return counted_entry(self._schema, key)

    def _mark_throttled(self, key: ShardMetaKey, seen: ShardMeta) -> None:
        """Stamp a throttle at the maximum count (the cold check waits past it), at most
        once a cooldown: skipped while `seen` has a recent stamp, and conditioned on the
        stored one being older, so a crowd of throttled writers makes one write."""
        now = int(self._clock() * 1000)
        stale = now - int(self.policy.cooldown_seconds * 1000)
        seen = self.get(key) if seen.stored else seen  # the cache has this process's stamp
        if not seen.stored or seen.last_throttled > stale:
            return
        try:
            self._client.update_item(
                TableName=self._table_name,
                Key=key.table_key(self._schema.partition_key, self._schema.sort_key),
                UpdateExpression="SET LastThrottled = :now",
                ConditionExpression=(
                    "attribute_exists(LastUpdated) AND "
                    "(attribute_not_exists(LastThrottled) OR LastThrottled < :stale)"
                ),
                ExpressionAttributeValues={":now": {"N": str(now)}, ":stale": {"N": str(stale)}},
            )
        except ClientError as error:
            if not is_throttling(error) and error_code(error) != "ConditionalCheckFailedException":
                raise
        self.remember(replace(seen, last_throttled=now))

    def _store_request(self, before: ShardMeta, after: ShardMeta) -> dict[str, Any]:
        """The conditional update that writes `after` over `before`."""
        attributes = after.attributes()
        values = {f":{name}": _serializer.serialize(value) for name, value in attributes.items()}
        if before.stored:
            condition = "LastUpdated = :seen"
            values[":seen"] = {"N": str(before.last_updated)}
        else:
            condition = "attribute_not_exists(LastUpdated)"
        if before.moving_from is not None:  # a settle or a doubling changes only MovingFrom
            condition += " AND MovingFrom = :moving"
            values[":moving"] = {"N": str(before.moving_from)}
        update = "SET " + ", ".join(f"{name} = :{name}" for name in attributes)
        if after.moving_from is None and before.moving_from is not None:
            update += " REMOVE MovingFrom"
        return {
            "TableName": self._table_name,
            "Key": after.key.table_key(self._schema.partition_key, self._schema.sort_key),
            "UpdateExpression": update,
            "ConditionExpression": condition,
            "ExpressionAttributeValues": values,
        }


def _cancelled_by(error: ClientError, reason: str) -> bool:
    """Whether `error` is a transaction cancelled because of `reason` (a per-item code)."""
    return reason in cancellation_codes(error)
