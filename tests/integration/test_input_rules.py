"""The input rules round 6 found loose or undocumented (issue 66, point 5), over HTTP: a
number is a JSON integer where the document says integer, a rule's refusal names the rule,
alert text is cut rather than refused, and what PagerDuty leaves optional is optional."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from incidents.alerts.models import SOURCE_MAX
from incidents.store import Caller, new_id
from tests.helpers.api_harness import Api

pytestmark = pytest.mark.integration


@pytest.fixture
def alice() -> Caller:
    return Caller(new_id("acct"), new_id("user"))


@pytest.fixture
def integration(api: Api, alice: Caller) -> dict[str, Any]:
    reply = api.call("create_integration", alice, body={"name": "prometheus"})
    assert reply.status == 201, reply.body
    return reply.body  # type: ignore[no-any-return]


@pytest.mark.parametrize("interval", ["5", True, 5.5])
def test_a_heartbeat_interval_is_a_json_integer(
    api: Api, alice: Caller, integration: dict[str, Any], interval: object
) -> None:
    """Before, ``"5"`` was five minutes and ``true`` one (``5.0`` is the integer 5, as JSON
    Schema's ``integer`` says)."""
    body = {"name": "backup", "interval": interval, "integration_id": integration["id"]}
    created = api.call("create_heartbeat", alice, body=body)
    assert (created.status, created.body["code"]) == (400, "validation_error"), created.body
    assert "interval" in created.body["message"]
    assert api.call("create_heartbeat", alice, body={**body, "interval": 5}).status == 201
    changed = api.call("update_heartbeat", alice, {"name": "backup"}, body={"interval": interval})
    assert (changed.status, changed.body["code"]) == (400, "validation_error"), changed.body


@pytest.mark.parametrize("window", ["300", 300.5, True])
def test_a_grouping_time_window_is_a_json_integer(
    api: Api, alice: Caller, integration: dict[str, Any], window: object
) -> None:
    path = {"integration_id": integration["id"]}
    grouping = {"type": "time", "time_window": window}
    reply = api.call("update_integration", alice, path, body={"alert_grouping": grouping})
    assert (reply.status, reply.body["code"]) == (400, "validation_error"), reply.body
    taken = {**grouping, "time_window": 300}
    done = api.call("update_integration", alice, path, body={"alert_grouping": taken})
    assert done.status == 200, done.body
    assert done.body["alert_grouping"]["time_window"] == 300


@pytest.mark.parametrize("window", [120, 3601, 86399])
def test_a_time_window_outside_the_rule_is_refused_naming_the_rule(
    api: Api, alice: Caller, integration: dict[str, Any], window: int
) -> None:
    """Before, the message spelled pydantic's two union branches (``int`` and
    ``literal[86400]``) and their errors instead of the rule."""
    path = {"integration_id": integration["id"]}
    for grouping in (
        {"type": "time", "time_window": window},
        {"type": "content_based", "fields": ["source"], "time_window": window},
    ):
        reply = api.call("update_integration", alice, path, body={"alert_grouping": grouping})
        assert (reply.status, reply.body["code"]) == (400, "validation_error"), reply.body
        message = reply.body["message"]
        assert "from 300 to 3,600, or 86,400 (a day)" in message, message
        assert "literal" not in message.lower(), message


def test_a_source_past_its_limit_is_cut_not_refused(
    api: Api, alice: Caller, integration: dict[str, Any]
) -> None:
    """Before, a 256-character ``payload.source`` refused the whole alert with a 255 limit
    no document stated."""
    source = "db-" + "x" * 400
    payload = {"summary": "disk full", "source": source, "severity": "error"}
    headers = {"Authorization": f"Bearer {integration['key']}"}
    body = {"event_action": "trigger", "dedup_key": "k", "payload": payload}
    reply = api.call("send_alert", None, body=body, headers=headers)
    assert (reply.status, reply.body["status"]) == (202, "opened"), reply.body
    path = {"incident_id": reply.body["incident_id"]}
    kept = api.call("get_incident", alice, path).body["details"]["alert"]["source"]
    assert kept == source[: SOURCE_MAX - 1] + "…"
    changed = api.call(
        "enqueue_change", None, body={"payload": payload}, headers=headers
    )  # a change's source too
    assert changed.status == 202, changed.body


def test_a_maintenance_window_s_description_is_optional(
    api: Api, alice: Caller, integration: dict[str, Any]
) -> None:
    start = datetime.now(UTC)
    times = {"start_time": start.isoformat(), "end_time": (start + timedelta(hours=1)).isoformat()}
    body = {"integration_id": integration["id"], **times}
    created = api.call("create_maintenance_window", alice, body=body)
    assert (created.status, created.body["description"]) == (201, None), created.body
    shown = api.call("get_maintenance_window", alice, {"window_id": created.body["id"]})
    assert shown.body["description"] is None
