"""Alert grouping (PagerDuty's ``time`` and ``content_based``) on DynamoDB Local and a
simulated clock: triggers with different dedup keys join one open incident while their
group's window lasts (rolling from the last grouped alert), each key then moving that
incident; racing triggers of one group open one incident."""

from __future__ import annotations

import dataclasses
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from incidents.alerts.ingest import alert_count, ingest_alert
from incidents.alerts.integrations import authenticate, create_integration
from incidents.alerts.models import (
    ALERT_EVENTS,
    AlertAccepted,
    AlertStatus,
    IntegrationWithKey,
    NewIntegration,
)
from incidents.errors import ThrottledError
from incidents.incident.commands import load_summary
from incidents.models import EventType, Status
from incidents.paging import PageRequest
from incidents.store import Caller, Store, new_id
from incidents.timeline.queries import EventRequest, incident_timeline

pytestmark = pytest.mark.integration
T0 = datetime(2027, 3, 1, 9, 0, tzinfo=UTC)


@dataclasses.dataclass
class Alerts:
    """One account's integration with its grouping, on a clock the test moves."""

    store: Store
    owner: Caller
    integration: IntegrationWithKey
    now: datetime = T0

    def send(self, seconds: float, action: str, dedup_key: str, **payload: Any) -> AlertAccepted:
        self.now = T0 + timedelta(seconds=seconds)
        body = {"summary": "disk full", "source": "db-1", "severity": "error", **payload}
        alert = ALERT_EVENTS.validate_python(
            {"event_action": action, "dedup_key": dedup_key, "payload": body}
        )
        caller, integration = authenticate(self.store, self.integration.key)
        return ingest_alert(self.store, caller, integration, alert)

    def trigger(self, seconds: float, dedup_key: str, **payload: Any) -> str:
        incident = self.send(seconds, "trigger", dedup_key, **payload).incident_id
        assert incident is not None
        return incident

    def status(self, incident_id: str) -> Status:
        return load_summary(self.store, self.owner, incident_id).status


def grouped(store: Store, grouping: dict[str, Any]) -> Alerts:
    owner = Caller(new_id("acct"), new_id("user"))
    alerts = Alerts(store, owner, None)  # type: ignore[arg-type]  # its clock first
    timed = dataclasses.replace(store, clock=lambda: alerts.now)
    alerts.store = timed
    request = NewIntegration.model_validate({"name": "prometheus", "alert_grouping": grouping})
    alerts.integration = create_integration(timed, owner, request)
    return alerts


def test_time_grouping_joins_within_a_rolling_window(store: Store) -> None:
    alerts = grouped(store, {"type": "time", "time_window": 300})
    first = alerts.trigger(0, "disk")
    assert alerts.send(200, "trigger", "cpu").status is AlertStatus.ATTACHED
    assert alerts.trigger(450, "memory") == first, "rolling: 250 s after the last grouped"
    assert alerts.trigger(460, "disk") == first, "the same key again: no new grouped alert"
    later = alerts.trigger(751, "network")
    assert later != first, "301 s after the last grouped alert: a new incident"
    assert alerts.trigger(800, "swap") == later, "which the group now names"
    assert alert_count(alerts.store, alerts.owner.account_id, first) == 4
    received = [
        event.alert.dedup_key
        for event in incident_timeline(
            alerts.store, alerts.owner, first, EventRequest(PageRequest(limit=50))
        ).items
        if event.type is EventType.ALERT_RECEIVED
    ]
    assert sorted(received) == ["cpu", "disk", "memory"], "each key's first join, at once"


def test_a_grouped_key_moves_its_incident_and_a_resolve_ends_the_group(store: Store) -> None:
    alerts = grouped(store, {"type": "time"})  # no window: until the incident resolves
    first = alerts.trigger(0, "disk")
    assert alerts.trigger(86_400 * 3, "cpu") == first
    assert alerts.send(86_400 * 3 + 1, "acknowledge", "cpu").incident_id == first
    assert alerts.status(first) is Status.ACKNOWLEDGED
    assert alerts.send(86_400 * 3 + 2, "resolve", "cpu").status is AlertStatus.RESOLVED
    after = alerts.trigger(86_400 * 3 + 3, "memory")
    assert after != first
    assert alerts.status(first) is Status.RESOLVED


def test_content_grouping_on_all_fields(store: Store) -> None:
    fields = ["source", "custom_details.cluster"]
    alerts = grouped(store, {"type": "content_based", "fields": fields, "aggregate": "all"})
    first = alerts.trigger(0, "a", custom_details={"cluster": "eu-1", "n": 1})
    assert alerts.trigger(10, "b", custom_details={"cluster": "eu-1", "n": 2}) == first
    other_cluster = alerts.trigger(20, "c", custom_details={"cluster": "us-1"})
    other_source = alerts.trigger(30, "d", source="db-2", custom_details={"cluster": "eu-1"})
    assert len({first, other_cluster, other_source}) == 3


def test_content_grouping_on_any_field(store: Store) -> None:
    fields = ["source", "component"]
    alerts = grouped(store, {"type": "content_based", "fields": fields, "aggregate": "any"})
    first = alerts.trigger(0, "a", source="db-1", component="disk")
    assert alerts.trigger(10, "b", source="db-2", component="disk") == first, "component"
    assert alerts.trigger(20, "c", source="db-2", component="cpu") == first, "source, via b"
    assert alerts.trigger(30, "d", source="web-1") != first, "shares neither"


def test_racing_triggers_of_one_group_open_one_incident(store: Store) -> None:
    alerts = grouped(store, {"type": "time", "time_window": 3600})

    def fire(n: int) -> AlertAccepted:
        """One sender, retrying a 429 as PagerDuty's clients do (a loaded machine can spend
        an alert's budget on its racers)."""
        for attempt in range(4):
            try:
                return alerts.send(0, "trigger", f"host-{n}")
            except ThrottledError:
                time.sleep(0.1 * 2**attempt)
        return alerts.send(0, "trigger", f"host-{n}")

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(fire, range(16)))
    incidents = {answer.incident_id for answer in answers}
    assert len(incidents) == 1, incidents
    assert [a.status for a in answers].count(AlertStatus.OPENED) == 1
    opened = incidents.pop()
    assert opened is not None
    assert alert_count(alerts.store, alerts.owner.account_id, opened) == 16


def test_alerts_without_any_of_the_fields_are_not_grouped(store: Store) -> None:
    alerts = grouped(store, {"type": "content_based", "fields": ["component"]})
    assert alerts.trigger(0, "a") != alerts.trigger(10, "b"), "no component: by key alone"
    assert alerts.trigger(20, "c", component="disk") == alerts.trigger(30, "d", component="disk")


def test_a_key_resolved_and_sent_again_joins_the_groups_next_incident(store: Store) -> None:
    alerts = grouped(store, {"type": "time", "time_window": 600})
    first = alerts.trigger(0, "flapping")
    alerts.send(10, "resolve", "flapping")
    second = alerts.trigger(20, "other")
    again = alerts.send(30, "trigger", "flapping")  # the same body, within the seen window
    assert (again.status, again.incident_id) == (AlertStatus.ATTACHED, second)
    assert second != first
