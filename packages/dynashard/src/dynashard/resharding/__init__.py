"""Shard counts kept in the table: grown on throttling, halved online by the mover."""

from dynashard.resharding.cold import ColdPolicy, is_cold
from dynashard.resharding.counted import counted_keys
from dynashard.resharding.growing_writes import find_item, write_growing
from dynashard.resharding.mover import STOP_SECONDS, MoveReport, ShardMover, run_moves
from dynashard.resharding.moves import MoveSpec, RegisteredMove, registered_moves
from dynashard.resharding.pace import DEFAULT_WRITE_UNITS_PER_SECOND, Pace
from dynashard.resharding.shard_counts import (
    GrowthEvent,
    GrowthHook,
    GrowthPolicy,
    ShardCounts,
    log_growth,
)
from dynashard.resharding.shard_meta import (
    MOVE_AFTER_SECONDS,
    ShardMeta,
    ShardMetaKey,
)
from dynashard.resharding.transactions import (
    Operation,
    ShardedKey,
    Transaction,
    TransactionCancelledError,
    TransactionThrottledError,
    transact_growing,
)

__all__ = [
    "DEFAULT_WRITE_UNITS_PER_SECOND",
    "MOVE_AFTER_SECONDS",
    "STOP_SECONDS",
    "ColdPolicy",
    "GrowthEvent",
    "GrowthHook",
    "GrowthPolicy",
    "MoveReport",
    "MoveSpec",
    "Operation",
    "Pace",
    "RegisteredMove",
    "ShardCounts",
    "ShardMeta",
    "ShardMetaKey",
    "ShardMover",
    "ShardedKey",
    "Transaction",
    "TransactionCancelledError",
    "TransactionThrottledError",
    "counted_keys",
    "find_item",
    "is_cold",
    "log_growth",
    "registered_moves",
    "run_moves",
    "transact_growing",
    "write_growing",
]
