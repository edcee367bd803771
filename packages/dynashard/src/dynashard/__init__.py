"""dynashard: sharded partition keys and fan-out queries for DynamoDB single tables.

Generic on purpose: nothing here knows about the domain that uses it.
"""

from dynashard.errors import DynashardError, InvalidCursorError, WriteThrottledError
from dynashard.keys import (
    IndexSchema,
    TableSchema,
    build_key,
    calculated_shard,
    random_shard,
    shard_keys,
    sharded_key,
)
from dynashard.limits import RateLimits, RatePolicy
from dynashard.query import (
    CursorCodec,
    FanOutEngine,
    FanOutQuery,
    Page,
    SortKeyRange,
    Strategy,
    Stream,
    client_config,
)
from dynashard.resharding import (
    GrowthPolicy,
    ShardCounts,
    ShardMetaKey,
    ShardMover,
    find_item,
    write_growing,
)
from dynashard.table import Table

__all__ = [
    "CursorCodec",
    "DynashardError",
    "FanOutEngine",
    "FanOutQuery",
    "GrowthPolicy",
    "IndexSchema",
    "InvalidCursorError",
    "Page",
    "RateLimits",
    "RatePolicy",
    "ShardCounts",
    "ShardMetaKey",
    "ShardMover",
    "SortKeyRange",
    "Strategy",
    "Stream",
    "Table",
    "TableSchema",
    "WriteThrottledError",
    "build_key",
    "calculated_shard",
    "client_config",
    "find_item",
    "random_shard",
    "shard_keys",
    "sharded_key",
    "write_growing",
]
