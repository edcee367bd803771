"""When a key's count may halve by itself: it has been quiet and it is cold.

Quiet: no writer throttled on it for `ColdPolicy.quiet_seconds`. Every throttle below the
maximum grows the count within the growth cooldown (30 s), which stamps `last_updated`, and
one at the maximum stamps `last_throttled`; so "both stamps older than an hour" means no
write was refused for an hour. Cold: the items written to it over that hour, counted on
the key's own shards (a ``Select=COUNT`` Query of each shard over the sort keys of the
window, stopped as soon as the count passes the limit, so a busy key costs no more to
sample than a quiet one), would fill each shard left after halving to at most
`ColdPolicy.items_per_shard`. The hour is 120 growth cooldowns, so a key that grew on a
burst halves at the earliest an hour after it, and grows again within 30 s if the burst
comes back: no flapping faster than that.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dynashard.query.streams import PartitionStream
from dynashard.resharding.shard_meta import ShardMeta

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


@dataclass(frozen=True)
class ColdPolicy:
    """How quiet and how cold a key must be before its count halves."""

    quiet_seconds: float = 3600.0
    items_per_shard: int = 100
    """Items written over the quiet window that each shard left after halving may take:
    100 an hour is 0.03 writes a second, a thirty-thousandth of a partition's 1,000."""

    def quiet(self, meta: ShardMeta, now: float) -> bool:
        """Whether `meta` could halve at `now` (epoch seconds): above one shard, not moving,
        and no throttle for the window."""
        return (
            meta.stored
            and meta.shard_count > 1
            and meta.moving_from is None
            and now * 1000 - meta.quiet_since >= self.quiet_seconds * 1000
        )

    def limit(self, meta: ShardMeta) -> int:
        """The most items the window may hold for `meta` to halve."""
        return self.items_per_shard * (meta.shard_count // 2)


def count_up_to(client: DynamoDBClient, streams: Sequence[PartitionStream], limit: int) -> int:
    """Items in `streams` (their sort ranges), counted until the total passes `limit`."""
    total = 0
    for stream in streams:
        start = None
        while total <= limit:
            request = stream.query_request(stream.sort_range, False, limit - total + 1, start)
            response = client.query(**request, Select="COUNT")
            total += int(response.get("Count", 0))
            start = response.get("LastEvaluatedKey")
            if start is None:
                break
        if total > limit:
            break
    return total


def is_cold(
    client: DynamoDBClient,
    meta: ShardMeta,
    recent: Sequence[PartitionStream],
    policy: ColdPolicy,
    now: float,
) -> bool:
    """Whether `meta`'s key may halve now: quiet, and its `recent` streams (every shard it
    reads, over the window's sort keys) hold no more than the policy's limit."""
    limit = policy.limit(meta)
    return policy.quiet(meta, now) and count_up_to(client, recent, limit) <= limit
