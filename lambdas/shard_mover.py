"""The scheduled shard maintenance: every few minutes it halves the counts that are cold
(`dynashard.resharding.cold`: no throttle for an hour, few items written in it), then steps each
halving still moving (registered by such a halving or by an operator's ``shrink``), oldest
first, while its invocation has time, a page of items a shard a step, at the stage's pace
(``shardMoverWriteUnits`` write units a second, slowed by throttling); a step that finds
the vacated shards empty settles the count, and readers drop to it. One log line and the
items moved per step; the oldest move's age each run, which an alarm watches (a move that
makes no progress is stuck).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from dynashard import ShardMover
from dynashard.resharding import (
    MOVE_AFTER_SECONDS,
    STOP_SECONDS,
    MoveReport,
    Pace,
    RegisteredMove,
    counted_keys,
    is_cold,
    registered_moves,
    run_moves,
)
from incidents.cold_shards import COLD, cold_check
from incidents.store import Store
from lambdas.runtime import logger, metrics, store_without_cursors, tracer
from lambdas.settings import mover_write_units

PAGE_SIZE = 100
WRITE_UNITS = mover_write_units(os.environ)
"""The stage's pace (``shardMoverWriteUnits``): a bad value stops the function at import."""
MOVE_AFTER = MOVE_AFTER_SECONDS
"""A move starts in the first run at least this long after its halving."""


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, int]:
    """Halve the cold counts, then step the registered moves; how many were halved and how
    many moves are still running."""
    store = store_without_cursors()
    time_left = lambda: context.get_remaining_time_in_millis() / 1000  # noqa: E731
    halved = halve_cold(store, time_left)
    mover = ShardMover(
        store.counts, store.table, page_size=PAGE_SIZE,
        move_after_seconds=MOVE_AFTER, pace=Pace(WRITE_UNITS),
    )  # fmt: skip
    moves = registered_moves(store.table)
    oldest = max((move.age_seconds(time.time()) for move in moves), default=0.0)
    metrics.add_metric(name="ShardMoveOldestSeconds", unit=MetricUnit.Seconds, value=oldest)
    running = run_moves(mover, moves, time_left, _report)
    metrics.add_metric(name="ShardMovesRunning", unit=MetricUnit.Count, value=len(running))
    return {"halved": halved, "running": len(running)}


def halve_cold(store: Store, time_left: Callable[[], float]) -> int:
    """Halve each counted key that is quiet and cold (`dynashard.resharding.cold`), registering its
    move; how many were halved. A log line each (the count's hook logs the halving itself
    and counts it in ``ShardCountHalvings``)."""
    now = time.time()
    since = datetime.fromtimestamp(now - COLD.quiet_seconds, UTC)
    halved = 0
    for key in counted_keys(store.table):
        if time_left() <= STOP_SECONDS:
            break
        meta = store.counts.refresh(key)
        check = cold_check(store.table_name, meta, since) if COLD.quiet(meta, now) else None
        if check is None or not is_cold(store.client, meta, check.recent, COLD, now):
            continue
        store.counts.shrink(key, check.spec)
        logger.info("cold: halving", extra={"base": key.base, "from": meta.shard_count})
        halved += 1
    return halved


def _report(move: RegisteredMove, step: MoveReport) -> None:
    logger.info(
        "shard move step",
        extra={"base": move.key.base, "moved": step.moved, "changed": step.changed,
               "settled": step.settled, "throttled": step.throttled},
    )  # fmt: skip
    metrics.add_metric(name="ShardItemsMoved", unit=MetricUnit.Count, value=step.moved)
    if step.throttled:
        metrics.add_metric(name="ShardMoveThrottles", unit=MetricUnit.Count, value=1)
