"""The halvings whose items are still moving, kept in one partition of the table so a
scheduled mover finds them without a scan: `ShardCounts.shrink` registers a move in the
transaction that halves the count, and `ShardCounts.settle` removes it in the transaction
that ends it. Each registration says how to move (`MoveSpec`) and since when.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dynashard.handle import TableHandle
from dynashard.item import Item
from dynashard.keys.keys import SEPARATOR
from dynashard.keys.schema import IndexSchema, TableSchema
from dynashard.resharding.registry import entries, entry, entry_key
from dynashard.resharding.shard_meta import ShardMetaKey

if TYPE_CHECKING:
    pass

MOVES_PARTITION = f"dynashard{SEPARATOR}moves"


@dataclass(frozen=True)
class MoveSpec:
    """How a key's items move: by copy (the table's key, conditioned on `version_attribute`)
    or by re-pointing an index's key (`index`); `hashed` is what their shard hashes."""

    version_attribute: str = "version"
    index: IndexSchema | None = None
    hashed: str | None = None

    def attributes(self) -> dict[str, Any]:
        index = self.index
        return {
            "VersionAttribute": self.version_attribute,
            **({"Index": [index.name, index.partition_key, index.sort_key]} if index else {}),
            **({"Hashed": self.hashed} if self.hashed else {}),
        }

    @classmethod
    def from_values(cls, values: dict[str, Any]) -> MoveSpec:
        index = values.get("Index")
        return cls(
            str(values.get("VersionAttribute", "version")),
            IndexSchema(*(str(part) for part in index)) if index else None,
            values.get("Hashed"),
        )


@dataclass(frozen=True)
class RegisteredMove:
    """A halving still moving: its key, how to move, since when (epoch milliseconds)."""

    key: ShardMetaKey
    spec: MoveSpec
    since: int

    def age_seconds(self, now: float) -> float:
        return max(0.0, now - self.since / 1000)


def registration_key(schema: TableSchema, key: ShardMetaKey) -> Item:
    """The primary key of `key`'s registration."""
    return entry_key(schema, MOVES_PARTITION, key)


def registration(schema: TableSchema, key: ShardMetaKey, spec: MoveSpec, since: int) -> Item:
    """The item that registers `key`'s move."""
    return entry(schema, MOVES_PARTITION, key, Since=since, **spec.attributes())


def registered_moves(table: TableHandle) -> list[RegisteredMove]:
    """Every move registered, oldest first."""
    moves = [
        RegisteredMove(key, MoveSpec.from_values(values), int(values["Since"]))
        for key, values in entries(table, MOVES_PARTITION)
    ]
    return sorted(moves, key=lambda move: move.since)


def unregister(table: TableHandle, key: ShardMetaKey) -> None:
    """Remove `key`'s registration (a move that ended without a settle: a doubling back)."""
    table.client.delete_item(TableName=table.name, Key=registration_key(table.schema, key))
