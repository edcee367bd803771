"""Functions run on a schedule (the sweep, the shard mover): an EventBridge rule whose failed
invocations land in a dead-letter queue, and alarms when the runs stop or fail to start."""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from stacks.monitoring import Monitoring
from stacks.nag import FAILURE_DESTINATION, accept
from stacks.queues import encrypted_queue

RETRIES = 2
"""EventBridge's tries of an invocation it could not make (throttled, say) beyond the first."""
SILENT_RUNS = 3
"""Runs missed in a row before the alarm: three minutes for the sweep, which runs each one."""


def scheduled_run(
    scope: Construct,
    name: str,
    function: lambda_.Function,
    rate: Duration,
    description: str,
    *,
    monitoring: Monitoring,
    removal: RemovalPolicy,
) -> None:
    """An EventBridge rule that invokes `function` every `rate` (an invocation it cannot
    make, after `RETRIES` and within a run's interval, goes to a dead-letter queue), an
    alarm on that queue, and one when the function has missed `SILENT_RUNS` runs in a row
    (the alarms named after `name`)."""
    failed = encrypted_queue(scope, "FailedRuns", fifo=False, removal=removal)
    accept(failed, FAILURE_DESTINATION, reason=FAILED_RUNS_REASON)
    events.Rule(
        scope,
        "Schedule",
        description=description,
        schedule=events.Schedule.rate(rate),
        targets=[
            targets.LambdaFunction(
                function, dead_letter_queue=failed, retry_attempts=RETRIES, max_event_age=rate
            )
        ],
    )
    monitoring.alarm(
        f"{name}-failed-runs",
        failed.metric_approximate_number_of_messages_visible(period=Duration.minutes(1)),
        1,
        "a scheduled run EventBridge could not start (its event is in the dead-letter queue)",
    )
    minutes = int(rate.to_minutes())
    monitoring.silence_alarm(
        f"{name}-stopped",
        function.metric_invocations(period=rate, statistic="Sum"),
        SILENT_RUNS,
        f"no run for {SILENT_RUNS * minutes} minutes: the schedule stopped invoking it",
    )


FAILED_RUNS_REASON = (
    "This queue is a dead-letter queue: where EventBridge puts a scheduled run it could not "
    "start (cdk-nag only recognizes a queue's redrive target)."
)
