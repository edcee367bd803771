"""Shard counts halved online (`dynashard.resharding.mover`): the scheduled mover that steps every
halving still moving, with exactly the table actions it calls and an alarm on a move that
has run for hours (a stuck one)."""

from __future__ import annotations

from aws_cdk import Duration, NestedStack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from lambdas.settings import mover_environment
from stacks.functions import (
    METRICS_NAMESPACE,
    FunctionSpec,
    Runtime,
    grant_table,
    handler_function,
)
from stacks.monitoring import Monitoring, custom_metric
from stacks.permissions import SHARD_MOVER_INDEXES, SHARD_MOVER_TABLE_ACTIONS
from stacks.scheduled_runs import scheduled_run

MOVER_TIMEOUT = Duration.minutes(5)
SCHEDULE = Duration.minutes(5)
"""A run stops stepping 10 s before its timeout; two runs that overlap are safe (every
write of a step is conditional)."""
STUCK_SECONDS = 6 * 3600
"""A halving still moving after 6 hours (a few thousand items take minutes)."""


class ShardMaintenance(NestedStack):
    """The mover's function, its schedule and its alarms."""

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
            "shard_mover",
            "lambdas.shard_mover.handler",
            "incidents: halves cold shard counts and moves their items (dynashard)",
            256,
            MOVER_TIMEOUT,
            reserved=runtime.config.reserved("shard_mover"),
        )
        pace = mover_environment(runtime.config.shard_mover_write_units)
        self.function, role = handler_function(
            self, spec, runtime, {"TABLE_NAME": table.table_name, **pace}
        )
        grant_table(role, table, SHARD_MOVER_TABLE_ACTIONS, SHARD_MOVER_INDEXES)
        scheduled_run(
            self, "shard-mover", self.function, SCHEDULE,
            "halves cold shard counts and steps the halvings still moving",
            monitoring=monitoring, removal=runtime.config.removal,
        )  # fmt: skip
        monitoring.alarm(
            "ShardMoveStuck",
            custom_metric(METRICS_NAMESPACE, "ShardMoveOldestSeconds", "Maximum"),
            STUCK_SECONDS,
            "a halving of a shard count still moving after 6 hours",
        )
        monitoring.alarm("shard-mover-errors", self.function.metric_errors(), 1, "errors")

    def functions(self) -> list[lambda_.Function]:
        """The mover."""
        return [self.function]
