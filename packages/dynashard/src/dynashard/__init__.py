"""dynashard: sharded partition keys and fan-out queries for DynamoDB single tables.

Generic on purpose: nothing here knows about the domain that uses it. `Table` is the entry
point: the streams, engines, counts, limits and transactions of a table are made from it.
"""

from importlib.metadata import PackageNotFoundError, version

from dynashard.errors import (
    DynashardError,
    InvalidCursorError,
    TableNotFoundError,
    WriteThrottledError,
)
from dynashard.item import Item, python_item
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
    PartitionStream,
    SortKeyRange,
    Strategy,
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

try:
    __version__ = version("dynashard")
except PackageNotFoundError:  # run from a source tree without being installed
    __version__ = "0+unknown"

__all__ = [
    "CursorCodec",
    "DynashardError",
    "FanOutEngine",
    "FanOutQuery",
    "GrowthPolicy",
    "IndexSchema",
    "InvalidCursorError",
    "Item",
    "Page",
    "PartitionStream",
    "RateLimits",
    "RatePolicy",
    "ShardCounts",
    "ShardMetaKey",
    "ShardMover",
    "SortKeyRange",
    "Strategy",
    "Table",
    "TableNotFoundError",
    "TableSchema",
    "WriteThrottledError",
    "__version__",
    "build_key",
    "calculated_shard",
    "client_config",
    "find_item",
    "python_item",
    "random_shard",
    "shard_keys",
    "sharded_key",
    "write_growing",
]
