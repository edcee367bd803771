"""CloudWatch alarms as alerts (issue 39, point 6): the stage's rules, as synthesized, turn a
recorded alarm state change into the body EventBridge would post, and the alerts handler
opens an incident for ALARM and resolves it for OK, with the key as the connection sends it
(the whole ``Authorization`` header)."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from incidents.store import Caller, new_id
from tests.helpers.api_harness import Api
from tests.helpers.synth import Stages, Synthesized, resources

pytestmark = pytest.mark.integration
DATA = Path(__file__).resolve().parents[1] / "data"
SECRET = "incidents/alarm-integration-key"
PLACEHOLDER = re.compile(r"<([A-Za-z0-9_.-]+)>")


@pytest.fixture(scope="module")
def alarmed(synthesized: Stages) -> Synthesized:
    stage: dict[str, dict[str, object]] = {"alarmed": {"alarmIntegrationKeySecret": SECRET}}
    return synthesized("alarmed", stage)


def rule_for(synth: Synthesized, state: str) -> dict[str, Any]:
    rules: list[dict[str, Any]] = [
        r["Properties"]
        for r in resources(synth, "AWS::Events::Rule").values()
        if r["Properties"].get("EventPattern", {}).get("detail", {}).get("state")
        == {"value": [state]}
    ]
    (rule,) = rules
    return rule


def transformed(rule: dict[str, Any], event: dict[str, Any]) -> Any:
    """The body EventBridge posts: the target's input template with each placeholder
    replaced by its path's value (a JSON value outside quotes, escaped text inside)."""
    transformer = rule["Targets"][0]["InputTransformer"]
    paths, template = transformer["InputPathsMap"], transformer["InputTemplate"]
    out, last = [], 0
    for found in PLACEHOLDER.finditer(template):
        before = template[last : found.start()]
        value = _at(event, paths[found.group(1)])
        quoted = (template[: found.start()].count('"') - template.count('\\"')) % 2 == 1
        out += [before, json.dumps(value)[1:-1] if quoted else json.dumps(value)]
        last = found.end()
    return json.loads("".join([*out, template[last:]]))


def _at(event: dict[str, Any], path: str) -> Any:
    value: Any = event
    for name, index in re.findall(r"\.([A-Za-z0-9_-]+)(?:\[(\d+)\])?", path):
        value = value[name]
        if index:
            value = value[int(index)]
    return value


def test_the_alarm_rules_send_the_alert_with_the_integration_key(alarmed: Synthesized) -> None:
    (connection,) = resources(alarmed, "AWS::Events::Connection").values()
    auth = connection["Properties"]["AuthParameters"]["ApiKeyAuthParameters"]
    assert auth["ApiKeyName"] == "Authorization"
    assert SECRET in json.dumps(auth["ApiKeyValue"])
    (destination,) = resources(alarmed, "AWS::Events::ApiDestination").values()
    assert destination["Properties"]["HttpMethod"] == "POST"
    assert json.dumps(destination["Properties"]["InvocationEndpoint"]).endswith('alerts"]]}')
    for state in ("ALARM", "OK"):
        rule = rule_for(alarmed, state)
        assert rule["EventPattern"]["detail-type"] == ["CloudWatch Alarm State Change"]


def test_an_alarm_opens_an_incident_and_its_recovery_resolves_it(
    api: Api, alarmed: Synthesized
) -> None:
    alice = Caller(new_id("acct"), new_id("user"))
    key = api.call("create_integration", alice, body={"name": "cloudwatch"}).body["key"]
    alarm = json.loads((DATA / "cloudwatch_alarm_state_change.json").read_text())
    body = transformed(rule_for(alarmed, "ALARM"), alarm)
    assert body["dedup_key"] == "arn:aws:cloudwatch:us-east-1:123456789012:alarm:checkout-5xx"
    opened = api.call("send_alert", None, body=body, headers={"Authorization": key})
    assert (opened.status, opened.body["status"]) == (202, "opened"), opened.body
    path = {"incident_id": opened.body["incident_id"]}
    summary = api.call("get_incident", alice, path).body["summary"]
    assert (summary["title"], summary["severity"]) == ("checkout-5xx", "SEV1")
    recovered = copy.deepcopy(alarm)
    recovered["detail"]["state"]["value"] = "OK"
    recovered["time"] = "2026-11-26T08:05:00Z"
    ok = transformed(rule_for(alarmed, "OK"), recovered)
    resolved = api.call("send_alert", None, body=ok, headers={"Authorization": key})
    assert (resolved.status, resolved.body["status"]) == (202, "resolved"), resolved.body
    assert api.call("get_incident", alice, path).body["summary"]["status"] == "RESOLVED"


def test_an_alarm_alert_eventbridge_gives_up_on_is_parked_and_pages(alarmed: Synthesized) -> None:
    """EventBridge does not retry a 4xx (a rotated key's 401), and a target without a
    dead-letter queue drops what it gives up on: each rule's target retries for a day,
    then parks the event, and both a parked event and a failed invocation page."""
    (queue_id,) = [
        name for name in resources(alarmed, "AWS::SQS::Queue") if "AlarmAlertsUndelivered" in name
    ]
    for state in ("ALARM", "OK"):
        (target,) = rule_for(alarmed, state)["Targets"]
        assert target["RetryPolicy"] == {
            "MaximumRetryAttempts": 185,
            "MaximumEventAgeInSeconds": 86400,
        }
        assert queue_id in json.dumps(target["DeadLetterConfig"])
    alarms = resources(alarmed, "AWS::CloudWatch::Alarm").values()
    watched = {
        alarm["Properties"].get("MetricName"): alarm["Properties"]["AlarmActions"]
        for alarm in alarms
        if "AlarmAlerts" in alarm["Properties"]["AlarmDescription"]
    }
    assert set(watched) == {"FailedInvocations", "ApproximateNumberOfMessagesVisible"}
    assert all(actions for actions in watched.values()), "each pages the alarm topic"
