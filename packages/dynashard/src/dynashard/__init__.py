"""dynashard: sharded partition keys and fan-out queries for DynamoDB single tables.

Generic on purpose: nothing here knows about the domain that uses it.
"""

from dynashard.budget import PageBudget
from dynashard.capacity import item_size, query_read_units
from dynashard.cold import ColdPolicy, is_cold
from dynashard.counted import counted_keys
from dynashard.counter import ShardedCounter
from dynashard.cursor import CursorCodec
from dynashard.errors import (
    DynashardError,
    InvalidCursorError,
    InvalidKeyError,
    ShardMetadataError,
    SortKeyCollisionError,
    StreamFailedError,
    UnknownShardValueError,
    WriteThrottledError,
)
from dynashard.fanout import FanOutEngine, FanOutQuery, Strategy, client_config
from dynashard.growing_writes import find_item, write_growing
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
from dynashard.mover import STOP_SECONDS, MoveReport, ShardMover, run_moves
from dynashard.moves import MoveSpec, RegisteredMove, registered_moves
from dynashard.pace import DEFAULT_WRITE_UNITS_PER_SECOND, Pace
from dynashard.page import Page, PageStats
from dynashard.rate_limit import Decision, RateLimits, RatePolicy
from dynashard.retry import RetryPolicy
from dynashard.schema import IndexSchema, TableSchema
from dynashard.shard_counts import GrowthEvent, GrowthHook, GrowthPolicy, ShardCounts, log_growth
from dynashard.shard_meta import MOVE_AFTER_SECONDS, HistoryEntry, ShardMeta, ShardMetaKey
from dynashard.shards import (
    MAX_SHARD_COUNT,
    WeightedShards,
    calculated_shard,
    random_shard,
    validate_shard_count,
)
from dynashard.sort_range import Bound, SortKeyRange
from dynashard.streams import Item, Stream
from dynashard.throttling import (
    error_code,
    is_hot_key_throttling,
    is_throttling,
    throttling_reasons,
)

__all__ = [
    "DEFAULT_WRITE_UNITS_PER_SECOND",
    "MAX_SHARD_COUNT",
    "MOVE_AFTER_SECONDS",
    "PARTITION_KEY_MAX_BYTES",
    "SEPARATOR",
    "SORT_KEY_MAX_BYTES",
    "STOP_SECONDS",
    "Bound",
    "ColdPolicy",
    "CursorCodec",
    "Decision",
    "DynashardError",
    "FanOutEngine",
    "FanOutQuery",
    "GrowthEvent",
    "GrowthHook",
    "GrowthPolicy",
    "HistoryEntry",
    "IndexSchema",
    "InvalidCursorError",
    "InvalidKeyError",
    "Item",
    "KeyKind",
    "MoveReport",
    "MoveSpec",
    "Pace",
    "Page",
    "PageBudget",
    "PageStats",
    "RateLimits",
    "RatePolicy",
    "RegisteredMove",
    "RetryPolicy",
    "ShardCounts",
    "ShardMeta",
    "ShardMetaKey",
    "ShardMetadataError",
    "ShardMover",
    "ShardedCounter",
    "SortKeyCollisionError",
    "SortKeyRange",
    "Strategy",
    "Stream",
    "StreamFailedError",
    "TableSchema",
    "UnknownShardValueError",
    "WeightedShards",
    "WriteThrottledError",
    "build_key",
    "calculated_shard",
    "client_config",
    "counted_keys",
    "error_code",
    "find_item",
    "is_cold",
    "is_hot_key_throttling",
    "is_throttling",
    "item_size",
    "log_growth",
    "query_read_units",
    "random_shard",
    "registered_moves",
    "run_moves",
    "shard_keys",
    "sharded_key",
    "split_key",
    "split_sharded_key",
    "throttling_reasons",
    "validate_shard_count",
    "write_growing",
]
