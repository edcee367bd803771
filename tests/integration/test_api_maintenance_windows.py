"""Maintenance windows over HTTP: people create, list, end and delete them; an alert the
window holds answers 202 ``suppressed``; nothing crosses accounts; the scheduled sweep
resolves what still fires at a ``resolve_on_end`` window's end."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from incidents.alerts.ingest import ingest_alert
from incidents.alerts.integrations import authenticate, create_integration
from incidents.alerts.models import ALERT_EVENTS, NewIntegration, SuppressedStatus
from incidents.maintenance.commands import create_window, list_suppressed
from incidents.maintenance.models import NewMaintenanceWindow
from incidents.store import Caller, build_store, new_id
from lambdas import runtime
from local.events.messaging import Messaging
from tests.helpers.api_harness import Api, Reply
from tests.integration.conftest import API_TABLE
from tests.integration.test_sweeper_function import run_the_function

pytestmark = pytest.mark.integration
DISK_FULL = {
    "event_action": "trigger",
    "dedup_key": "db-1/disk",
    "payload": {"summary": "disk full", "source": "db-1", "severity": "error"},
}


@pytest.fixture
def alice() -> Caller:
    return Caller(new_id("acct"), new_id("user"))


def integration(api: Api, who: Caller) -> dict[str, Any]:
    reply = api.call("create_integration", who, body={"name": "prometheus"})
    assert reply.status == 201, reply.body
    return reply.body  # type: ignore[no-any-return]


def window(api: Api, who: Caller, *, starts: int = 0, lasts: int = 60, **body: Any) -> Reply:
    """A window from `starts` minutes from now, `lasts` minutes long."""
    start = datetime.now(UTC) + timedelta(minutes=starts)
    times = {"start_time": start.isoformat(),
             "end_time": (start + timedelta(minutes=lasts)).isoformat()}  # fmt: skip
    return api.call(
        "create_maintenance_window", who, body={"description": "upgrade", **times, **body}
    )


def alert(api: Api, key: str, body: dict[str, Any]) -> Reply:
    return api.call("send_alert", None, body=body, headers={"Authorization": f"Bearer {key}"})


def test_a_window_s_life_over_http(api: Api, alice: Caller) -> None:
    sender = integration(api, alice)
    created = window(api, alice, integration_id=sender["id"])
    assert created.status == 201, created.body
    path = {"window_id": created.body["id"]}
    assert created.headers["Location"].endswith(f"/maintenance-windows/{path['window_id']}")
    assert (created.body["status"], created.body["suppressed_alerts"]) == ("ongoing", 0)

    held = alert(api, sender["key"], DISK_FULL)
    assert (held.status, held.body) == (
        202, {"status": "suppressed", "dedup_key": "db-1/disk", "incident_id": None}
    )  # fmt: skip
    shown = api.call("get_maintenance_window", alice, path)
    assert (shown.status, shown.body["suppressed_alerts"]) == (200, 1)
    kept = api.call("maintenance_window_alerts", alice, path, query={"limit": ["10"]}).body
    assert [(a["dedup_key"], a["status"], a["count"]) for a in kept["items"]] == [
        ("db-1/disk", "triggered", 1)
    ]
    refused = api.call("delete_maintenance_window", alice, path)
    assert (refused.status, refused.body["code"]) == (409, "conflict")
    assert "end it early instead" in refused.body["message"]

    ended = api.call("end_maintenance_window", alice, path)
    assert (ended.status, ended.body["status"], ended.body["ended_early"]) == (200, "ended", True)
    again = api.call("end_maintenance_window", alice, path)
    assert (again.status, again.body["code"]) == (409, "conflict")
    opened = alert(api, sender["key"], {**DISK_FULL, "dedup_key": "db-2/disk"})
    assert (opened.status, opened.body["status"]) == (202, "opened")
    listed = api.call("list_maintenance_windows", alice, query={"limit": ["1"]}).body
    assert [w["id"] for w in listed["items"]] == [path["window_id"]]


def test_a_window_not_started_is_deleted(api: Api, alice: Caller) -> None:
    team = api.call("create_team", alice, body={"name": "Storage"}).body
    created = window(api, alice, starts=30, team_id=team["id"], resolve_on_end=True)
    assert (created.status, created.body["status"]) == (201, "scheduled")
    path = {"window_id": created.body["id"]}
    refused = api.call("end_maintenance_window", alice, path)
    assert (refused.status, refused.body["code"]) == (409, "conflict")
    assert "delete it instead" in refused.body["message"]
    assert api.call("delete_maintenance_window", alice, path).status == 204
    assert api.call("get_maintenance_window", alice, path).status == 404


def test_another_account_s_windows_are_404s(api: Api, alice: Caller) -> None:
    sender = integration(api, alice)
    path = {"window_id": window(api, alice, integration_id=sender["id"]).body["id"]}
    mallory = Caller(new_id("acct"), new_id("user"))
    for name in ("get_maintenance_window", "end_maintenance_window",
                 "delete_maintenance_window", "maintenance_window_alerts"):  # fmt: skip
        reply = api.call(name, mallory, path)
        assert (reply.status, reply.body["code"]) == (404, "not_found"), name
    foreign = window(api, mallory, integration_id=sender["id"])
    assert (foreign.status, foreign.body["code"]) == (404, "not_found")
    assert api.call("list_maintenance_windows", mallory).body["items"] == []
    assert api.call("get_maintenance_window", alice, path).body["status"] == "ongoing"


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ({"integration_id": None}, "integration_id: leave it out rather than null"),
        ({"team_id": "team_" + "x" * 27}, "exactly one of team_id and integration_id"),
        ({"lasts": -5}, "end_time must be after start_time"),
        ({"starts": -120}, "end_time: must be in the future"),
        ({"lasts": 90 * 24 * 60 + 1}, "at most 90 days"),
        ({"description": ""}, "description"),
        ({"start_time": "tomorrow"}, "start_time"),
        ({"resolve_on_end": 1}, "resolve_on_end"),
        ({"ends_at": "2030-01-01T00:00:00Z"}, "ends_at"),
    ],
)
def test_a_bad_window_is_a_400_that_names_the_problem(
    api: Api, alice: Caller, body: dict[str, Any], problem: str
) -> None:
    sender = integration(api, alice)
    reply = window(api, alice, **{"integration_id": sender["id"], **body})
    assert (reply.status, reply.body["code"]) == (400, "validation_error"), reply.body
    assert problem in reply.body["message"]


def test_the_scheduled_sweep_resolves_what_fires_at_a_window_s_end(
    api: Api, messaging: Messaging
) -> None:
    """As deployed (`lambdas.sweeper`): a window that ended a minute ago with
    ``resolve_on_end`` has its still-firing alert resolved by one invocation."""
    owner = Caller(new_id("acct"), new_id("user"))
    earlier = build_store(runtime.dynamodb(), API_TABLE, b"s" * 32)
    three_minutes_ago = datetime.now(UTC) - timedelta(minutes=3)
    earlier.clock = lambda: three_minutes_ago
    created = create_integration(earlier, owner, NewIntegration(name="cron"))
    request = NewMaintenanceWindow(
        integration_id=created.id, start_time=three_minutes_ago,
        end_time=three_minutes_ago + timedelta(minutes=2), description="upgrade",
        resolve_on_end=True,
    )  # fmt: skip
    held = create_window(earlier, owner, request)
    caller, sender = authenticate(earlier, created.key)
    answer = ingest_alert(earlier, caller, sender, ALERT_EVENTS.validate_python(DISK_FULL))
    assert answer.status.value == "suppressed"

    assert run_the_function(messaging)["failed"] == 0
    (kept,) = list_suppressed(earlier, owner, held.id).items
    assert (kept.status, kept.resolved_at_end) == (SuppressedStatus.RESOLVED, True)
    earlier.engine.close()
