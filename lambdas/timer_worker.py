"""The firing queue's worker (`incidents.timers.firing_queue`): each message is one due
timer, fired once through its kind's handler (heartbeat expiries, incidents' auto-resolves,
acknowledgement timeouts and escalations, maintenance windows' ends, schedules' handoffs).
A message group is one subject, so a failure holds back that subject's later timers only
(Powertools' FIFO batch processor, skipping the failed groups): the failed message comes
back after the visibility timeout, and after its last receive goes to the dead-letter queue
while its timer stays due in the table, until a redrive of that queue. One log line a
firing (its account and lateness, which the per-account lateness rule reads) and the
batch's metrics.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import SqsFifoPartialProcessor, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from incidents.alerts.lifecycle import acknowledgement_timeout, auto_resolve
from incidents.escalation.engine import fire_escalation
from incidents.heartbeats.commands import expire_heartbeat
from incidents.maintenance.commands import resolve_at_end
from incidents.notifications.later import fire_notification
from incidents.schedules.handoffs import hand_off
from incidents.timers.firing import Fire, FiringReport, fire_timer
from incidents.timers.firing_queue import timer_from_message
from incidents.timers.schedule import TimerKind
from lambdas.runtime import logger, metrics, store_without_cursors, tracer

HANDLERS: dict[TimerKind, Fire] = {
    TimerKind.HEARTBEAT: expire_heartbeat,
    TimerKind.AUTO_RESOLVE: auto_resolve,
    TimerKind.ACKNOWLEDGEMENT: acknowledgement_timeout,
    TimerKind.MAINTENANCE_END: resolve_at_end,
    TimerKind.HANDOFF: hand_off,
    TimerKind.ESCALATION: fire_escalation,
    TimerKind.NOTIFICATION: fire_notification,
}
"""What firing each kind of timer does."""


class FiringFailedError(Exception):
    """A timer's firing failed: its message comes back (the timer stays due)."""


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    """Fire each message's timer; the failed ones (and their groups' later ones) come back."""
    report = FiringReport()
    processor = SqsFifoPartialProcessor(skip_group_on_error=True)
    answer = process_partial_response(
        event, lambda record: _fire(record, report), processor, context
    )
    latest = max(report.late_seconds, default=0.0)
    metrics.add_metric(name="TimersFired", unit=MetricUnit.Count, value=report.fired)
    metrics.add_metric(name="TimersFailed", unit=MetricUnit.Count, value=report.failed)
    metrics.add_metric(name="TimerLatenessMax", unit=MetricUnit.Seconds, value=latest)
    return answer


def _fire(record: SQSRecord, report: FiringReport) -> None:
    timer = timer_from_message(record.body)
    try:
        outcome, late = fire_timer(store_without_cursors(), HANDLERS, timer)
    except Exception as error:
        report.failed += 1
        raise FiringFailedError(f"firing {timer.identity} failed") from error
    report.count(outcome, late)
    logger.info(
        "timer",
        extra={"account": timer.account, "kind": timer.kind.value,
               "outcome": outcome.value, "late_seconds": late},
    )  # fmt: skip
