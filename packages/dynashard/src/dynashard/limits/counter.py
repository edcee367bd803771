"""A counter one key's writers can hit thousands of times a second: its value is spread over
`shards` items (``<base>#<shard>``, one partition each), each add goes to a random one,
and the total is one strongly consistent BatchGetItem of them all.

One item taking every add would cap the key at one partition's 1,000 writes a second (and
a transaction that includes it conflicts with every other); `shards` items take that many
times more. An add is an ``Update`` to put in the caller's transaction, so the count moves
exactly when the rest of the write commits.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dynashard.handle import TableHandle
from dynashard.item import Item
from dynashard.keys.keys import sharded_key
from dynashard.keys.shards import validate_shard_count

if TYPE_CHECKING:
    pass

COUNTER_SORT_KEY = "counter"
VALUE = "value"
UNPROCESSED_PAUSE_SECONDS = 0.05


@dataclass(frozen=True)
class ShardedCounter:
    """Counters of one table, each spread over `shards` items."""

    table: TableHandle
    shards: int = 8

    def __post_init__(self) -> None:
        validate_shard_count(self.shards)

    def add(self, base: str, amount: int = 1) -> Item:
        """A transaction's ``Update`` adding `amount` to a random shard of `base`'s counter."""
        shard = random.randrange(self.shards)
        return {
            "Update": {
                "TableName": self.table.name,
                "Key": self._key(sharded_key(base, shard, self.shards)),
                "UpdateExpression": "ADD #value :amount",
                "ExpressionAttributeNames": {"#value": VALUE},
                "ExpressionAttributeValues": {":amount": {"N": str(amount)}},
            }
        }

    def total(self, base: str) -> int:
        """The counter's value: the sum of its shards (0 before any add)."""
        keys = [self._key(sharded_key(base, shard, self.shards)) for shard in range(self.shards)]
        found: list[Item] = []
        while keys:
            response = self.table.client.batch_get_item(
                RequestItems={self.table.name: {"Keys": keys, "ConsistentRead": True}}
            )
            found += response["Responses"].get(self.table.name, [])
            unprocessed: dict[str, Any] = dict(response.get("UnprocessedKeys") or {})
            keys = list(unprocessed.get(self.table.name, {}).get("Keys", []))
            if keys:  # throttled: the rest after a moment
                time.sleep(UNPROCESSED_PAUSE_SECONDS)
        return sum(int(item[VALUE]["N"]) for item in found if VALUE in item)

    def _key(self, partition: str) -> Item:
        return {
            self.table.schema.partition_key: {"S": partition},
            self.table.schema.sort_key: {"S": COUNTER_SORT_KEY},
        }
