"""The keys counted above one shard, kept in one partition so the cold check
(`dynashard.resharding.cold`) finds them without a scan: a growth (or a first count above one) adds
its key in the same transaction, and the settle that brings a key back to one shard
removes it in its own."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dynashard.handle import TableHandle
from dynashard.item import Item
from dynashard.keys.keys import SEPARATOR
from dynashard.keys.schema import TableSchema
from dynashard.resharding.registry import entries, entry, entry_key
from dynashard.resharding.shard_meta import ShardMetaKey

if TYPE_CHECKING:
    pass

COUNTED_PARTITION = f"dynashard{SEPARATOR}counted"


def counted_entry(schema: TableSchema, key: ShardMetaKey) -> Item:
    """The item that lists `key` as counted above one shard."""
    return entry(schema, COUNTED_PARTITION, key)


def counted_entry_key(schema: TableSchema, key: ShardMetaKey) -> Item:
    """The primary key of `key`'s entry."""
    return entry_key(schema, COUNTED_PARTITION, key)


def counted_keys(table: TableHandle) -> list[ShardMetaKey]:
    """Every key counted above one shard."""
    return [key for key, _ in entries(table, COUNTED_PARTITION)]
