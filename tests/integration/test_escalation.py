"""Escalation (PagerDuty's), on DynamoDB Local and a simulated clock: level 1 is paged when
the incident triggers, each level after the one before waited its delay, the policy loops
``num_loops`` times and then stays at its last level; an acknowledge stops it, triggered
again it starts over; a policy edited mid-incident changes nothing for it (the copy it
started with); a schedule target pages whoever is on call; each page is decided once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from incidents.alerts.ingest import ingest_alert
from incidents.alerts.integrations import authenticate, create_integration
from incidents.alerts.lifecycle import acknowledgement_timeout
from incidents.alerts.models import ALERT_EVENTS, NewIntegration
from incidents.escalation.engine import fire_escalation, pages_of
from incidents.escalation.models import EscalationPolicyRequest
from incidents.escalation.policies import create_policy, replace_policy
from incidents.incident.commands import update_incident
from incidents.models import Status
from incidents.requests import UpdateIncident
from incidents.schedules.commands import create_schedule
from incidents.schedules.models import ScheduleRequest
from incidents.store import Caller, Store, new_id
from incidents.timers.firing import FireHere
from incidents.timers.schedule import Timer, TimerKind
from incidents.timers.sweep import sweep
from tests.helpers.people import new_user

pytestmark = pytest.mark.integration
T0 = datetime(2027, 4, 5, 10, 0, 5, tzinfo=UTC)
HANDLERS = {
    TimerKind.ESCALATION: fire_escalation,
    TimerKind.ACKNOWLEDGEMENT: acknowledgement_timeout,
}


class World:
    """An account with two people, a schedule with the second on call, and a clock."""

    def __init__(self, store: Store) -> None:
        self.store, self.now = store, T0
        store.clock = lambda: self.now
        self.owner = Caller(new_id("acct"), new_id("user"))
        self.bob = new_user(store, self.owner.account_id, "Bob")
        self.carol = new_user(store, self.owner.account_id, "Carol")
        self.schedule = create_schedule(store, self.owner, ScheduleRequest.model_validate({
            "name": "Primary", "time_zone": "UTC",
            "schedule_layers": [{
                "name": "Week", "start": "2027-01-04T00:00:00Z",
                "users": [{"user_id": self.carol}],
                "rotation_virtual_start": "2027-01-04T00:00:00Z",
                "rotation_turn_length_seconds": 7 * 86_400,
            }],
        })).id  # fmt: skip
        sweep(store, T0 - timedelta(seconds=1), FireHere(HANDLERS))  # the schedule's marker

    def policy(self, first: str, num_loops: int = 1, **rule: Any) -> str:
        request = EscalationPolicyRequest.model_validate({
            "name": "Payments", "num_loops": num_loops,
            "escalation_rules": [
                {"escalation_delay_in_minutes": 5, "targets": [{"type": "user", "id": first}],
                 **rule},
                {"escalation_delay_in_minutes": 10,
                 "targets": [{"type": "schedule_reference", "id": self.schedule}]},
            ],
        })  # fmt: skip
        return create_policy(self.store, self.owner, request).id

    def trigger(self, policy_id: str, dedup_key: str = "db-1/disk") -> str:
        created = create_integration(
            self.store, self.owner,
            NewIntegration(name=f"prometheus {dedup_key}", escalation_policy_id=policy_id),
        )  # fmt: skip
        caller, integration = authenticate(self.store, created.key)
        alert = ALERT_EVENTS.validate_python(
            {"event_action": "trigger", "dedup_key": dedup_key,
             "payload": {"summary": "disk full", "source": "db-1", "severity": "error"}}
        )  # fmt: skip
        opened = ingest_alert(self.store, caller, integration, alert).incident_id
        assert opened is not None
        return opened

    def at(self, minutes: float) -> None:
        self.now = T0 + timedelta(minutes=minutes)
        sweep(self.store, self.now, FireHere(HANDLERS))

    def paged(self, incident_id: str) -> list[tuple[int, int, int, str]]:
        return [
            (page["generation"], page["loop"], page["level"], page["user_id"])
            for page in pages_of(self.store, self.owner.account_id, incident_id)
        ]


@pytest.fixture
def world(store: Store) -> World:
    return World(store)


def test_levels_page_in_turn_loop_and_stop_at_the_last(world: World) -> None:
    incident = world.trigger(world.policy(world.bob, num_loops=1))
    world.at(0.5)
    assert world.paged(incident) == [(1, 0, 1, world.bob)], "level 1 at once"
    world.at(4.9)
    assert len(world.paged(incident)) == 1, "level 1 waits its 5 minutes"
    for minute in (5.5, 15.5, 20.5, 30.5, 60):
        world.at(minute)
    assert world.paged(incident) == [
        (1, 0, 1, world.bob), (1, 0, 2, world.carol),  # carol: the schedule's on call
        (1, 1, 1, world.bob), (1, 1, 2, world.carol),  # num_loops 1: once more, then stays
    ]  # fmt: skip
    (page,) = pages_of(world.store, world.owner.account_id, incident)[1:2]
    assert (page["schedule_id"], page["schedule_version"]) == (world.schedule, 1)


def test_an_acknowledge_stops_it_and_a_new_trigger_starts_it_over(world: World) -> None:
    incident = world.trigger(world.policy(world.bob))
    world.at(0.5)
    update_incident(world.store, world.owner, incident, UpdateIncident(status=Status.ACKNOWLEDGED))
    world.at(30)
    assert world.paged(incident) == [(1, 0, 1, world.bob)], "acknowledged: nobody more"
    update_incident(world.store, world.owner, incident, UpdateIncident(status=Status.TRIGGERED))
    world.at(31)
    assert world.paged(incident)[-1] == (2, 0, 1, world.bob), "triggered again: level 1"


def test_an_incident_escalates_by_the_policy_it_started_with(world: World) -> None:
    policy = world.policy(world.bob)
    first = world.trigger(policy)
    world.at(0.5)
    edited = EscalationPolicyRequest.model_validate({
        "name": "Payments", "escalation_rules": [
            {"escalation_delay_in_minutes": 5, "targets": [{"type": "user", "id": world.carol}]},
        ],
    })  # fmt: skip
    replace_policy(world.store, world.owner, policy, edited)
    second = world.trigger(policy, "db-2/disk")
    world.at(6)
    assert world.paged(first) == [(1, 0, 1, world.bob), (1, 0, 2, world.carol)]
    assert world.paged(second) == [(1, 0, 1, world.carol)], "the new version"


def test_round_robin_pages_one_target_in_turn(world: World) -> None:
    policy = world.policy(
        world.bob, escalation_rule_assignment_strategy="round_robin",
        targets=[{"type": "user", "id": world.bob}, {"type": "user", "id": world.carol}],
    )  # fmt: skip
    incidents = [world.trigger(policy, f"host-{n}") for n in range(3)]
    world.at(0.5)
    paged = [world.paged(incident) for incident in incidents]
    assert [len(pages) for pages in paged] == [1, 1, 1], "one target a level"
    chosen = [pages[0][3] for pages in paged]  # the sweep fires them in any order
    assert sorted(map(chosen.count, (world.bob, world.carol))) == [1, 2], "each in turn"


def test_a_timer_fired_twice_pages_once(world: World) -> None:
    incident = world.trigger(world.policy(world.bob))
    timer = Timer(world.owner.account_id, TimerKind.ESCALATION, incident, T0)
    assert fire_escalation(world.store, timer) is True
    assert fire_escalation(world.store, timer) is False, "its claim is gone"
    world.at(1)
    assert world.paged(incident) == [(1, 0, 1, world.bob)]
