"""An incident escalated or reassigned by hand, on DynamoDB Local: its escalation starts
over at the level asked (or level 1 of the other policy), its timer due at once, so the
next firing pages that level; an acknowledged incident is triggered again; a level the
policy lacks, a resolved incident, an unknown policy are refused, paging nobody. Over HTTP
too."""

from __future__ import annotations

import pytest

from incidents.errors import NotFoundError
from incidents.escalation.engine import fire_escalation, pages_of
from incidents.escalation.models import (
    EscalateIncident,
    EscalationPolicyRequest,
    ReassignIncident,
)
from incidents.escalation.policies import create_policy
from incidents.incident.commands import update_incident
from incidents.incident.escalate import (
    LevelOutOfRangeError,
    NotEscalatingError,
    escalate_incident,
    reassign_incident,
)
from incidents.keys import timer_key
from incidents.models import IncidentEscalated, Status
from incidents.requests import SaveProfile, UpdateIncident
from incidents.store import Caller, new_id
from incidents.timeline.events import event_from_item
from incidents.timeline.queries import stored_events
from incidents.timers.schedule import TimerKind, timer_from_item
from incidents.users import save_profile
from tests.helpers.api_harness import Api
from tests.helpers.paging_world import World
from tests.helpers.people import new_api_user

pytestmark = pytest.mark.integration


def two_levels(world: World) -> tuple[str, Caller]:
    """A policy paging Ada, then Bob; and Ada."""
    ada = Caller(world.bob.account_id, new_id("user"))
    save_profile(world.store, ada, SaveProfile(name="Ada", email="ada@example.com"))
    rules = [{"escalation_delay_in_minutes": 10, "targets": [{"type": "user", "id": who}]}
             for who in (ada.user_id, world.bob.user_id)]  # fmt: skip
    request = EscalationPolicyRequest.model_validate(
        {"name": "Checkout", "escalation_rules": rules}
    )
    return create_policy(world.store, world.bob, request).id, ada


def fire(world: World, incident: str) -> list[str]:
    """The escalation's timer fired as a sweep would now; every page's sort key so far."""
    due = world.store.get(*timer_key(world.bob.account_id, TimerKind.ESCALATION, incident))
    assert due is not None, "the escalation's timer is set"
    fire_escalation(world.store, timer_from_item(due))
    return [page["SK"] for page in pages_of(world.store, world.bob.account_id, incident)]


def test_a_reassigned_incident_pages_the_other_policy_and_an_escalation_its_level(
    world: World,
) -> None:
    incident, _ = world.paged()  # Bob paged by a one-level policy
    policy, ada = two_levels(world)
    reassign_incident(
        world.store, world.bob, incident, ReassignIncident(escalation_policy_id=policy)
    )
    assert fire(world, incident)[-1] == f"page#0002#00#01#{ada.user_id}", "its level 1 at once"
    escalate_incident(world.store, world.bob, incident, EscalateIncident(escalation_level=2))
    moved = [
        event_from_item(item)
        for item in stored_events(world.store, world.bob.account_id, incident, 1)
    ]
    by_hand = [e for e in moved if isinstance(e, IncidentEscalated)]
    assert [(e.escalation.level, e.escalation.reassigned, e.actor.user_id) for e in by_hand] == [
        (1, True, world.bob.user_id),
        (2, False, world.bob.user_id),
    ], "who reassigned and escalated, on the timeline"
    assert [e.seq for e in moved] == list(range(1, len(moved) + 1))
    pages = fire(world, incident)
    assert pages[-1] == f"page#0003#00#02#{world.bob.user_id}", "level 2, a new start"
    assert len(pages) == 3, "nobody paged twice"
    assert fire(world, incident) == pages, "a firing again pages nothing more"


def test_escalating_an_acknowledged_incident_triggers_it_again(world: World) -> None:
    incident, _ = world.paged()
    update_incident(world.store, world.bob, incident, UpdateIncident(status=Status.ACKNOWLEDGED))
    summary = escalate_incident(
        world.store, world.bob, incident, EscalateIncident(escalation_level=1)
    )
    assert summary.status is Status.TRIGGERED
    assert fire(world, incident)[-1] == f"page#0002#00#01#{world.bob.user_id}"


def test_what_cannot_escalate_is_refused_and_pages_nobody(world: World) -> None:
    incident, _ = world.paged()
    before = fire(world, incident)
    with pytest.raises(LevelOutOfRangeError, match="1 level"):
        escalate_incident(world.store, world.bob, incident, EscalateIncident(escalation_level=2))
    with pytest.raises(NotFoundError, match="escalation policy"):
        reassign_incident(world.store, world.bob, incident,
                          ReassignIncident(escalation_policy_id=new_id("ep")))  # fmt: skip
    update_incident(world.store, world.bob, incident, UpdateIncident(status=Status.RESOLVED))
    with pytest.raises(NotEscalatingError, match="resolved"):
        escalate_incident(world.store, world.bob, incident, EscalateIncident(escalation_level=1))
    assert pages_of(world.store, world.bob.account_id, incident)[-1]["SK"] == before[-1]


def test_the_routes_answer_as_documented(api: Api) -> None:
    bob = new_api_user(api, new_id("acct"), "Bob")
    incident = api.call("create_incident", bob, body={"title": "by hand"}).body["summary"]["id"]
    path = {"incident_id": incident}
    unpolicied = api.call("escalate_incident", bob, path, body={"escalation_level": 1})
    assert (unpolicied.status, unpolicied.body["code"]) == (409, "conflict")
    rules = [{"escalation_delay_in_minutes": 5, "targets": [{"type": "user", "id": bob.user_id}]}]
    created = api.call("create_escalation_policy", bob,
                       body={"name": "Web", "escalation_rules": rules})  # fmt: skip
    assert created.status == 201, created.body
    policy = created.body["id"]
    reassigned = api.call("reassign_incident", bob, path, body={"escalation_policy_id": policy})
    assert reassigned.status == 200, reassigned.body
    assert reassigned.body["status"] == "TRIGGERED"
    beyond = api.call("escalate_incident", bob, path, body={"escalation_level": 2})
    assert (beyond.status, beyond.body["code"]) == (400, "validation_error")
    assert api.call("escalate_incident", bob, path, body={"escalation_level": 1}).status == 200
    for body in ({"escalation_level": 0}, {"escalation_level": "1"}, {}):
        assert api.call("escalate_incident", bob, path, body=body).status == 400
    stranger = Caller(new_id("acct"), new_id("user"))
    assert api.call("escalate_incident", stranger, path, body={"escalation_level": 1}).status == 404
