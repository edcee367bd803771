"""CloudWatch alarms as alerts: each alarm of the stage's AWS account that changes to ALARM
triggers an alert and each that returns to OK resolves it, through the same `POST /alerts`
every other tool calls. Two rules on the default event bus send the alarm's state change to
an EventBridge API destination, shaped into the Events API v2 body by an input transformer
(the alarm's ARN is the `dedup_key`); the connection sends an integration's key, kept in
Secrets Manager (the stage's ``alarmIntegrationKeySecret``), as the ``Authorization``
header. Off unless that setting names a secret."""

from __future__ import annotations

from aws_cdk import SecretValue
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from constructs import Construct

ALARM_STATE_CHANGE = "CloudWatch Alarm State Change"
ACTIONS = {"ALARM": "trigger", "OK": "resolve"}
"""The alarm state each rule watches, and the alert it sends."""
SENDS_PER_SECOND = 10
"""The API destination's pace: an alarm storm queues in EventBridge (it retries for 24 h)
instead of spending the account's alert quota at once."""


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


class AlarmAlerts(Construct):
    """The connection, the API destination and one rule per alarm state."""

    def __init__(
        self, scope: Construct, construct_id: str, *, api_url: str, key_secret_name: str
    ) -> None:
        super().__init__(scope, construct_id)
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
            events.Rule(
                self,
                f"Alarm{state.title()}",
                description=f"a CloudWatch alarm in {state}: {action} its alert",
                event_pattern=events.EventPattern(
                    source=["aws.cloudwatch"],
                    detail_type=[ALARM_STATE_CHANGE],
                    detail={"state": {"value": [state]}},
                ),
                targets=[targets.ApiDestination(destination, event=alarm_alert(action))],
            )
