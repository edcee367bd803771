"""Alarms that reach a person, and a dashboard: incidents first (how fast they are
acknowledged and resolved per severity, what comes in and goes out, what limits it), then
what the lists cost.

Every alarm notifies one SNS topic on ALARM and again on OK, so a page is followed by its
all-clear. The topic is encrypted with a customer-managed key whose policy lets CloudWatch
use it: the AWS-managed ``alias/aws/sns`` key cannot be, and an alarm publishing to a topic
under it is silently dropped. Subscribers come from the stage config (``alarmEmails``,
``alarmHttpsEndpoint`` for a pager or chat webhook).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from aws_cdk import Duration, NestedStack
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from constructs import Construct

from incidents.models import Severity
from incidents.table import TABLE_SCHEMA
from lambdas.routes import ROUTES, Group
from stacks.config import StageConfig

PERIOD = Duration.minutes(5)
INCIDENT_PERIOD = Duration.hours(1)
"""Incidents are few: an hour's p50 and p90 of their times take more than one value."""
INDEXES = tuple(index.name for index in TABLE_SCHEMA.indexes)
AGGREGATES = ("incident_insights",)
"""Incident queries that read aggregates, not pages of a fan-out."""
LISTS = tuple(
    name
    for name, route in ROUTES.items()
    if route.group is Group.INCIDENT_QUERIES and name not in AGGREGATES
)
"""The list routes: each page reports its fan-out cost with a ``list`` dimension."""
NEAR = 0.8
"""An alarm on a limit fires at 80 % of it: early enough to act before requests fail."""
API_4XX_RATE = 0.25
"""A quarter of requests refused for 15 minutes: a broken client release or sign-in."""
LATENCY_P99_MS = 3000
INTEGRATION_LATENCY_P99_MS = 2500
TABLE_OPERATIONS = (
    dynamodb.Operation.GET_ITEM,
    dynamodb.Operation.BATCH_GET_ITEM,
    dynamodb.Operation.QUERY,
    dynamodb.Operation.PUT_ITEM,
    dynamodb.Operation.UPDATE_ITEM,
    dynamodb.Operation.DELETE_ITEM,
    dynamodb.Operation.TRANSACT_WRITE_ITEMS,
)
"""The operations the functions call (`stacks.permissions`), for SystemErrors."""


@dataclass(frozen=True)
class Watched:
    """What the alarms watch: the table, the API and each function with its timeout."""

    table: dynamodb.ITableV2
    api: apigw.RestApi
    functions: Mapping[Group, lambda_.Function]
    timeout: Duration
    namespace: str


class Monitoring(NestedStack):
    """The alarm topic and its subscribers, the alarms, and the dashboard."""

    def __init__(
        self, scope: Construct, construct_id: str, *, watched: Watched, config: StageConfig
    ) -> None:
        super().__init__(scope, construct_id)
        self.key = _alarm_key(self, config)
        self.topic = sns.Topic(self, "Alarms", enforce_ssl=True, master_key=self.key)
        for email in config.alarm_emails:
            self.topic.add_subscription(subscriptions.EmailSubscription(email))
        if config.alarm_https_endpoint:
            self.topic.add_subscription(subscriptions.UrlSubscription(config.alarm_https_endpoint))
        self.alarms: list[cloudwatch.Alarm] = []
        self._table_alarms(watched.table)
        self._function_alarms(watched, config)
        self._api_alarms(watched.api)
        self.alarm(
            "ShardCountGrowths",
            custom_metric(watched.namespace, "ShardCountGrowths", "Sum"),
            1,
            "a dynamic shard count grew (a hot partition key was spread further)",
        )
        self.dashboard = _dashboard(self, watched)

    def _table_alarms(self, table: dynamodb.ITableV2) -> None:
        for operation in ("Read", "Write"):
            for index in (None, *INDEXES):
                where = index or "the table"
                self.alarm(
                    f"{index or 'Table'}{operation}Throttles",
                    _throttles(table, operation, index),
                    1,
                    f"{operation.lower()} requests throttled on {where}",
                )
        self.alarm(
            "TableSystemErrors",
            table.metric_system_errors_for_operations(
                operations=list(TABLE_OPERATIONS), period=PERIOD
            ),
            1,
            "DynamoDB answered requests with 500 (SystemErrors)",
        )

    def _function_alarms(self, watched: Watched, config: StageConfig) -> None:
        timeout_ms = watched.timeout.to_milliseconds()
        for group, function in watched.functions.items():
            name = group.value
            self.alarm(f"{name}-errors", function.metric_errors(period=PERIOD), 1, "errors")
            self.alarm(
                f"{name}-throttles", function.metric_throttles(period=PERIOD), 1, "throttles"
            )
            self.alarm(
                f"{name}-duration-p99",
                function.metric_duration(period=PERIOD, statistic="p99"),
                NEAR * timeout_ms,
                f"p99 duration within 20 % of the {timeout_ms / 1000:.0f} s timeout",
            )
            reserved = config.reserved(group)
            if reserved:
                self.alarm(
                    f"{name}-concurrency",
                    function.metric("ConcurrentExecutions", period=PERIOD, statistic="Maximum"),
                    NEAR * reserved,
                    f"concurrent executions at 80 % of the {reserved} reserved",
                )
        self.alarm(
            "AccountConcurrency",
            lambda_.Function.metric_all_concurrent_executions(period=PERIOD, statistic="Maximum"),
            NEAR * config.account_concurrency_limit,
            f"the account's Lambda concurrency at 80 % of {config.account_concurrency_limit}",
        )

    def _api_alarms(self, api: apigw.RestApi) -> None:
        self.alarm("Api5xx", api.metric_server_error(period=PERIOD), 5, "API 5xx responses")
        sustained = [  # each over 15 minutes
            (
                "Api4xxRate",
                api.metric_client_error(period=PERIOD, statistic="Average"),
                API_4XX_RATE,
                "a quarter of API requests answered 4xx",
            ),
            (
                "ApiLatencyP99",
                api.metric_latency(period=PERIOD, statistic="p99"),
                LATENCY_P99_MS,
                "API p99 latency above 3 s",
            ),
            (
                "ApiIntegrationLatencyP99",
                api.metric_integration_latency(period=PERIOD, statistic="p99"),
                INTEGRATION_LATENCY_P99_MS,
                "functions' p99 latency behind the API above 2.5 s",
            ),
        ]
        for name, metric, threshold, what in sustained:
            self.alarm(name, metric, threshold, f"{what} for 15 minutes", periods=3)

    def alarm(
        self,
        name: str,
        metric: cloudwatch.IMetric,
        threshold: float,
        what: str,
        periods: int = 1,
    ) -> None:
        """An alarm at or above `threshold` for `periods` periods, paging on ALARM and OK."""
        alarm = cloudwatch.Alarm(
            self,
            name,
            metric=metric,
            threshold=threshold,
            evaluation_periods=periods,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description=f"{name}: {what}",
        )
        self._page(alarm)

    def silence_alarm(self, name: str, metric: cloudwatch.IMetric, periods: int, what: str) -> None:
        """An alarm when `metric` (a count a period) stays under one for `periods` periods:
        something that should happen every period stopped (no data is silence too)."""
        alarm = cloudwatch.Alarm(
            self,
            name,
            metric=metric,
            threshold=1,
            evaluation_periods=periods,
            comparison_operator=cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.BREACHING,
            alarm_description=f"{name}: {what}",
        )
        self._page(alarm)

    def _page(self, alarm: cloudwatch.Alarm) -> None:
        """The topic told on ALARM and on OK."""
        action = actions.SnsAction(self.topic)
        alarm.add_alarm_action(action)
        alarm.add_ok_action(action)
        self.alarms.append(alarm)


def _alarm_key(scope: Construct, config: StageConfig) -> kms.Key:
    """A customer-managed key that CloudWatch may use to publish to the encrypted topic."""
    key = kms.Key(
        scope,
        "AlarmsKey",
        description=f"incidents {config.stage}: encrypts the alarm topic",
        enable_key_rotation=True,
        removal_policy=config.removal,
    )
    key.add_to_resource_policy(
        iam.PolicyStatement(
            sid="AllowCloudWatchAlarmsToPublish",
            principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
            actions=["kms:Decrypt", "kms:GenerateDataKey*"],
            resources=["*"],
        )
    )
    return key


def _dashboard(scope: Construct, watched: Watched) -> cloudwatch.Dashboard:
    """Incidents on top (what a manager opens it for), then fan-out cost per list and the
    functions' errors and duration; events out adds its deliveries below."""
    dashboard = cloudwatch.Dashboard(scope, "Dashboard")
    for row in _incident_rows(watched):
        dashboard.add_widgets(*row)
    dashboard.add_widgets(
        _header("Lists and functions", "Fan-out cost per list page, errors, webhooks out.")
    )
    per_list = [
        ("Read units per page (p99)", "FanOutReadUnits", "p99"),
        ("Round trips per page (p99)", "FanOutRoundTrips", "p99"),
        ("Milliseconds per page (p99)", "FanOutMilliseconds", "p99"),
    ]
    dashboard.add_widgets(
        *[
            cloudwatch.GraphWidget(
                title=title,
                left=[custom_metric(watched.namespace, metric, statistic, name) for name in LISTS],
            )
            for title, metric, statistic in per_list
        ]
    )
    dashboard.add_widgets(
        *[
            cloudwatch.GraphWidget(
                title=f"{name}: contributing streams vs streams (average)",
                left=[
                    custom_metric(watched.namespace, "FanOutContributors", "Average", name),
                    custom_metric(watched.namespace, "FanOutStreams", "Average", name),
                ],
            )
            for name in LISTS
        ]
    )
    functions = watched.functions.values()
    dashboard.add_widgets(
        cloudwatch.GraphWidget(
            title="Lambda errors and duration p99",
            left=[f.metric_errors(period=PERIOD) for f in functions],
            right=[f.metric_duration(period=PERIOD, statistic="p99") for f in functions],
        ),
    )
    return dashboard


def _incident_rows(watched: Watched) -> list[Sequence[cloudwatch.IWidget]]:
    """The Incidents section, row by row: its header; MTTA and MTTR by severity; what came
    in and went out; what limits it."""
    header = _header(
        "Incidents",
        "Times to first acknowledge (MTTA) and to resolve (MTTR) per severity, as the publisher"
        " reads them from the timeline; alerts in, webhooks out; and what limits them.",
    )
    namespace = watched.namespace
    times = [
        _by_severity(f"{what} {stat} by severity, seconds", namespace, metric, stat)
        for what, metric in (("MTTA", "SecondsToFirstAck"), ("MTTR", "SecondsToResolve"))
        for stat in ("p50", "p90")
    ]
    return [[header], times, _volume_row(namespace), _limits_row(watched)]


def _volume_row(namespace: str) -> Sequence[cloudwatch.IWidget]:
    """Incidents opened per severity, alerts in, webhook attempts out (three at 8 wide):
    the sender's ``Deliveries<outcome>`` (a pending one failed and will be tried again)."""
    deliveries = [
        custom_metric(namespace, f"Deliveries{outcome}", "Sum")
        for outcome in ("Succeeded", "Pending", "Failed")
    ]
    return [
        _by_severity("Incidents opened by severity", namespace, "IncidentsOpened", "Sum", 8),
        _graph("Alerts received", [custom_metric(namespace, "AlertsReceived", "Sum")], 8),
        _graph("Webhook attempts: delivered, to retry, given up", deliveries, 8),
    ]


def _limits_row(watched: Watched) -> Sequence[cloudwatch.IWidget]:
    """What holds incidents back: throttles, shard changes, the API's errors and latency."""
    api = watched.api
    errors = [
        api.metric_client_error(period=PERIOD, statistic="Sum"),
        api.metric_server_error(period=PERIOD, statistic="Sum"),
    ]
    latency = [api.metric_latency(period=PERIOD, statistic=stat) for stat in ("p50", "p99")]
    return [
        _graph("Throttled requests", _all_throttles(watched.table)),
        _shard_changes(watched.namespace),
        _graph("API 4xx and 5xx responses", errors),
        _graph("API latency p50 and p99, ms", latency),
    ]


def _header(title: str, text: str) -> cloudwatch.TextWidget:
    """A section's title across the dashboard: the graphs under it belong together."""
    return cloudwatch.TextWidget(markdown=f"## {title}\n{text}", width=24, height=2)


def _graph(
    title: str,
    left: Sequence[cloudwatch.IMetric],
    width: int = 6,
    right: Sequence[cloudwatch.IMetric] = (),
) -> cloudwatch.GraphWidget:
    """A graph `width` of the dashboard's 24 columns wide: four a row, or three at 8 (lists
    for jsii, which refuses a tuple)."""
    return cloudwatch.GraphWidget(title=title, left=list(left), right=list(right), width=width)


def _by_severity(
    title: str, namespace: str, name: str, statistic: str, width: int = 6
) -> cloudwatch.GraphWidget:
    """One line per severity, SEV1 to SEV5 (the publisher's only dimension beside service:
    team and account would make a metric per tenant), over `INCIDENT_PERIOD`."""
    lines = [
        custom_metric(namespace, name, statistic, dimensions={"severity": severity.value})
        for severity in Severity
    ]
    return _graph(title, [line.with_(period=INCIDENT_PERIOD) for line in lines], width)


def _shard_changes(namespace: str) -> cloudwatch.GraphWidget:
    """Counts grown and halved, moves running (left); items the mover moved (right)."""
    return _graph(
        "Shard changes",
        [
            custom_metric(namespace, "ShardCountGrowths", "Sum"),
            custom_metric(namespace, "ShardCountHalvings", "Sum"),
            custom_metric(namespace, "ShardMovesRunning", "Maximum"),
        ],
        right=[custom_metric(namespace, "ShardItemsMoved", "Sum")],
    )


def custom_metric(
    namespace: str,
    name: str,
    statistic: str,
    list_name: str | None = None,
    *,
    dimensions: Mapping[str, str] | None = None,
) -> cloudwatch.Metric:
    """A metric the functions emit (EMF) with their ``service`` dimension, per list when
    `list_name` is given, and with any other `dimensions`; labelled by those values."""
    extra = {**(dimensions or {}), **({"list": list_name} if list_name else {})}
    return cloudwatch.Metric(
        namespace=namespace,
        metric_name=name,
        dimensions_map={"service": "incidents", **extra},
        statistic=statistic,
        period=PERIOD,
        label=" ".join(extra.values()) or None,
    )


def _all_throttles(table: dynamodb.ITableV2) -> list[cloudwatch.Metric]:
    """Read and write throttles of the table and of each index."""
    return [
        _throttles(table, operation, index)
        for operation in ("Read", "Write")
        for index in (None, *INDEXES)
    ]


def _throttles(table: dynamodb.ITableV2, operation: str, index: str | None) -> cloudwatch.Metric:
    dimensions = {"TableName": table.table_name}
    if index:
        dimensions["GlobalSecondaryIndexName"] = index
    return cloudwatch.Metric(
        namespace="AWS/DynamoDB",
        metric_name=f"{operation}ThrottleEvents",
        dimensions_map=dimensions,
        statistic="Sum",
        period=PERIOD,
    )
