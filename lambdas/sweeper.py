"""The scheduled sweep (`incidents.timers.sweep`): each minute it fires every timer that has
come due (heartbeat expiries, incidents' auto-resolves and acknowledgement timeouts,
maintenance windows' ends, schedules' handoffs), once, until its invocation runs short of
time (the next run goes on from where it stopped). One log line a run, and how many timers
fired and how late they were as metrics.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from incidents.alerts.lifecycle import acknowledgement_timeout, auto_resolve
from incidents.heartbeats.commands import expire_heartbeat
from incidents.maintenance.commands import resolve_at_end
from incidents.schedules.handoffs import hand_off
from incidents.timers.schedule import TimerKind
from incidents.timers.sweep import Fire, SweepReport, sweep
from lambdas.runtime import logger, metrics, store_without_cursors, tracer

HANDLERS: dict[TimerKind, Fire] = {
    TimerKind.HEARTBEAT: expire_heartbeat,
    TimerKind.AUTO_RESOLVE: auto_resolve,
    TimerKind.ACKNOWLEDGEMENT: acknowledgement_timeout,
    TimerKind.MAINTENANCE_END: resolve_at_end,
    TimerKind.HANDOFF: hand_off,
}
"""What firing each kind of timer does."""
STOP_SECONDS = 10.0
"""Time left at which a run stops between timers: the one firing finishes within it."""


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, int]:
    """Fire what is due; how many timers fired, lost their claim or failed."""
    report = sweep(
        store_without_cursors(),
        datetime.now(UTC),
        HANDLERS,
        deadline=lambda: context.get_remaining_time_in_millis() / 1000 < STOP_SECONDS,
    )
    record(report)
    return {"fired": report.fired, "lost": report.lost, "failed": report.failed}


def record(report: SweepReport) -> None:
    """The run's log line and metrics."""
    latest = max(report.late_seconds, default=0.0)
    logger.info(
        "sweep",
        extra={"fired": report.fired, "lost": report.lost, "failed": report.failed,
               "buckets": report.buckets, "queries": report.requests, "finished": report.finished,
               "latest_seconds": latest},
    )  # fmt: skip
    metrics.add_metric(name="TimersFired", unit=MetricUnit.Count, value=report.fired)
    metrics.add_metric(name="TimersFailed", unit=MetricUnit.Count, value=report.failed)
    metrics.add_metric(name="TimerLatenessMax", unit=MetricUnit.Seconds, value=latest)
