"""Shard metadata: how many shards a base key has now, and every count it ever had.

Counts double, so the shard sets nest: an item written under N shards sits at
``h & (N-1)``, which is also one of the shards under 2N. The history therefore tells a
point read where else to look. A count also halves: from 2N to N the history keeps the
counts up to N, and `moving_from` (2N) says that shards N..2N-1 may still hold items until
a mover (`dynashard.resharding.mover`) has moved each to ``h & (N-1)``; readers cover 2N until then.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

from dynashard.errors import ShardMetadataError
from dynashard.item import Item
from dynashard.keys.keys import build_key, split_key
from dynashard.keys.shards import MAX_SHARD_COUNT, calculated_shard, validate_shard_count

METADATA_SUFFIX = "shardmeta"
HISTORY_LIMIT = MAX_SHARD_COUNT.bit_length()
"""At most one entry per doubling from 1 to ``MAX_SHARD_COUNT``: the history stays bounded."""
MOVE_AFTER_SECONDS = 60.0
"""A halving's mover moves nothing until this long after it, and readers treat a count
changed within this long as one whose items may move. Every process acts on a map it read
for its cache's life (`GrowthPolicy.cache_seconds`) plus the request it serves (API
Gateway stops one at 29 s), so by then none still believes nothing moves; and a cursor's
per-stream plan made before the halving has lapsed (`ordered_state.PLAN_SECONDS`)."""

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()


@dataclass(frozen=True)
class ShardMetaKey:
    """Where the metadata of one base key lives: ``PK = <tenant>#shardmeta``, ``SK = <base>``."""

    partition: str
    base: str

    @classmethod
    def for_tenant(cls, tenant: str, base: str) -> ShardMetaKey:
        """The key of `base`'s metadata in `tenant`'s metadata partition."""
        split_key(base)
        return cls(build_key(tenant, METADATA_SUFFIX), base)

    def table_key(self, partition_key: str, sort_key: str) -> Item:
        """The metadata item's primary key, given the table's key attribute names."""
        return {partition_key: {"S": self.partition}, sort_key: {"S": self.base}}


@dataclass(frozen=True)
class HistoryEntry:
    """From `at` (epoch milliseconds) on, the base key had `count` shards."""

    at: int
    count: int


@dataclass(frozen=True)
class ShardMeta:
    """The shard counts of one base key; `history[-1]` is the current count."""

    key: ShardMetaKey
    history: tuple[HistoryEntry, ...]
    stored: bool = field(default=False)
    moving_from: int | None = None
    """While a halving's items are moved: the count before it (twice the current one)."""
    last_throttled: int = 0
    """Epoch milliseconds a writer was last throttled at the maximum count (where it
    cannot grow, so `last_updated` does not say so): the cold check waits past it."""

    def __post_init__(self) -> None:
        _check_history(self.key, self.history)
        if self.moving_from is not None and self.moving_from != 2 * self.shard_count:
            raise ShardMetadataError(
                f"metadata of {self.key.base!r}: moving from {self.moving_from} shards to "
                f"{self.shard_count} is not a halving"
            )

    @classmethod
    def initial(cls, key: ShardMetaKey, default_count: int) -> ShardMeta:
        """A base key without metadata: `default_count` shards since the epoch."""
        return cls(key, (HistoryEntry(0, validate_shard_count(default_count)),))

    def stored_now(self) -> ShardMeta:
        """This metadata as it is once written (the optimistic lock then expects it)."""
        return replace(self, stored=True)

    @property
    def shard_count(self) -> int:
        """Shards new items are written to."""
        return self.history[-1].count

    @property
    def last_updated(self) -> int:
        """Epoch milliseconds of the last growth (0 if it never grew): the optimistic lock."""
        return self.history[-1].at

    @property
    def quiet_since(self) -> int:
        """Epoch milliseconds since which no writer was throttled: a throttled writer grows
        the count (`last_updated`) or, at the maximum, marks `last_throttled`."""
        return max(self.last_updated, self.last_throttled)

    @property
    def read_count(self) -> int:
        """Shards a reader must cover: the highest count in the history (items only move
        by a halving's mover), and the count being moved from while it runs."""
        return max(self.moving_from or 0, *(entry.count for entry in self.history))

    def items_may_move(self, now: float) -> bool:
        """Whether a list must not trust what a cursor learned of each stream at `now`
        (epoch seconds): a halving's items move, or the count changed within
        `MOVE_AFTER_SECONDS` (a doubling back may end a move whose last step still runs)."""
        recent = now * 1000 - self.last_updated < MOVE_AFTER_SECONDS * 1000
        return self.moving_from is not None or recent

    def doubled(self, at: int) -> ShardMeta:
        """This metadata after doubling the count at `at` (epoch milliseconds). Doubling
        back to the count a halving moves from ends that move: items not yet moved are
        where 2N puts them, and those moved are where the history's N does."""
        entry = HistoryEntry(max(at, self.last_updated), self.shard_count * 2)
        return ShardMeta(self.key, (*self.history, entry), stored=True)

    def halved(self, at: int) -> ShardMeta:
        """This metadata after halving the count at `at`: writers use half at once, and the
        items of the upper half's shards are to be moved (`moving_from`)."""
        if self.shard_count == 1 or self.moving_from is not None:
            reason = "a count of 1" if self.shard_count == 1 else "a halving still moving"
            raise ShardMetadataError(f"metadata of {self.key.base!r}: cannot halve {reason}")
        half = self.shard_count // 2
        kept = tuple(entry for entry in self.history if entry.count < half)
        entry = HistoryEntry(max(at, self.last_updated), half)
        return ShardMeta(self.key, (*kept, entry), stored=True, moving_from=self.shard_count)

    def settled(self) -> ShardMeta:
        """This metadata once a halving's items are all moved: readers drop to its count."""
        return replace(self, moving_from=None)

    def probe_shards(self, pk: str, sk: str) -> list[int]:
        """Shards that may hold the item ``(pk, sk)``: the current count's first, then older.

        Counts that put the item on a shard already listed add no read, so a point read
        costs at most one extra read per doubling, and usually fewer.
        """
        counts = sorted({entry.count for entry in self.history}, reverse=True)
        if self.moving_from is not None:  # not yet moved, the old copy is the one to use
            counts.insert(0, self.moving_from)
        shards = [calculated_shard(pk, sk, count) for count in counts]
        return list(dict.fromkeys(shards))

    def attributes(self) -> dict[str, Any]:
        """The non-key attributes: ``ShardCount``, ``LastUpdated``, ``ShardHistory`` and,
        while a halving's items are moved, ``MovingFrom``."""
        moving = {} if self.moving_from is None else {"MovingFrom": self.moving_from}
        return {
            "ShardCount": self.shard_count,
            "LastUpdated": self.last_updated,
            "ShardHistory": [{"At": e.at, "Count": e.count} for e in self.history],
            **moving,
        }

    @classmethod
    def from_item(cls, key: ShardMetaKey, item: Item) -> ShardMeta:
        """Parse a stored metadata item, rejecting one that breaks the doubling rules."""
        try:
            values = {name: _deserializer.deserialize(item[name]) for name in _ATTRIBUTES}
            history = tuple(
                HistoryEntry(int(entry["At"]), int(entry["Count"]))
                for entry in values["ShardHistory"]
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ShardMetadataError(f"metadata of {key.base!r} is malformed: {exc!r}") from None
        moving, throttled = item.get("MovingFrom"), item.get("LastThrottled")
        moving_from = int(_deserializer.deserialize(moving)) if moving else None
        last_throttled = int(_deserializer.deserialize(throttled)) if throttled else 0
        meta = cls(key, history, True, moving_from, last_throttled)
        if (meta.shard_count, meta.last_updated) != (values["ShardCount"], values["LastUpdated"]):
            raise ShardMetadataError(
                f"metadata of {key.base!r}: ShardCount/LastUpdated disagree with ShardHistory"
            )
        return meta


_ATTRIBUTES = ("ShardCount", "LastUpdated", "ShardHistory")


def _check_history(key: ShardMetaKey, history: tuple[HistoryEntry, ...]) -> None:
    """Counts are powers of two, each the double of the one before, at non-decreasing times."""
    if not 1 <= len(history) <= HISTORY_LIMIT:
        raise ShardMetadataError(
            f"metadata of {key.base!r}: history has {len(history)} entries "
            f"(1 to {HISTORY_LIMIT} allowed)"
        )
    try:
        validate_shard_count(history[0].count)
    except ValueError as exc:
        raise ShardMetadataError(f"metadata of {key.base!r}: {exc}") from None
    for before, after in itertools.pairwise(history):
        if after.count != before.count * 2 or after.at < before.at:
            raise ShardMetadataError(
                f"metadata of {key.base!r}: {before} -> {after} is not a doubling in time order"
            )
    if history[-1].count > MAX_SHARD_COUNT:
        raise ShardMetadataError(f"metadata of {key.base!r}: count above {MAX_SHARD_COUNT}")
