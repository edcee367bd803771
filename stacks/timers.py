"""Timers (`incidents.timers`): the sweep that fires every due timer once, each minute, with
exactly the table actions it calls and alarms on failures and lateness."""

from __future__ import annotations

from aws_cdk import Duration, NestedStack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from stacks.functions import (
    METRICS_NAMESPACE,
    FunctionSpec,
    Runtime,
    grant_table,
    handler_function,
)
from stacks.monitoring import Monitoring, custom_metric
from stacks.permissions import SWEEPER_INDEXES, SWEEPER_TABLE_ACTIONS
from stacks.scheduled_runs import scheduled_run

SWEEP_TIMEOUT = Duration.minutes(2)
"""A run stops 10 s before it; two runs that overlap are safe (every firing is a claim)."""
SCHEDULE = Duration.minutes(1)
LATE_SECONDS = 180
"""A timer fired three minutes late: the sweep is falling behind (its promise is one
minute plus one run)."""


class Timers(NestedStack):
    """The sweep's function, its schedule and its alarms."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        table: dynamodb.ITableV2,
        runtime: Runtime,
        monitoring: Monitoring,
    ) -> None:
        super().__init__(scope, construct_id)
        spec = FunctionSpec(
            "sweeper",
            "lambdas.sweeper.handler",
            "incidents: fires due timers (heartbeat expiries, auto-resolves), each once",
            256,
            SWEEP_TIMEOUT,
            reserved=runtime.config.reserved("sweeper"),
        )
        self.function, role = handler_function(
            self, spec, runtime, {"TABLE_NAME": table.table_name}
        )
        grant_table(role, table, SWEEPER_TABLE_ACTIONS, SWEEPER_INDEXES)
        scheduled_run(
            self, "sweeper", self.function, SCHEDULE, "fires the timers that have come due",
            monitoring=monitoring, removal=runtime.config.removal,
        )  # fmt: skip
        monitoring.alarm(
            "TimersLate",
            custom_metric(METRICS_NAMESPACE, "TimerLatenessMax", "Maximum"),
            LATE_SECONDS,
            "a timer fired more than three minutes after it came due",
        )
        monitoring.alarm(
            "TimersFailed",
            custom_metric(METRICS_NAMESPACE, "TimersFailed", "Sum"),
            1,
            "a timer whose firing failed (it stays due and is tried again each minute)",
        )
        monitoring.alarm("sweeper-errors", self.function.metric_errors(), 1, "errors")

    def functions(self) -> list[lambda_.Function]:
        """The sweep."""
        return [self.function]
