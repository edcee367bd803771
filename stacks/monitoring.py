"""Alarms and a dashboard: throttling (table and every index), Lambda errors and
throttles, API 5xx and p99 latency, and the fan-out cost the handlers emit per page."""

from __future__ import annotations

from collections.abc import Mapping

from aws_cdk import Duration
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from constructs import Construct

from incidents.table import TABLE_SCHEMA
from lambdas.routes import Group

PERIOD = Duration.minutes(5)
FAN_OUT_METRICS = ("FanOutStreams", "FanOutRequests", "FanOutItemsRead", "FanOutReadUnits")


class Monitoring(Construct):
    """Every alarm notifies one SNS topic (subscribe an email through the stage config)."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        table: dynamodb.ITableV2,
        functions: Mapping[Group, lambda_.IFunction],
        api: apigw.RestApi,
        namespace: str,
        alarm_email: str | None,
    ) -> None:
        super().__init__(scope, construct_id)
        self.topic = sns.Topic(
            self,
            "Alarms",
            enforce_ssl=True,
            master_key=kms.Alias.from_alias_name(self, "SnsKey", "alias/aws/sns"),
        )
        if alarm_email:
            self.topic.add_subscription(subscriptions.EmailSubscription(alarm_email))
        self.alarms: list[cloudwatch.Alarm] = []
        for operation in ("Read", "Write"):
            self._alarm(
                f"Table{operation}Throttles",
                _throttles(table, operation, None),
                threshold=1,
                what=f"{operation.lower()} requests throttled on the table",
            )
            for index in TABLE_SCHEMA.indexes:
                self._alarm(
                    f"{index.name}{operation}Throttles",
                    _throttles(table, operation, index.name),
                    threshold=1,
                    what=f"{operation.lower()} requests throttled on {index.name}",
                )
        for group, function in functions.items():
            self._alarm(
                f"{group.value}-errors", function.metric_errors(period=PERIOD), 1, "Lambda errors"
            )
            self._alarm(
                f"{group.value}-throttles",
                function.metric_throttles(period=PERIOD),
                1,
                "Lambda throttles",
            )
        self._alarm("Api5xx", api.metric_server_error(period=PERIOD), 5, "API 5xx responses")
        self._alarm(
            "ApiLatencyP99",
            api.metric_latency(period=PERIOD, statistic="p99"),
            3000,
            "API p99 latency above 3 s",
            periods=3,
        )
        self._dashboard(namespace, table, functions)

    def _alarm(
        self,
        name: str,
        metric: cloudwatch.IMetric,
        threshold: float,
        what: str,
        periods: int = 1,
    ) -> None:
        alarm = cloudwatch.Alarm(
            self,
            name,
            metric=metric,
            threshold=threshold,
            evaluation_periods=periods,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description=what,
        )
        alarm.add_alarm_action(actions.SnsAction(self.topic))
        self.alarms.append(alarm)

    def _dashboard(
        self,
        namespace: str,
        table: dynamodb.ITableV2,
        functions: Mapping[Group, lambda_.IFunction],
    ) -> None:
        def fan_out(name: str, statistic: str) -> cloudwatch.Metric:
            return cloudwatch.Metric(
                namespace=namespace,
                metric_name=name,
                dimensions_map={"service": "incidents"},
                statistic=statistic,
                period=PERIOD,
            )

        dashboard = cloudwatch.Dashboard(self, "Dashboard")
        dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Fan-out per page (average)",
                left=[fan_out(name, "Average") for name in FAN_OUT_METRICS],
            ),
            cloudwatch.GraphWidget(
                title="Fan-out per page (p99)",
                left=[fan_out(name, "p99") for name in FAN_OUT_METRICS],
            ),
        )
        dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Throttled requests",
                left=[
                    _throttles(table, operation, index)
                    for operation in ("Read", "Write")
                    for index in (None, *[i.name for i in TABLE_SCHEMA.indexes])
                ],
            ),
            cloudwatch.GraphWidget(
                title="Lambda errors and duration p99",
                left=[f.metric_errors(period=PERIOD) for f in functions.values()],
                right=[
                    f.metric_duration(period=PERIOD, statistic="p99") for f in functions.values()
                ],
            ),
        )


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
