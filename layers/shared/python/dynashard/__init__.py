"""dynashard: sharded partition keys and fan-out queries for DynamoDB single tables.

Generic on purpose: nothing here knows about the domain that uses it.
"""

from dynashard.errors import DynashardError, InvalidKeyError, UnknownShardValueError
from dynashard.keys import (
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
from dynashard.schema import IndexSchema, TableSchema
from dynashard.shards import (
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
    "DynashardError",
    "IndexSchema",
    "InvalidKeyError",
    "KeyKind",
    "TableSchema",
    "UnknownShardValueError",
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
