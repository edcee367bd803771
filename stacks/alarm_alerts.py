"""CloudWatch alarms as alerts: each alarm of the stage's AWS account that changes to ALARM
triggers an alert and each that returns to OK resolves it, through the same `POST /alerts`
every other tool calls. Two rules on the default event bus send the alarm's state change to
an EventBridge API destination, shaped into the Events API v2 body by an input transformer
(the alarm's ARN is the `dedup_key`); the connection sends an integration's key, kept in
Secrets Manager (the stage's ``alarmIntegrationKeySecret``), as the ``Authorization``
header. Off unless that setting names a secret.

EventBridge does not retry a 4xx (a 401 once the key was rotated and the secret not), and a
target with nowhere to put what it gave up on drops it silently: each rule's target
retries for a day and then parks the event in a dead-letter queue, and the stage's alarm
topic hears of a parked event and of a failed invocation."""

from __future__ import annotations

from aws_cdk import Duration, NestedStack, RemovalPolicy, SecretValue
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from constructs import Construct

from stacks.monitoring import Monitoring
from stacks.nag import FAILURE_DESTINATION, accept
from stacks.queues import encrypted_queue

ALARM_STATE_CHANGE = "CloudWatch Alarm State Change"
ACTIONS = {"ALARM": "trigger", "OK": "resolve"}
"""The alarm state each rule watches, and the alert it sends."""
SENDS_PER_SECOND = 10
"""The API destination's pace: an alarm storm queues in EventBridge (it retries for 24 h)
instead of spending the account's alert quota at once."""
RETRY_ATTEMPTS = 185
"""EventBridge's most: with its back-off they span the day `MAX_EVENT_AGE` allows."""
MAX_EVENT_AGE = Duration.hours(24)
PERIOD = Duration.minutes(5)
PARKED_REASON = (
    "This queue is a dead-letter queue: where the alarm rules' targets park the events "
    "EventBridge gave up on (cdk-nag only recognizes a queue's redrive target)."
)


def alarm_alert(action: str) -> events.RuleTargetInput:
    """The Events API v2 body of an alarm's state change."""
    path = events.EventField.from_path
    return events.RuleTargetInput.from_object(
        {
            "event_action": action,
            "dedup_key": path("$.resources[0]"),
            "payload": {
                "summary": path("$.detail.alarmName"),
                "source": f"cloudwatch:{path('$.region')}:{path('$.account')}",
                "severity": "critical",
                "timestamp": path("$.time"),
                "custom_details": {
                    "reason": path("$.detail.state.reason"),
                    "account": path("$.account"),
                    "region": path("$.region"),
                },
            },
        }
    )


class AlarmAlerts(NestedStack):
    """The connection, the API destination and one rule per alarm state."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        api_url: str,
        key_secret_name: str,
        monitoring: Monitoring,
        removal: RemovalPolicy,
    ) -> None:
        super().__init__(scope, construct_id)
        undelivered = encrypted_queue(self, "Undelivered", fifo=False, removal=removal)
        accept(undelivered, FAILURE_DESTINATION, reason=PARKED_REASON)
        connection = events.Connection(
            self,
            "Connection",
            authorization=events.Authorization.api_key(
                "Authorization", SecretValue.secrets_manager(key_secret_name)
            ),
            description="CloudWatch alarms to POST /alerts with an integration's key",
        )
        destination = events.ApiDestination(
            self,
            "Alerts",
            connection=connection,
            endpoint=f"{api_url}alerts",
            http_method=events.HttpMethod.POST,
            rate_limit_per_second=SENDS_PER_SECOND,
            description="the stage's POST /alerts",
        )
        for state, action in ACTIONS.items():
            target = targets.ApiDestination(
                destination,
                event=alarm_alert(action),
                dead_letter_queue=undelivered,
                retry_attempts=RETRY_ATTEMPTS,
                max_event_age=MAX_EVENT_AGE,
            )
            rule = events.Rule(
                self,
                f"Alarm{state.title()}",
                description=f"a CloudWatch alarm in {state}: {action} its alert",
                event_pattern=events.EventPattern(
                    source=["aws.cloudwatch"],
                    detail_type=[ALARM_STATE_CHANGE],
                    detail={"state": {"value": [state]}},
                ),
                targets=[target],
            )
            failed = cloudwatch.Metric(
                namespace="AWS/Events",
                metric_name="FailedInvocations",
                dimensions_map={"RuleName": rule.rule_name},
                period=PERIOD,
                statistic="Sum",
            )
            monitoring.alarm(f"AlarmAlerts{state.title()}Failed", failed, 1, f"{action}s failing")
        parked = undelivered.metric_approximate_number_of_messages_visible(
            period=PERIOD, statistic="Maximum"
        )
        monitoring.alarm("AlarmAlertsUndelivered", parked, 1, "alarms' alerts given up on")
