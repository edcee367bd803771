"""The scheduled sweep (`incidents.timers.sweep`): each minute it reads every timer that has
come due and hands it to the firing queue (`lambdas.timer_worker` fires it), accounts in
rounds, each within its firing rate, until its invocation runs short of time (the next run
goes on from where it stopped). One log line a run, and what it handed on and held back as
metrics.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from incidents.timers.fairness import FiringBudget
from incidents.timers.sweep import SweepReport, sweep
from lambdas.runtime import firing_queue, logger, metrics, store_without_cursors, tracer
from lambdas.settings import timer_firings_per_minute

STOP_SECONDS = 10.0
"""Time left at which a run stops between batches: the batches under way finish within it."""
RATE = timer_firings_per_minute(os.environ)


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, int]:
    """Hand on what is due; how many timers were queued and held back by their rate."""
    report = sweep(
        store_without_cursors(),
        datetime.now(UTC),
        firing_queue(),
        budget=FiringBudget(RATE),
        deadline=lambda: context.get_remaining_time_in_millis() / 1000 < STOP_SECONDS,
    )
    record(report)
    return {"queued": report.queued, "held": report.held}


def record(report: SweepReport) -> None:
    """The run's log line and metrics."""
    logger.info(
        "sweep",
        extra={"queued": report.queued, "held": report.held, "buckets": report.buckets,
               "queries": report.requests, "finished": report.finished},
    )  # fmt: skip
    metrics.add_metric(name="TimersQueued", unit=MetricUnit.Count, value=report.queued)
    metrics.add_metric(name="TimersHeld", unit=MetricUnit.Count, value=report.held)
