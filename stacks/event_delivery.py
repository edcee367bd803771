"""Events out (docs "Events and webhooks", decision 008): the table's stream, filtered to
timeline events, into the publisher; the publisher into the stage's EventBridge bus and the
FIFO delivery queue (a message group per webhook and incident); the queue into the sender,
which signs, posts, logs and schedules each retry through the message's visibility.

Alarms: anything in a dead-letter queue, an event not published within a minute (the
stream's iterator age), a delivery older than its whole retry schedule, an endpoint
disabled, and each function's errors. The dashboard shows deliveries and their latency.
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Duration, NestedStack, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_ses as ses
from aws_cdk import aws_smsvoice as smsvoice
from constructs import Construct

from incidents.contacts.messages import MESSAGE_TYPE
from incidents.events_out.delivery_messages import (
    RECEIVES_BEFORE_DEAD_LETTER,
    SENDER_MAX_CONCURRENCY,
    SENDER_TIMEOUT_SECONDS,
)
from incidents.events_out.outbox import EVENT_SOURCE_NAME, WRITES
from incidents.keys import PAGE_TYPE
from incidents.notifications.codes import UNTRIED
from incidents.notifications.decisions import NOTIFICATION_TYPE
from incidents.timeline.events import EVENT_TYPE
from lambdas.settings import (
    DELIVERY_QUEUE_URL,
    EVENT_BUS_NAME,
    PAGE_EMAIL_CONFIGURATION_SET,
    PAGE_EMAIL_SENDER,
    PAGE_ORIGINATION_IDENTITY,
    PAGE_SMS_CONFIGURATION_SET,
    PUBLIC_API_URL,
    spend_caps_environment,
)
from stacks.config import StageConfig
from stacks.functions import METRICS_NAMESPACE, FunctionSpec, Runtime, handler_function
from stacks.monitoring import PERIOD, Monitoring, custom_metric
from stacks.nag import FAILURE_DESTINATION, accept
from stacks.permissions import PUBLISHER_TABLE_ACTIONS, SENDER_TABLE_ACTIONS
from stacks.queues import encrypted_queue
from stacks.receipts import Receipts

SENDER_TIMEOUT = Duration.seconds(SENDER_TIMEOUT_SECONDS)
"""A batch's groups post side by side, each attempt at most 10 s in all; a group stops at
its first failure, and no attempt starts without the time for a whole one left."""
RECEIPT_EVENTS = (
    ses.EmailSendingEvent.DELIVERY,
    ses.EmailSendingEvent.BOUNCE,
    ses.EmailSendingEvent.REJECT,
    ses.EmailSendingEvent.RENDERING_FAILURE,
)
"""What SES reports of a page's email: each a receipt (`incidents.notifications.receipts`)."""
BUS_ARCHIVE_RETENTION = Duration.days(30)
"""How long the bus's archive keeps events: a rule's target that failed can be replayed."""
PUBLISHER_TIMEOUT = Duration.seconds(60)
RECOVERY_TIMEOUT = Duration.seconds(60)
RECOVERY_ATTEMPTS = 24
"""Receives of a failed batch's record (each 6 minutes apart) before it goes to the
unrecovered queue: about 2.4 hours of retries, well within the stream's 24 hours."""
UNRECOVERED_AGE_SECONDS = 3600
"""A failed batch still not published an hour after it failed."""
STREAM_BATCH = 100
STREAM_RETRIES = 10
SENDER_BATCH = 10
UNPUBLISHED_ALARM_MS = 60_000
"""An event not on its way within a minute of its change (the stream's iterator age)."""
SCHEDULE_EXCEEDED_SECONDS = 4 * 24 * 3600
"""A message older than the retry schedule (under 90 hours) is stuck."""


@dataclass(frozen=True)
class Sources:
    """What events out reads: the table (and its stream), the cursor key of replays (and
    of pages' links) and the API's URL, which pages' links point below."""

    table: dynamodb.ITableV2
    cursor_secret: secretsmanager.ISecret
    api_url: str


@dataclass(frozen=True)
class Provider:
    """What the sender needs to reach people through one AWS service: its environment and
    what it may call on which resources (all empty without the stage's setting)."""

    environment: dict[str, str]
    actions: list[str]
    resources: list[str]

    def grant(self, role: iam.Role) -> None:
        """The calls on the resources, if there are any."""
        if self.resources:
            role.add_to_policy(iam.PolicyStatement(actions=self.actions, resources=self.resources))


NO_PROVIDER = Provider({}, [], [])
PEOPLE_NOT_REACHED = (
    ("NotificationsFailed",
     "a page's notification was not sent (its reason is on it): a person was not reached"),
    ("CodesFailed",
     "a verification code was not sent (its reason is on its message): a person cannot "
     "verify the method they added"),
    ("PagesUndecidable",
     "a page whose notifications could not be decided (the publisher logged it)"),
)  # fmt: skip
"""Alarms on the first of each in a period: name (the metric's too) and what it means."""


def _counted(what: str, done: str) -> list[cloudwatch.IMetric]:
    """A graph's lines of `what` done, pending and failed, summed."""
    return [
        custom_metric(METRICS_NAMESPACE, f"{what}{status}", "Sum")
        for status in (done, "Pending", "Failed")
    ]


class EventDelivery(NestedStack):
    """The bus, the queues, the publisher and the sender of one stage."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        inputs: Sources,
        runtime: Runtime,
        monitoring: Monitoring,
    ) -> None:
        super().__init__(scope, construct_id)
        stage = runtime.config.stage
        self.bus = events.EventBus(self, "Bus", event_bus_name=f"incidents-{stage}")
        self.bus.archive(
            "Archive",
            description="every event on the bus, for replays after a consumer lost some",
            event_pattern=events.EventPattern(source=[EVENT_SOURCE_NAME]),
            retention=BUS_ARCHIVE_RETENTION,
        )
        removal = runtime.config.removal
        self.dead_letters = encrypted_queue(self, "DeliveryDeadLetters", fifo=True, removal=removal)
        self.queue = encrypted_queue(
            self, "Deliveries", fifo=True, removal=removal,
            consumer=(SENDER_TIMEOUT, self.dead_letters, RECEIVES_BEFORE_DEAD_LETTER),
        )  # fmt: skip
        self.unrecovered = encrypted_queue(
            self, "StreamFailuresUnrecovered", fifo=False, removal=removal
        )
        self.stream_failures = encrypted_queue(
            self, "StreamFailures", fifo=False, removal=removal,
            consumer=(RECOVERY_TIMEOUT, self.unrecovered, RECOVERY_ATTEMPTS),
        )  # fmt: skip
        accept(self.stream_failures, FAILURE_DESTINATION)
        environment = {
            "TABLE_NAME": inputs.table.table_name,
            DELIVERY_QUEUE_URL: self.queue.queue_url,
            EVENT_BUS_NAME: self.bus.event_bus_name,
        }
        self.publisher = self._publisher(inputs.table, runtime, environment)
        self.sender = self._sender(inputs, runtime, environment)
        self.recovery = self._recovery(inputs.table, runtime, environment)
        self.receipts = Receipts(self, "Receipts", table=inputs.table, runtime=runtime,
                                 monitoring=monitoring)  # fmt: skip
        self._alarms(monitoring)
        self._widgets(monitoring)

    def functions(self) -> list[lambda_.Function]:
        """The publisher, the sender, the stream's recovery and the receipts'."""
        return [self.publisher, self.sender, self.recovery, *self.receipts.functions()]

    def grant_enqueue(self, function: lambda_.Function) -> None:
        """Let an API function queue replays and test events (``DELIVERY_QUEUE_URL``)."""
        function.add_environment(DELIVERY_QUEUE_URL, self.queue.queue_url)
        function.add_to_role_policy(
            iam.PolicyStatement(actions=["sqs:SendMessage"], resources=[self.queue.queue_arn])
        )

    def _publisher(
        self, table: dynamodb.ITableV2, runtime: Runtime, environment: dict[str, str]
    ) -> lambda_.Function:
        spec = FunctionSpec(
            "publisher",
            "lambdas.publisher.handler",
            "incidents events out: stream to EventBridge and webhook queue",
            512,
            PUBLISHER_TIMEOUT,
            reserved=runtime.config.reserved("publisher"),
        )
        function, role = handler_function(self, spec, runtime, environment)
        self._grant_publishing(role, table)
        writes = [
            lambda_.FilterCriteria.filter(
                {
                    "eventName": lambda_.FilterRule.or_(*names),
                    "dynamodb": {"NewImage": {"Type": {"S": lambda_.FilterRule.is_equal(kind)}}},
                }
            )
            for kind, names in (
                (EVENT_TYPE, ["INSERT"]),
                (PAGE_TYPE, ["INSERT"]),
                (NOTIFICATION_TYPE, list(WRITES)),  # inserted: queued; settled: on the timeline
            )
        ]
        code_messages = lambda_.FilterCriteria.filter(
            {
                "eventName": lambda_.FilterRule.or_(*WRITES),
                "dynamodb": {
                    "NewImage": {
                        "Type": {"S": lambda_.FilterRule.is_equal(MESSAGE_TYPE)},
                        "attempts": {"N": lambda_.FilterRule.is_equal(UNTRIED)},
                    }
                },
            }
        )
        function.add_event_source(
            sources.DynamoEventSource(
                table,
                starting_position=lambda_.StartingPosition.TRIM_HORIZON,
                batch_size=STREAM_BATCH,
                bisect_batch_on_error=True,
                retry_attempts=STREAM_RETRIES,
                report_batch_item_failures=True,
                parallelization_factor=1,  # one batch a shard at a time: the stream's order
                on_failure=sources.SqsDlq(self.stream_failures),
                filters=[*writes, code_messages],
            )
        )
        return function

    def _grant_publishing(self, role: iam.Role, table: dynamodb.ITableV2) -> None:
        """What publishing an event calls: the table, the bus and the delivery queue."""
        role.add_to_policy(
            iam.PolicyStatement(actions=list(PUBLISHER_TABLE_ACTIONS), resources=[table.table_arn])
        )
        role.add_to_policy(
            iam.PolicyStatement(actions=["events:PutEvents"], resources=[self.bus.event_bus_arn])
        )
        role.add_to_policy(
            iam.PolicyStatement(actions=["sqs:SendMessage"], resources=[self.queue.queue_arn])
        )

    def _recovery(
        self, table: dynamodb.ITableV2, runtime: Runtime, environment: dict[str, str]
    ) -> lambda_.Function:
        """The stream batches the publisher's mapping gave up on, read back from the stream
        and published again (`lambdas.stream_recovery`)."""
        spec = FunctionSpec(
            "stream_recovery",
            "lambdas.stream_recovery.handler",
            "incidents events out: publishes the stream batches the publisher gave up on",
            512,
            RECOVERY_TIMEOUT,
            reserved=runtime.config.reserved("stream_recovery"),
        )
        function, role = handler_function(self, spec, runtime, environment)
        self._grant_publishing(role, table)
        role.add_to_policy(
            iam.PolicyStatement(
                actions=["dynamodb:GetShardIterator", "dynamodb:GetRecords"],
                resources=[str(table.table_stream_arn)],
            )
        )
        function.add_event_source(
            sources.SqsEventSource(
                self.stream_failures, batch_size=1, report_batch_item_failures=True
            )
        )
        return function

    def _page_email(self, domain: str | None) -> Provider:
        """The SES identity of `domain` and the configuration set pages are sent through
        (nothing without a domain: the sender then fails email pages, saying why)."""
        if domain is None:
            return NO_PROVIDER
        configuration_set = ses.ConfigurationSet(self, "PageEmails", reputation_metrics=True)
        configuration_set.add_event_destination(  # the receipts (`stacks.receipts`)
            "Receipts",
            destination=ses.EventDestination.event_bus(
                events.EventBus.from_event_bus_name(self, "DefaultBus", "default")
            ),
            events=list(RECEIPT_EVENTS),
        )
        identity = ses.EmailIdentity(
            self,
            "PageEmailDomain",
            identity=ses.Identity.domain(domain),
            configuration_set=configuration_set,
        )
        arn = Stack.of(self).format_arn(
            service="ses",
            resource="configuration-set",
            resource_name=configuration_set.configuration_set_name,
        )
        environment = {
            PAGE_EMAIL_SENDER: f"pages@{domain}",
            PAGE_EMAIL_CONFIGURATION_SET: configuration_set.configuration_set_name,
        }
        return Provider(environment, ["ses:SendEmail"], [identity.email_identity_arn, arn])

    def _page_phone(self, config: StageConfig) -> Provider:
        """The configuration set texts and calls go through, the stage's number and each
        account's caps (nothing without a number: the sender then fails SMS and voice pages,
        saying why)."""
        number = config.page_phone_number
        if number is None:
            return NO_PROVIDER
        configuration_set = smsvoice.CfnConfigurationSet(self, "PageTexts")
        environment = {
            PAGE_ORIGINATION_IDENTITY: number,
            PAGE_SMS_CONFIGURATION_SET: configuration_set.ref,
            **spend_caps_environment(config.spend_caps()),
        }
        actions = ["sms-voice:SendTextMessage", "sms-voice:SendVoiceMessage"]
        return Provider(environment, actions, [number, configuration_set.attr_arn])

    def _sender(
        self, inputs: Sources, runtime: Runtime, environment: dict[str, str]
    ) -> lambda_.Function:
        spec = FunctionSpec(
            "sender",
            "lambdas.sender.handler",
            "incidents events out: webhook deliveries and page notifications",
            512,
            SENDER_TIMEOUT,
            reserved=runtime.config.reserved("sender"),
        )
        secret = {"CURSOR_SECRET_ARN": inputs.cursor_secret.secret_arn,
                  PUBLIC_API_URL: inputs.api_url}  # fmt: skip
        providers = (
            self._page_email(runtime.config.page_email_domain),
            self._page_phone(runtime.config),
        )
        reaching = {name: value for p in providers for name, value in p.environment.items()}
        variables = {**environment, **secret, **reaching}
        function, role = handler_function(self, spec, runtime, variables)
        for provider in providers:
            provider.grant(role)
        table_arn = inputs.table.table_arn
        role.add_to_policy(
            iam.PolicyStatement(actions=list(SENDER_TABLE_ACTIONS), resources=[table_arn])
        )
        role.add_to_policy(
            iam.PolicyStatement(actions=["dynamodb:Query"], resources=[f"{table_arn}/index/GSI2"])
        )
        role.add_to_policy(
            iam.PolicyStatement(
                actions=["secretsmanager:GetSecretValue"],
                resources=[inputs.cursor_secret.secret_arn],
            )
        )
        role.add_to_policy(
            iam.PolicyStatement(
                actions=[  # receiving is the event source's grant
                    "sqs:ChangeMessageVisibility",
                    "sqs:DeleteMessage",
                    "sqs:SendMessage",
                ],
                resources=[self.queue.queue_arn],
            )
        )
        function.add_event_source(
            sources.SqsEventSource(
                self.queue,
                batch_size=SENDER_BATCH,
                report_batch_item_failures=True,
                max_concurrency=SENDER_MAX_CONCURRENCY,
            )
        )
        return function

    def _alarms(self, monitoring: Monitoring) -> None:
        for name, queue in (
            ("DeliveryDeadLetters", self.dead_letters),
            ("StreamFailuresUnrecovered", self.unrecovered),
        ):
            monitoring.alarm(
                name,
                queue.metric_approximate_number_of_messages_visible(
                    period=PERIOD, statistic="Maximum"
                ),
                1,
                "messages nothing will process again: look at them, then redrive",
            )
        monitoring.alarm(
            "StreamFailuresRetrying",
            self.stream_failures.metric_approximate_age_of_oldest_message(
                period=PERIOD, statistic="Maximum"
            ),
            UNRECOVERED_AGE_SECONDS,
            "a stream batch the publisher gave up on, still not published again after an hour",
        )
        monitoring.alarm(
            "EventsUnpublished",
            self.publisher.metric("IteratorAge", period=PERIOD, statistic="Maximum"),
            UNPUBLISHED_ALARM_MS,
            "a timeline event not published within a minute of its change",
        )
        monitoring.alarm(
            "DeliveriesStuck",
            self.queue.metric_approximate_age_of_oldest_message(period=PERIOD, statistic="Maximum"),
            SCHEDULE_EXCEEDED_SECONDS,
            "a delivery older than its whole retry schedule",
        )
        for name, meaning in PEOPLE_NOT_REACHED:
            monitoring.alarm(name, custom_metric(METRICS_NAMESPACE, name, "Sum"), 1, meaning)
        monitoring.alarm(
            "WebhooksDisabled",
            custom_metric(METRICS_NAMESPACE, "WebhooksDisabled", "Sum"),
            1,
            "an endpoint failed every delivery for 5 days and was disabled",
        )
        for name, function in (
            ("publisher", self.publisher),
            ("sender", self.sender),
            ("stream-recovery", self.recovery),
        ):
            monitoring.alarm(f"{name}-errors", function.metric_errors(period=PERIOD), 1, "errors")

    def _widgets(self, monitoring: Monitoring) -> None:
        deliveries = _counted("Deliveries", "Succeeded")
        notifications = _counted("Notifications", "Sent")
        codes = _counted("Codes", "Sent")
        monitoring.dashboard.add_widgets(
            cloudwatch.GraphWidget(title="Webhook deliveries", left=deliveries),
            cloudwatch.GraphWidget(title="Page notifications", left=notifications),
            cloudwatch.GraphWidget(title="Verification codes", left=codes),
            cloudwatch.GraphWidget(
                title="Change to delivery (p50, p99) and attempt time (p99), ms",
                left=[
                    custom_metric(METRICS_NAMESPACE, "DeliveryLatency", "p50"),
                    custom_metric(METRICS_NAMESPACE, "DeliveryLatency", "p99"),
                    custom_metric(METRICS_NAMESPACE, "DeliveryMilliseconds", "p99"),
                ],
            ),
            cloudwatch.GraphWidget(
                title="Oldest unpublished event (ms) and undelivered message (s)",
                left=[self.publisher.metric("IteratorAge", period=PERIOD, statistic="Maximum")],
                right=[
                    self.queue.metric_approximate_age_of_oldest_message(
                        period=PERIOD, statistic="Maximum"
                    )
                ],
            ),
        )
