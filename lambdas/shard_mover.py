"""The scheduled mover of halved shard counts (`dynashard.mover`): every few minutes it steps
each halving still moving (registered by ``python -m dynashard.admin shrink``), oldest
first, while its invocation has time, a page of items a shard a step; a step that finds
the vacated shards empty settles the count, and readers drop to it. One log line and the
items moved per step; the oldest move's age each run, which an alarm watches (a move that
makes no progress is stuck).
"""

from __future__ import annotations

import time
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from dynashard import (
    SETTLE_AFTER_SECONDS,
    MoveReport,
    RegisteredMove,
    ShardMover,
    registered_moves,
    run_moves,
)
from incidents.table import TABLE_SCHEMA
from lambdas.runtime import logger, metrics, store_without_cursors, tracer

PAGE_SIZE = 100
SETTLE_AFTER = SETTLE_AFTER_SECONDS
"""A move settles in the first run at least this long after its halving."""


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, int]:
    """Step the registered moves; how many are still running."""
    store = store_without_cursors()
    mover = ShardMover(
        store.counts, store.client, store.table_name, TABLE_SCHEMA, page_size=PAGE_SIZE,
        settle_after_seconds=SETTLE_AFTER,
    )  # fmt: skip
    moves = registered_moves(store.client, store.table_name, TABLE_SCHEMA)
    oldest = max((move.age_seconds(time.time()) for move in moves), default=0.0)
    metrics.add_metric(name="ShardMoveOldestSeconds", unit=MetricUnit.Seconds, value=oldest)
    running = run_moves(
        mover, moves, lambda: context.get_remaining_time_in_millis() / 1000, _report
    )
    metrics.add_metric(name="ShardMovesRunning", unit=MetricUnit.Count, value=len(running))
    return {"running": len(running)}


def _report(move: RegisteredMove, step: MoveReport) -> None:
    logger.info(
        "shard move step",
        extra={"base": move.key.base, "moved": step.moved, "changed": step.changed,
               "settled": step.settled},
    )  # fmt: skip
    metrics.add_metric(name="ShardItemsMoved", unit=MetricUnit.Count, value=step.moved)
