"""Timers (`incidents.timers`): the sweep that reads every due timer each minute and hands it
to the firing queue, the workers that fire each once, with exactly the table actions they
call, and alarms on failures and lateness, for all accounts and for any one account
(`docs/decisions/018-timers-fired-by-workers-on-sqs-fifo.md`)."""

from __future__ import annotations

import json

from aws_cdk import Duration, NestedStack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from constructs import Construct

from incidents.timers.firing_queue import RECEIVES_BEFORE_DEAD_LETTER, WORKER_TIMEOUT_SECONDS
from lambdas.settings import timers_environment
from stacks.functions import (
    METRICS_NAMESPACE,
    FunctionSpec,
    Runtime,
    grant_table,
    handler_function,
)
from stacks.monitoring import PERIOD, Monitoring, custom_metric
from stacks.permissions import (
    SWEEPER_INDEXES,
    SWEEPER_TABLE_ACTIONS,
    TIMER_WORKER_TABLE_ACTIONS,
)
from stacks.queues import encrypted_queue
from stacks.scheduled_runs import scheduled_run

SWEEP_TIMEOUT = Duration.minutes(2)
"""A run stops 10 s before it; two runs that overlap are safe (every firing is a claim)."""
SWEEP_MEMORY_MB = 1024
"""A due minute's timers are read whole (rounds across accounts need them all): a backlog
of a hundred thousand fits, with the CPU to order them."""
WORKER_TIMEOUT = Duration.seconds(WORKER_TIMEOUT_SECONDS)
WORKER_BATCH = 10
SCHEDULE = Duration.minutes(1)
LATE_SECONDS = 180
"""A timer fired three minutes late: the sweep is falling behind (its promise is one
minute plus one run)."""


class Timers(NestedStack):
    """The sweep, the firing queue and its workers, their schedule and their alarms."""

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
        config = runtime.config
        self.dead_letters = encrypted_queue(
            self, "FiringDeadLetters", fifo=True, removal=config.removal
        )
        self.queue = encrypted_queue(
            self, "FiringQueue", fifo=True, removal=config.removal, high_throughput=True,
            consumer=(WORKER_TIMEOUT, self.dead_letters, RECEIVES_BEFORE_DEAD_LETTER),
        )  # fmt: skip
        self.function = self._sweeper(table, runtime, monitoring)
        self.worker = self._worker(table, runtime)
        self._alarms(monitoring, config.stage)

    def functions(self) -> list[lambda_.Function]:
        """The sweep and the firing workers."""
        return [self.function, self.worker]

    def _sweeper(
        self, table: dynamodb.ITableV2, runtime: Runtime, monitoring: Monitoring
    ) -> lambda_.Function:
        spec = FunctionSpec(
            "sweeper",
            "lambdas.sweeper.handler",
            "incidents: hands due timers to the firing queue, accounts in rounds",
            SWEEP_MEMORY_MB,
            SWEEP_TIMEOUT,
            reserved=runtime.config.reserved("sweeper"),
        )
        environment = {
            "TABLE_NAME": table.table_name,
            **timers_environment(self.queue.queue_url, runtime.config.timer_firings_per_minute),
        }
        function, role = handler_function(self, spec, runtime, environment)
        grant_table(role, table, SWEEPER_TABLE_ACTIONS, SWEEPER_INDEXES)
        role.add_to_policy(
            iam.PolicyStatement(actions=["sqs:SendMessage"], resources=[self.queue.queue_arn])
        )
        scheduled_run(
            self, "sweeper", function, SCHEDULE, "hands the timers that have come due on",
            monitoring=monitoring, removal=runtime.config.removal,
        )  # fmt: skip
        return function

    def _worker(self, table: dynamodb.ITableV2, runtime: Runtime) -> lambda_.Function:
        spec = FunctionSpec(
            "timer_worker",
            "lambdas.timer_worker.handler",
            "incidents: fires due timers (heartbeat expiries, auto-resolves), each once",
            256,
            WORKER_TIMEOUT,
            reserved=runtime.config.reserved("timer_worker"),
        )
        function, role = handler_function(self, spec, runtime, {"TABLE_NAME": table.table_name})
        grant_table(role, table, TIMER_WORKER_TABLE_ACTIONS, ())
        function.add_event_source(  # receiving, deleting and hiding: the event source's grant
            sources.SqsEventSource(
                self.queue,
                batch_size=WORKER_BATCH,
                report_batch_item_failures=True,
                max_concurrency=runtime.config.timer_workers,
            )
        )
        return function

    def _alarms(self, monitoring: Monitoring, stage: str) -> None:
        monitoring.alarm(
            "TimersLate",
            custom_metric(METRICS_NAMESPACE, "TimerLatenessMax", "Maximum"),
            LATE_SECONDS,
            "a timer fired more than three minutes after it came due",
        )
        rule = cloudwatch.CfnInsightRule(
            self,
            "LatenessByAccount",
            rule_name=f"incidents-{stage}-timer-lateness-by-account",
            rule_state="ENABLED",
            rule_body=json.dumps(self._lateness_rule()),
        )
        monitoring.alarm(
            "TimersLateForAnAccount",
            cloudwatch.MathExpression(
                expression=f"INSIGHT_RULE_METRIC('{rule.rule_name}', 'MaxContributorValue')",
                period=PERIOD,
                label="latest firing of the most delayed account (s)",
            ),
            LATE_SECONDS,
            "one account's timers fired three minutes late (the rule names the account)",
        )
        monitoring.alarm(
            "TimersFailed",
            custom_metric(METRICS_NAMESPACE, "TimersFailed", "Sum"),
            1,
            "a timer whose firing failed (it stays due and is tried again)",
        )
        monitoring.alarm(
            "FiringDeadLetters",
            self.dead_letters.metric_approximate_number_of_messages_visible(
                period=PERIOD, statistic="Maximum"
            ),
            1,
            "a timer failed five times (still due: redrive the dead-letter queue to fire it)",
        )
        monitoring.alarm("sweeper-errors", self.function.metric_errors(), 1, "errors")
        monitoring.alarm("timer-worker-errors", self.worker.metric_errors(), 1, "errors")

    def _lateness_rule(self) -> dict[str, object]:
        """Contributor Insights over the workers' log lines: each account's latest firing
        (an account's own alarm without a metric per account)."""
        return {
            "Schema": {"Name": "CloudWatchLogRule", "Version": 1},
            "LogGroupNames": [self.worker.log_group.log_group_name],
            "LogFormat": "JSON",
            "Contribution": {
                "Keys": ["$.account"],
                "ValueOf": "$.late_seconds",
                "Filters": [{"Match": "$.message", "In": ["timer"]}],
            },
            "AggregateOn": "Max",
        }
