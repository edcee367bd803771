"""Writes and point reads of items under a base key whose shard count can grow.

Writers use the current count and, when DynamoDB throttles a hot key, grow it and retry
on the wider key space: a throttled write was not applied, so the retry neither loses
nor duplicates it. Point reads probe the current count's shard first and then the shards
of older counts, because items never move when the count grows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from botocore.exceptions import ClientError

from dynashard.errors import WriteThrottledError
from dynashard.resharding.shard_counts import ShardCounts
from dynashard.resharding.shard_meta import ShardMeta, ShardMetaKey
from dynashard.throttling.codes import error_code, is_hot_key_throttling
from dynashard.throttling.retry import RetryPolicy

T = TypeVar("T")


def write_growing(
    counts: ShardCounts,
    key: ShardMetaKey,
    write: Callable[[int], T],
    retry: RetryPolicy | None = None,
) -> T:
    """Run ``write(shard_count)``; on hot-key throttling grow the count and run it again.

    `write` must derive its shard from the count it is given (``calculated_shard(pk, sk,
    count)``) and must be a new item or a conditional put: an update of an existing item
    goes to the shard `find_item` located, which does not change when the count grows.
    Throttling that more shards cannot relieve is only retried with back-off.
    """
    meta = counts.get(key)

    def grow(error: ClientError) -> bool:
        nonlocal meta
        if not is_hot_key_throttling(error):
            return False
        before, meta = meta.shard_count, counts.grow(key, meta)
        return meta.shard_count != before

    def give_up(error: ClientError) -> Exception:
        detail = f"{key.base!r} still throttled at {meta.shard_count} shards"
        return WriteThrottledError(error_code(error), detail)

    result, _ = (retry or RetryPolicy()).run(
        lambda: write(meta.shard_count), give_up=give_up, on_throttle=grow
    )
    return result


def find_item(
    counts: ShardCounts,
    key: ShardMetaKey,
    pk: str,
    sk: str,
    read: Callable[[int], T | None],
) -> T | None:
    """The first non-None ``read(shard)`` over the shards that may hold ``(pk, sk)``.

    Probes with the cached counts first; on a miss it re-reads the metadata once and
    probes any shard a newer count adds, so an item another process wrote after a
    growth is found even while this process's cache is stale.
    """
    probed: set[int] = set()
    cached = counts.get(key)
    found = _probe(cached, pk, sk, read, probed)
    if found is not None:
        return found
    fresh = counts.refresh(key)
    return None if fresh.history == cached.history else _probe(fresh, pk, sk, read, probed)


def _probe(
    meta: ShardMeta, pk: str, sk: str, read: Callable[[int], T | None], probed: set[int]
) -> T | None:
    for shard in meta.probe_shards(pk, sk):
        if shard in probed:
            continue
        probed.add(shard)
        found = read(shard)
        if found is not None:
            return found
    return None
