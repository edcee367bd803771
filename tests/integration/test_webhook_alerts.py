"""Alertmanager's and Grafana's own webhook bodies on the alert routes (issue 66, point 2):
each alert of a group opens, joins or resolves its fingerprint's incident, replayed from
bodies the real tools sent (`tests/data/README.md` says how each was recorded)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from incidents.alerts.grouped import MAX_GROUPED_ALERTS
from incidents.store import Caller, new_id
from tests.helpers.api_harness import Api, Reply

pytestmark = pytest.mark.integration
DATA = Path(__file__).resolve().parents[1] / "data"
FIRING = json.loads((DATA / "alertmanager_webhook_firing.json").read_text())
MIXED = json.loads((DATA / "alertmanager_webhook_mixed.json").read_text())
GRAFANA = json.loads((DATA / "grafana_webhook_firing.json").read_text())


@pytest.fixture
def alice() -> Caller:
    return Caller(new_id("acct"), new_id("user"))


def integration_key(api: Api, who: Caller, **body: Any) -> str:
    reply = api.call("create_integration", who, body={"name": "alertmanager", **body})
    assert reply.status == 201, reply.body
    return str(reply.body["key"])


def post(api: Api, key: str, body: dict[str, Any], route: str = "send_alert") -> Reply:
    """A body as the tools send it: the key as ``Authorization: Bearer`` (Alertmanager's
    ``http_config.authorization``, Grafana's authorization credentials)."""
    return api.call(route, None, body=body, headers={"Authorization": f"Bearer {key}"})


def incident(api: Api, who: Caller, incident_id: str) -> dict[str, Any]:
    reply = api.call("get_incident", who, {"incident_id": incident_id})
    assert reply.status == 200, reply.body
    return reply.body  # type: ignore[no-any-return]


def test_alertmanager_s_webhook_opens_an_incident_per_alert_and_resolves_each(
    api: Api, alice: Caller
) -> None:
    """Before, ``400 "body: Unable to extract tag using discriminator 'event_action'"``,
    and Alertmanager does not retry a 4xx."""
    key = integration_key(api, alice)
    opened = post(api, key, FIRING)
    assert opened.status == 202, opened.body
    first, second = opened.body["alerts"]
    assert [first["status"], second["status"]] == ["opened", "opened"]
    assert [first["dedup_key"], second["dedup_key"]] == [a["fingerprint"] for a in FIRING["alerts"]]
    db1 = incident(api, alice, first["incident_id"])
    assert db1["summary"]["title"] == "Disk on db-1 is 95% full", "annotations.summary"
    assert db1["summary"]["severity"] == "SEV1", "severity=critical"
    sent = db1["details"]["alert"]
    assert (sent["source"], sent["client"], sent["client_url"]) == (
        "db-1:9100", "Alertmanager", "http://vm:9093",
    )  # fmt: skip
    details = sent["custom_details"]
    assert details["labels"] == FIRING["alerts"][0]["labels"]
    assert details["annotations"] == FIRING["alerts"][0]["annotations"], "newlines kept"
    assert details["group"]["group_labels"] == FIRING["groupLabels"]
    assert details["group"]["common_annotations"] == FIRING["commonAnnotations"]
    assert sent["links"] == [{"href": FIRING["alerts"][0]["generatorURL"], "text": "source"}]
    db2 = incident(api, alice, second["incident_id"])
    assert db2["summary"]["title"] == "The disk on db-2 is 85% full", "annotations.description"
    assert db2["summary"]["severity"] == "SEV3", "severity=warning"

    again = post(api, key, FIRING, route="enqueue_event")
    assert again.body == opened.body, "a retry answers what the first delivery got"
    for accepted in opened.body["alerts"]:
        path = {"incident_id": accepted["incident_id"]}
        assert api.call("incident_alerts", alice, path).body["alerts"] == 1, "counted once"

    mixed = post(api, key, MIXED)
    assert mixed.status == 202, mixed.body
    resolved, still = mixed.body["alerts"]
    assert (resolved["status"], resolved["incident_id"]) == ("resolved", first["incident_id"])
    assert still["incident_id"] == second["incident_id"], "the firing one stays on its incident"
    assert incident(api, alice, first["incident_id"])["summary"]["status"] == "RESOLVED"
    assert incident(api, alice, second["incident_id"])["summary"]["status"] == "TRIGGERED"


def test_a_group_s_alerts_join_one_incident_when_the_integration_groups(
    api: Api, alice: Caller
) -> None:
    """A grouped body opens or joins per alert, as separate alerts would: time grouping puts
    the group's second alert on the first's incident."""
    key = integration_key(api, alice, alert_grouping={"type": "time"})
    reply = post(api, key, FIRING)
    assert [a["status"] for a in reply.body["alerts"]] == ["opened", "attached"]
    first, second = reply.body["alerts"]
    assert first["incident_id"] == second["incident_id"]
    path = {"incident_id": first["incident_id"]}
    assert api.call("incident_alerts", alice, path).body["alerts"] == 2


def test_grafana_s_webhook_contact_point_opens_and_resolves(api: Api, alice: Caller) -> None:
    key = integration_key(api, alice)
    opened = post(api, key, GRAFANA)
    assert opened.status == 202, opened.body
    (accepted,) = opened.body["alerts"]
    assert (accepted["status"], accepted["dedup_key"]) == ("opened", "15c59b0a380bd9f1")
    shown = incident(api, alice, accepted["incident_id"])
    assert shown["summary"]["title"] == "WebhookAlert", "no annotations: the alertname"
    assert shown["summary"]["severity"] == "SEV2", "no severity label: error, as Alertmanager's"
    sent = shown["details"]["alert"]
    assert (sent["source"], sent["client"]) == ("Grafana", "Grafana")
    assert sent["custom_details"]["values"] == {"A": 1}
    assert sent["custom_details"]["group"]["org_id"] == 1
    assert [link["text"] for link in sent["links"]] == ["source", "silence"], "empty URLs unset"

    (alert,) = GRAFANA["alerts"]
    ended = {**alert, "status": "resolved", "endsAt": "2026-11-29T06:45:00Z"}
    resolved = post(api, key, {**GRAFANA, "status": "resolved", "state": "ok", "alerts": [ended]})
    assert resolved.body["alerts"][0]["status"] == "resolved"
    assert shown["summary"]["id"] == resolved.body["alerts"][0]["incident_id"]
    status = incident(api, alice, accepted["incident_id"])["summary"]["status"]
    assert status == "RESOLVED"


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"summary": "neither"}, "event_action"),
        ({"alerts": [{"status": "firing"}]}, "alerts.0.fingerprint"),
        ({"alerts": [{"status": "pending", "fingerprint": "f"}]}, "alerts.0.status"),
        (
            {"alerts": [{"status": "firing", "fingerprint": "f"}] * (MAX_GROUPED_ALERTS + 1)},
            "alerts",
        ),
        (
            {"alerts": [{"status": "firing", "fingerprint": "f", "labels": {"job": "a\u202eb"}}]},
            "alerts.0, read as PagerDuty's payload.source: bidirectional control",
        ),
    ],
)
def test_a_body_neither_tool_sends_is_a_400_naming_why(
    api: Api, alice: Caller, body: dict[str, Any], says: str
) -> None:
    reply = post(api, integration_key(api, alice), body)
    assert (reply.status, reply.body["code"]) == (400, "validation_error"), reply.body
    assert says in reply.body["message"]
