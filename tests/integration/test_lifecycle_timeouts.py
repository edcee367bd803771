"""An integration's lifecycle timeouts (PagerDuty's), on DynamoDB Local and a simulated
clock. ``auto_resolve_timeout``: each alert moves its incident's timer on, the sweep
resolves the incident once the alerts stop, and an incident resolved first only loses its
timer. ``acknowledgement_timeout``: an acknowledged incident not resolved in time returns to
triggered (on its timeline, naming the timer); a resolve clears the timer, a new
acknowledge moves it, and a timer never reopens a resolved incident."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from incidents.alerts import lifecycle
from incidents.alerts.ingest import ingest_alert
from incidents.alerts.integrations import authenticate, create_integration, update_integration
from incidents.alerts.lifecycle import acknowledgement_timeout, auto_resolve
from incidents.alerts.models import (
    ALERT_EVENTS,
    AlertAccepted,
    IntegrationChanges,
    IntegrationWithKey,
    NewIntegration,
)
from incidents.incident.commands import load_summary, update_incident
from incidents.incident.create import create_incident
from incidents.keys import timer_key
from incidents.models import IncidentChanged, IncidentSummary, Severity, Status, Timeout
from incidents.paging import PageRequest
from incidents.requests import CreateIncident, UpdateIncident
from incidents.store import Caller, Store, new_id
from incidents.timeline.queries import EventRequest, incident_timeline
from incidents.timers.firing import FireHere
from incidents.timers.schedule import TimerKind
from incidents.timers.sweep import SweepReport, sweep

pytestmark = pytest.mark.integration
T0 = datetime(2027, 2, 1, 8, 0, 10, tzinfo=UTC)
HANDLERS = {
    TimerKind.AUTO_RESOLVE: auto_resolve,
    TimerKind.ACKNOWLEDGEMENT: acknowledgement_timeout,
}
ACK_TIMEOUT = 600


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock(store: Store) -> Clock:
    moved = Clock()
    store.clock = moved
    sweep(store, T0, FireHere(HANDLERS))  # the schedule has been running
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
    return sweep(store, clock.now, FireHere(HANDLERS))


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


@pytest.fixture
def paged(store: Store, owner: Caller) -> IntegrationWithKey:
    """An integration whose acknowledged incidents return to triggered after 10 minutes."""
    return create_integration(
        store, owner, NewIntegration(name="pager", acknowledgement_timeout=ACK_TIMEOUT)
    )


def acknowledge(store: Store, clock: Clock, who: Caller, incident_id: str, seconds: int) -> None:
    clock.now = T0 + timedelta(seconds=seconds)
    update_incident(store, who, incident_id, UpdateIncident(status=Status.ACKNOWLEDGED))


def opened_by(store: Store, clock: Clock, integration: IntegrationWithKey) -> str:
    opened = send(store, integration.key, clock, 0, new_id("key")).incident_id
    assert opened is not None
    return opened


def ack_timer_set(store: Store, owner: Caller, incident_id: str) -> bool:
    pk, sk = timer_key(owner.account_id, TimerKind.ACKNOWLEDGEMENT.value, incident_id)
    return store.get(pk, sk) is not None


def test_an_acknowledged_incident_returns_to_triggered_after_its_timeout(
    store: Store, clock: Clock, owner: Caller, paged: IntegrationWithKey
) -> None:
    opened = opened_by(store, clock, paged)
    assert not ack_timer_set(store, owner, opened), "set when acknowledged, not when opened"
    acknowledge(store, clock, owner, opened, 30)
    assert sweep_at(store, clock, 30 + ACK_TIMEOUT - 1).fired == 0
    report = sweep_at(store, clock, 30 + ACK_TIMEOUT + 5)
    assert (report.fired, report.late_seconds) == (1, [5.0])
    assert load_summary(store, owner, opened).status is Status.TRIGGERED
    last = incident_timeline(
        store, owner, opened, EventRequest(PageRequest(limit=1, descending=True))
    ).items[0]
    assert isinstance(last, IncidentChanged)
    assert (last.timeout, last.actor.user_id) == (Timeout.ACKNOWLEDGEMENT, paged.id)
    assert last.changes.status is not None
    assert (last.changes.status.from_, last.changes.status.to) == (
        Status.ACKNOWLEDGED, Status.TRIGGERED,
    )  # fmt: skip
    assert sweep_at(store, clock, 2 * ACK_TIMEOUT + 60).fired == 0, "once"


def test_a_resolve_clears_the_timer_and_a_new_acknowledge_moves_it(
    store: Store, clock: Clock, owner: Caller, paged: IntegrationWithKey
) -> None:
    resolved, moved = opened_by(store, clock, paged), opened_by(store, clock, paged)
    acknowledge(store, clock, owner, resolved, 0)
    acknowledge(store, clock, owner, moved, 0)
    clock.now = T0 + timedelta(seconds=60)
    update_incident(store, owner, resolved, UpdateIncident(status=Status.RESOLVED))
    assert not ack_timer_set(store, owner, resolved), "cleared in the resolve's transaction"
    update_incident(store, owner, moved, UpdateIncident(status=Status.TRIGGERED))
    acknowledge(store, clock, owner, moved, 300)
    assert sweep_at(store, clock, ACK_TIMEOUT + 1).fired == 0, "the second acknowledge moved it"
    assert load_summary(store, owner, moved).status is Status.ACKNOWLEDGED
    assert sweep_at(store, clock, 300 + ACK_TIMEOUT + 1).fired == 1
    assert load_summary(store, owner, moved).status is Status.TRIGGERED
    assert load_summary(store, owner, resolved).status is Status.RESOLVED


def test_a_resolve_clears_the_timer_even_once_the_timeout_is_gone(
    store: Store, clock: Clock, owner: Caller, paged: IntegrationWithKey
) -> None:
    opened = opened_by(store, clock, paged)
    acknowledge(store, clock, owner, opened, 0)
    update_integration(store, owner, paged.id, IntegrationChanges(acknowledgement_timeout=None))
    update_incident(store, owner, opened, UpdateIncident(status=Status.RESOLVED))
    assert not ack_timer_set(store, owner, opened), "cleared: the timeout is not read"
    update_incident(store, owner, opened, UpdateIncident(status=Status.TRIGGERED))
    acknowledge(store, clock, owner, opened, 60)  # no timeout now: no timer
    assert sweep_at(store, clock, ACK_TIMEOUT + 1).fired == 0, "the old timer is gone"
    assert load_summary(store, owner, opened).status is Status.ACKNOWLEDGED


def test_an_incident_resolved_while_its_timer_fires_stays_resolved(
    store: Store, clock: Clock, owner: Caller, paged: IntegrationWithKey,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    opened = opened_by(store, clock, paged)
    acknowledge(store, clock, owner, opened, 0)
    reads: list[Status] = []

    def read_then_resolve(store: Store, caller: Caller, incident_id: str) -> IncidentSummary:
        summary = load_summary(store, caller, incident_id)
        reads.append(summary.status)
        if len(reads) == 1:  # a person resolves it between the timer's read and its change
            update_incident(store, owner, opened, UpdateIncident(status=Status.RESOLVED))
        return summary

    monkeypatch.setattr(lifecycle, "load_summary", read_then_resolve)
    report = sweep_at(store, clock, ACK_TIMEOUT + 1)
    assert (report.fired, report.lost, report.failed) == (0, 1, 0), "the resolve cleared it"
    assert reads == [Status.ACKNOWLEDGED, Status.RESOLVED], "read again, not reopened"
    assert load_summary(store, owner, opened).status is Status.RESOLVED


def test_incidents_people_open_have_no_acknowledgement_timer(
    store: Store, clock: Clock, owner: Caller, paged: IntegrationWithKey
) -> None:
    request = CreateIncident(title="by hand", severity=Severity.SEV2)
    opened = create_incident(store, owner, request).summary.id
    acknowledge(store, clock, owner, opened, 0)
    assert not ack_timer_set(store, owner, opened)
