"""An integration's ``auto_resolve_timeout`` (PagerDuty's), on DynamoDB Local and a
simulated clock: each alert moves its incident's timer on, the sweep resolves the incident
once the alerts stop, and an incident resolved first only loses its timer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from incidents.alerts.ingest import ingest_alert
from incidents.alerts.integrations import authenticate, create_integration
from incidents.alerts.lifecycle import auto_resolve
from incidents.alerts.models import ALERT_EVENTS, AlertAccepted, NewIntegration
from incidents.incident.commands import load_summary, update_incident
from incidents.models import Status
from incidents.requests import UpdateIncident
from incidents.store import Caller, Store, new_id
from incidents.timers.schedule import TimerKind
from incidents.timers.sweep import SweepReport, sweep

pytestmark = pytest.mark.integration
T0 = datetime(2027, 2, 1, 8, 0, 10, tzinfo=UTC)
HANDLERS = {TimerKind.AUTO_RESOLVE: auto_resolve}


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock(store: Store) -> Clock:
    moved = Clock()
    store.clock = moved
    sweep(store, T0, HANDLERS)  # the schedule has been running
    return moved


@pytest.fixture
def owner() -> Caller:
    return Caller(new_id("acct"), new_id("user"))


def send(store: Store, key: str, clock: Clock, seconds: int, dedup_key: str) -> AlertAccepted:
    clock.now = T0 + timedelta(seconds=seconds)
    alert = ALERT_EVENTS.validate_python(
        {"event_action": "trigger", "dedup_key": dedup_key,
         "payload": {"summary": f"disk full at {seconds} s", "source": "db-1",
                     "severity": "error"}}
    )  # fmt: skip
    caller, integration = authenticate(store, key)
    return ingest_alert(store, caller, integration, alert)


def sweep_at(store: Store, clock: Clock, seconds: int) -> SweepReport:
    clock.now = T0 + timedelta(seconds=seconds)
    return sweep(store, clock.now, HANDLERS)


def test_an_incident_resolves_its_timeout_after_its_last_alert(
    store: Store, clock: Clock, owner: Caller
) -> None:
    created = create_integration(
        store, owner, NewIntegration(name="prometheus", auto_resolve_timeout=300)
    )
    opened = send(store, created.key, clock, 0, "db-1/disk").incident_id
    assert opened is not None
    assert send(store, created.key, clock, 200, "db-1/disk").incident_id == opened  # joins
    assert sweep_at(store, clock, 400).fired == 0, "the join moved the timer on"
    report = sweep_at(store, clock, 501)
    resolved = load_summary(store, owner, opened)
    assert (report.fired, resolved.status) == (1, Status.RESOLVED)
    assert report.late_seconds == [1.0]
    assert sweep_at(store, clock, 600).fired == 0, "once"
    reopened = send(store, created.key, clock, 700, "db-1/disk").incident_id
    assert reopened not in (None, opened), "the key's next incident, with its own timer"
    assert sweep_at(store, clock, 1001).fired == 1


def test_an_incident_resolved_first_only_loses_its_timer(
    store: Store, clock: Clock, owner: Caller
) -> None:
    created = create_integration(store, owner, NewIntegration(name="x", auto_resolve_timeout=60))
    opened = send(store, created.key, clock, 0, "k").incident_id
    assert opened is not None
    resolved = update_incident(store, owner, opened, UpdateIncident(status=Status.RESOLVED))
    assert sweep_at(store, clock, 90).fired == 1
    assert load_summary(store, owner, opened).version == resolved.version, "no second change"


def test_without_a_timeout_no_timer_is_set(store: Store, clock: Clock, owner: Caller) -> None:
    created = create_integration(store, owner, NewIntegration(name="plain"))
    opened = send(store, created.key, clock, 0, "k").incident_id
    assert opened is not None
    assert sweep_at(store, clock, 900).fired == 0
    assert load_summary(store, owner, opened).status is Status.TRIGGERED
