"""Numbers taken in order by writers that must never fail each other: each take is one
unconditional ``ADD`` to the sequence's item, outside any transaction, answered with the
value it reached.

A number read and claimed inside a transaction (``SET n = :seen + 1`` if ``n = :seen``)
leaves no gap, but two writers that read the same value conflict, and only one commits: the
other retries, and under a burst the retries are what makes them late. An ``ADD`` never
conflicts with another ``ADD`` (DynamoDB applies them one after another, up to one
partition's 1,000 writes a second), so every take succeeds, at once, with numbers unique
and increasing in the order they were taken. What it gives up: a number whose write then
fails is a gap, and two numbers are committed in the order of their writes, not of their
takes. The item must not be written by a transaction (a write to an item inside a pending
transaction is refused).
"""

from __future__ import annotations

from dataclasses import dataclass

from dynashard.handle import TableHandle
from dynashard.item import Item

SEQUENCE_SORT_KEY = "sequence"
VALUE = "value"


@dataclass(frozen=True)
class Sequence:
    """Sequences of one table, one item each (``<base>`` / `sort_key`)."""

    table: TableHandle
    sort_key: str = SEQUENCE_SORT_KEY

    def take(self, base: str, count: int = 1) -> range:
        """The next `count` numbers of `base`'s sequence (the first take starts at 1): one
        write for the block, however many writers take at once."""
        if count < 1:
            raise ValueError(f"a take needs count >= 1, got {count}")
        answer = self.table.client.update_item(
            TableName=self.table.name,
            Key=self._key(base),
            UpdateExpression="ADD #value :count",
            ExpressionAttributeNames={"#value": VALUE},
            ExpressionAttributeValues={":count": {"N": str(count)}},
            ReturnValues="UPDATED_NEW",
        )
        last = int(answer["Attributes"][VALUE]["N"])
        return range(last - count + 1, last + 1)

    def current(self, base: str) -> int:
        """The last number taken (0 before any), read strongly consistent."""
        answer = self.table.client.get_item(
            TableName=self.table.name, Key=self._key(base), ConsistentRead=True
        )
        item = answer.get("Item", {})
        return int(item[VALUE]["N"]) if VALUE in item else 0

    def _key(self, base: str) -> Item:
        return {
            self.table.schema.partition_key: {"S": base},
            self.table.schema.sort_key: {"S": self.sort_key},
        }
