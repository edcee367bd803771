"""Keys: build, shard and size them (xxhash shards, the planner, the table's schema)."""

from dynashard.keys.keys import (
    PARTITION_KEY_MAX_BYTES,
    SEPARATOR,
    SORT_KEY_MAX_BYTES,
    KeyKind,
    build_key,
    shard_keys,
    sharded_key,
    split_key,
    split_sharded_key,
)
from dynashard.keys.schema import IndexSchema, TableSchema
from dynashard.keys.shards import (
    MAX_SHARD_COUNT,
    WeightedShards,
    calculated_shard,
    random_shard,
    validate_shard_count,
)

__all__ = [
    "MAX_SHARD_COUNT",
    "PARTITION_KEY_MAX_BYTES",
    "SEPARATOR",
    "SORT_KEY_MAX_BYTES",
    "IndexSchema",
    "KeyKind",
    "TableSchema",
    "WeightedShards",
    "build_key",
    "calculated_shard",
    "random_shard",
    "shard_keys",
    "sharded_key",
    "split_key",
    "split_sharded_key",
    "validate_shard_count",
]
