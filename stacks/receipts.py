"""Providers' receipts (`lambdas.receipts`): SES's events of the pages' configuration set
and End User Messaging's delivery events, both on the account's default event bus, matched
by one rule that invokes the receipts function; an invocation EventBridge could not make,
or one that failed Lambda's tries, lands in a dead-letter queue, which alarms."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_destinations as destinations
from constructs import Construct

from incidents.notifications.receipts import SOURCES
from incidents.table import GSI3
from stacks.functions import FunctionSpec, Runtime, handler_function
from stacks.monitoring import Monitoring
from stacks.nag import FAILURE_DESTINATION, accept
from stacks.queues import encrypted_queue

RECEIPTS_TIMEOUT = Duration.seconds(30)
RETRIES = 8
"""EventBridge's tries of an invocation it could not make (throttled, say)."""
FUNCTION_RETRIES = 2
"""Lambda's tries of an invocation that failed (the table's error), beyond the first."""
MAX_AGE = Duration.hours(6)


class Receipts(Construct):
    """The rule, its function and its dead-letter queue."""

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
            "receipts",
            "lambdas.receipts.handler",
            "incidents: providers' receipts of pages' messages",
            256,
            RECEIPTS_TIMEOUT,
            reserved=runtime.config.reserved("receipts"),
        )
        self.function, role = handler_function(
            self, spec, runtime, {"TABLE_NAME": table.table_name}
        )
        role.add_to_policy(
            iam.PolicyStatement(actions=["dynamodb:UpdateItem"], resources=[table.table_arn])
        )
        role.add_to_policy(
            iam.PolicyStatement(
                actions=["dynamodb:Query"], resources=[f"{table.table_arn}/index/{GSI3.name}"]
            )
        )
        removal = runtime.config.removal
        self.failed = encrypted_queue(self, "FailedReceipts", fifo=False, removal=removal)
        accept(self.failed, FAILURE_DESTINATION, reason=FAILED_RECEIPTS_REASON)
        self.function.configure_async_invoke(  # a receipt that failed its tries: kept too
            on_failure=destinations.SqsDestination(self.failed),
            retry_attempts=FUNCTION_RETRIES,
            max_event_age=MAX_AGE,
        )
        events.Rule(
            self,
            "Rule",
            description="providers' receipts of pages' messages (SES, End User Messaging)",
            event_pattern=events.EventPattern(
                source=list(SOURCES),
                detail_type=[kind for kinds in SOURCES.values() for kind in kinds],
            ),
            targets=[
                targets.LambdaFunction(
                    self.function,
                    dead_letter_queue=self.failed,
                    retry_attempts=RETRIES,
                    max_event_age=MAX_AGE,
                )
            ],
        )
        monitoring.alarm(
            "receipts-failed",
            self.failed.metric_approximate_number_of_messages_visible(period=Duration.minutes(5)),
            1,
            "a receipt EventBridge could not hand to its function (it is in the dead-letter queue)",
        )
        monitoring.alarm(
            "receipts-errors",
            self.function.metric_errors(period=Duration.minutes(5)),
            1,
            "the receipts function failed (Lambda tries it twice more, then it is kept in the "
            "dead-letter queue)",
        )

    def functions(self) -> list[lambda_.Function]:
        """The receipts function."""
        return [self.function]


FAILED_RECEIPTS_REASON = (
    "This queue is a dead-letter queue: where EventBridge puts a receipt it could not hand "
    "to its function (cdk-nag only recognizes a queue's redrive target)."
)
