"""dynashard: sharded partition keys and fan-out queries for DynamoDB single tables.

Generic on purpose: nothing here knows about the domain that uses it.
"""

from dynashard.capacity import item_size, query_read_units
from dynashard.cursor import CursorCodec
from dynashard.errors import (
    DynashardError,
    InvalidCursorError,
    InvalidKeyError,
    SortKeyCollisionError,
    StreamFailedError,
    UnknownShardValueError,
)
from dynashard.fanout import FanOutEngine, FanOutQuery, Strategy, client_config
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
from dynashard.page import Page, PageStats
from dynashard.retry import RetryPolicy, is_throttling
from dynashard.schema import IndexSchema, TableSchema
from dynashard.shards import (
    MAX_SHARD_COUNT,
    WeightedShards,
    calculated_shard,
    random_shard,
    validate_shard_count,
)
from dynashard.sort_range import SortKeyRange
from dynashard.streams import Item, Stream

__all__ = [
    "MAX_SHARD_COUNT",
    "PARTITION_KEY_MAX_BYTES",
    "SEPARATOR",
    "SORT_KEY_MAX_BYTES",
    "CursorCodec",
    "DynashardError",
    "FanOutEngine",
    "FanOutQuery",
    "IndexSchema",
    "InvalidCursorError",
    "InvalidKeyError",
    "Item",
    "KeyKind",
    "Page",
    "PageStats",
    "RetryPolicy",
    "SortKeyCollisionError",
    "SortKeyRange",
    "Strategy",
    "Stream",
    "StreamFailedError",
    "TableSchema",
    "UnknownShardValueError",
    "WeightedShards",
    "build_key",
    "calculated_shard",
    "client_config",
    "is_throttling",
    "item_size",
    "query_read_units",
    "random_shard",
    "shard_keys",
    "sharded_key",
    "split_key",
    "split_sharded_key",
    "validate_shard_count",
]
