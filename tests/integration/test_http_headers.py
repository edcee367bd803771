"""Headers a client reads instead of the body: ``ETag`` on every answer carrying an incident
(and If-Match takes it as it is), ``If-None-Match`` answered 304 while nothing changed,
``Location`` on every 201, ``Retry-After`` on a throttled answer."""

from __future__ import annotations

import pytest

from incidents.store import Caller, new_id
from lambdas.routes import ROUTES
from local.openapi.document import MAINTENANCE_FROM, MAINTENANCE_TO
from tests.helpers.api_harness import Api
from tests.helpers.people import new_api_user

pytestmark = pytest.mark.integration


@pytest.fixture
def alice(api: Api) -> Caller:
    return new_api_user(api, new_id("acct"), "Alice")


def test_every_answer_with_an_incident_carries_its_version_as_etag(api: Api, alice: Caller) -> None:
    created = api.call("create_incident", alice, body={"title": "Disk full"})
    incident = created.body["summary"]["id"]
    assert (created.status, created.headers["ETag"]) == (201, '"1"')
    got = api.call("get_incident", alice, {"incident_id": incident})
    assert got.headers["ETag"] == '"1.1"'  # version 1, one event (created)
    by_number = api.call(
        "get_incident_by_number", alice, {"number": str(created.body["summary"]["number"])}
    )
    assert by_number.headers["ETag"] == got.headers["ETag"]
    updated = api.call(
        "update_incident",
        alice,
        {"incident_id": incident},
        body={"severity": "SEV2"},
        headers={"If-Match": got.headers["ETag"]},  # taken as it came
    )
    assert (updated.status, updated.headers["ETag"]) == (200, '"2"')
    stale = api.call(
        "update_incident",
        alice,
        {"incident_id": incident},
        body={"severity": "SEV3"},
        headers={"If-Match": got.headers["ETag"]},
    )
    assert (stale.status, stale.body["code"]) == (412, "precondition_failed")
    added = api.call(
        "add_participant",
        alice,
        {"incident_id": incident},
        body={"participant_id": alice.user_id, "role": "responder"},
    )
    assert added.headers["ETag"] == '"2"'
    resolved = api.call("resolve_incident", alice, {"incident_id": incident})
    assert resolved.headers["ETag"] == '"3"'


def test_if_none_match_is_a_304_until_anything_in_the_answer_changes(
    api: Api, alice: Caller
) -> None:
    incident = api.call("create_incident", alice, body={"title": "Disk full"}).body["summary"]["id"]
    path = {"incident_id": incident}
    tag = api.call("get_incident", alice, path).headers["ETag"]
    for known in (tag, f"W/{tag}", f'"0.0", {tag}', "*"):
        same = api.call("get_incident", alice, path, headers={"If-None-Match": known})
        assert (same.status, same.text, same.headers["ETag"]) == (304, "", tag), known
    for other in ('"0.0"', "garbage", ""):
        assert api.call("get_incident", alice, path, headers={"If-None-Match": other}).status == 200
    api.call(
        "add_participant",
        alice,
        path,
        body={"participant_id": alice.user_id, "role": "responder"},
    )  # the version stays; the participants (and the tag) change
    changed = api.call("get_incident", alice, path, headers={"If-None-Match": tag})
    assert changed.status == 200
    assert changed.headers["ETag"] != tag
    assert [p["participant_id"] for p in changed.body["participants"]] == [alice.user_id]
    gone = api.call(
        "get_incident", alice, {"incident_id": new_id("inc")}, headers={"If-None-Match": "*"}
    )
    assert gone.status == 404


def test_every_201_says_where_what_it_created_is(api: Api, alice: Caller) -> None:
    incident = api.call("create_incident", alice, body={"title": "Disk full"})
    incident_id = incident.body["summary"]["id"]
    note = api.call("add_note", alice, {"incident_id": incident_id}, body={"text": "on it"})
    team = api.call("create_team", alice, body={"name": "Storage"})
    bob = new_api_user(api, alice.account_id, "Bob")
    member = api.call(
        "add_member", alice, {"team_id": team.body["id"]}, body={"user_id": bob.user_id}
    )
    webhook = api.call("create_webhook", alice, body={"url": "https://hooks.example.com/in"})
    integration = api.call("create_integration", alice, body={"name": "prometheus"})
    api_key = api.call("create_api_key", alice, body={"name": "ci", "scopes": ["teams:read"]})
    beat = {"name": "nightly", "interval": 1, "integration_id": integration.body.get("id")}
    heartbeat = api.call("create_heartbeat", alice, body=beat)
    times = {"start_time": MAINTENANCE_FROM, "end_time": MAINTENANCE_TO}
    window = api.call(
        "create_maintenance_window",
        alice,
        body={"integration_id": integration.body.get("id"), "description": "upgrade", **times},
    )
    layer = {
        "name": "Primary",
        "start": MAINTENANCE_FROM,
        "users": [{"user_id": alice.user_id}],
        "rotation_virtual_start": MAINTENANCE_FROM,
        "rotation_turn_length_seconds": 86400,
    }
    schedule = api.call("create_schedule", alice, body={
        "name": "Ops", "time_zone": "Europe/London", "schedule_layers": [layer]})  # fmt: skip
    schedule_id = schedule.body.get("id")
    override = api.call(
        "create_override",
        alice,
        {"schedule_id": schedule_id},
        body={"start": MAINTENANCE_FROM, "end": MAINTENANCE_TO, "user_id": alice.user_id},
    )
    level = {"escalation_delay_in_minutes": 5, "targets": [{"type": "user", "id": alice.user_id}]}
    policy = api.call(
        "create_escalation_policy", alice, body={"name": "Ops", "escalation_rules": [level]}
    )
    mine = {"user_id": alice.user_id}
    email = {"type": "email_contact_method", "label": "Work", "address": "ops@example.com"}
    method = api.call("create_contact_method", alice, mine, body={"contact_method": email})
    method_id = method.body.get("contact_method", {}).get("id")
    rule = api.call("create_notification_rule", alice, mine, body={"notification_rule": {
        "start_delay_in_minutes": 0, "urgency": "high",
        "contact_method": {"id": method_id, "type": "email_contact_method"}}})  # fmt: skip
    rule_id = rule.body.get("notification_rule", {}).get("id")
    created = {
        "create_escalation_policy": (policy, f"/escalation-policies/{policy.body.get('id')}"),
        "create_contact_method": (method, f"/users/{alice.user_id}/contact-methods/{method_id}"),
        "create_notification_rule": (rule, f"/users/{alice.user_id}/notification-rules/{rule_id}"),
        "create_incident": (incident, f"/incidents/{incident_id}"),
        "add_note": (note, f"/incidents/{incident_id}/timeline"),
        "create_team": (team, f"/teams/{team.body['id']}"),
        "add_member": (member, f"/teams/{team.body['id']}/members/{bob.user_id}"),
        "create_webhook": (webhook, f"/webhooks/{webhook.body.get('id')}"),
        "create_integration": (integration, f"/integrations/{integration.body.get('id')}"),
        "create_api_key": (api_key, f"/api-keys/{api_key.body.get('id')}"),
        "create_heartbeat": (heartbeat, "/heartbeats/nightly"),
        "create_maintenance_window": (window, f"/maintenance-windows/{window.body.get('id')}"),
        "create_schedule": (schedule, f"/schedules/{schedule_id}"),
        "create_override": (
            override,
            f"/schedules/{schedule_id}/overrides/{override.body.get('id')}",
        ),
    }
    assert set(created) == {name for name, route in ROUTES.items() if route.status == 201}
    for name, (reply, location) in created.items():
        assert (reply.status, reply.headers.get("Location")) == (201, location), name


def test_a_location_keeps_the_stage_the_client_called_through(api: Api, alice: Caller) -> None:
    reply = api.call("create_team", alice, body={"name": "Storage"}, stage="prod")
    assert reply.headers["Location"] == f"/prod/teams/{reply.body['id']}"
