"""Bounded writes per incident: at most `MAX_PARTICIPANTS` participants on every path (also
under concurrent adds), an update refreshes them all in one transaction, and a refresh cut
off half-way leaves no copy behind for good: the next GET (or update) repairs it."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from botocore.exceptions import EndpointConnectionError

from incidents.errors import TooManyParticipantsError
from incidents.incident import copies
from incidents.incident.commands import get_incident, update_incident
from incidents.incident.create import create_incident
from incidents.incident.participants import MAX_PARTICIPANTS, add_participant, remove_participant
from incidents.incident.queries import team_incidents
from incidents.models import Role, State
from incidents.paging import PageRequest
from incidents.requests import AddParticipant, CreateIncident, CreateTeam, UpdateIncident
from incidents.store import Caller, Store, new_id
from incidents.team_commands import create_team

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def full_incident(store: Store, caller: Caller, free: int = 0) -> tuple[str, list[str]]:
    """An incident with `MAX_PARTICIPANTS - free` participants: the creator and teams."""
    teams = [create_team(store, caller, CreateTeam(name=f"T{n}")).id for n in range(110)]
    incident = create_incident(store, caller, CreateIncident(title="big", teams=teams[:40]))
    for team in teams[40 : MAX_PARTICIPANTS - 1 - free]:
        add_participant(store, caller, incident.summary.id, team_participant(team))
    return incident.summary.id, teams


def team_participant(team: str) -> AddParticipant:
    return AddParticipant(participant_id=team, role=Role.TEAM)


def count_requests(store: Store) -> list[str]:
    """The requests `store` makes from now on; a read of a shard map (once its 5 s cache
    lapsed) is ``map``."""
    calls: list[str] = []

    def named(model: Any, params: dict[str, Any], **_: Any) -> None:
        key = params.get("Key", {}).get("PK", {}).get("S", "")
        calls.append("map" if key.endswith("#shardmeta") else model.name)

    store.client.meta.events.register("before-parameter-build.dynamodb", named)
    return calls


def test_the_participant_limit_holds_on_every_path(store: Store) -> None:
    caller = Caller(new_id("acct"), new_id("user"))
    incident_id, teams = full_incident(store, caller)
    assert len(get_incident(store, caller, incident_id).participants) == MAX_PARTICIPANTS
    with pytest.raises(TooManyParticipantsError, match="at most 100"):
        add_participant(store, caller, incident_id, team_participant(teams[-1]))
    again = add_participant(store, caller, incident_id, team_participant(teams[50]))
    assert again.participant_id == teams[50], "a role on one already there is no new one"
    remove_participant(store, caller, incident_id, teams[50])
    add_participant(store, caller, incident_id, team_participant(teams[-1]))
    with pytest.raises(TooManyParticipantsError):
        create_incident(store, caller, CreateIncident(title="t", teams=teams[:100]))


def test_concurrent_adds_at_the_limit_stop_exactly_there(store: Store) -> None:
    caller = Caller(new_id("acct"), new_id("user"))
    incident_id, teams = full_incident(store, caller, free=2)

    def add(team: str) -> bool:
        try:
            add_participant(store, caller, incident_id, team_participant(team))
        except TooManyParticipantsError:
            return False
        return True

    with ThreadPoolExecutor(6) as pool:
        added = list(pool.map(add, teams[-6:]))
    assert sum(added) == 2
    assert len(get_incident(store, caller, incident_id).participants) == MAX_PARTICIPANTS


def test_an_update_refreshes_every_copy_in_one_transaction(store: Store) -> None:
    caller = Caller(new_id("acct"), new_id("user"))
    incident_id, _ = full_incident(store, caller)
    calls = count_requests(store)
    updated = update_incident(store, caller, incident_id, UpdateIncident(title="renamed"))
    # the summary and its event in one transaction, then the copies in another
    assert [call for call in calls if call != "map"] == [
        "GetItem", "TransactWriteItems", "Query", "TransactWriteItems"
    ]  # fmt: skip
    assert calls.count("map") <= 3, "the summaries', open list's and events' maps, if cached >5 s"
    copies = get_incident(store, caller, incident_id).participants
    assert {copy.incident.version for copy in copies} == {updated.version}


def test_a_refresh_cut_off_half_way_is_repaired_by_the_next_get(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    caller = Caller(new_id("acct"), new_id("user"))
    teams = [create_team(store, caller, CreateTeam(name=f"T{n}")).id for n in range(3)]
    incident = create_incident(store, caller, CreateIncident(title="before", teams=teams))
    incident_id = incident.summary.id

    def cut_off(**_: Any) -> None:
        raise EndpointConnectionError(endpoint_url="injected: the refresh was cut off")

    with monkeypatch.context() as patch:
        patch.setattr(copies, "_refresh_group", lambda *_, **__: cut_off())
        updated = update_incident(store, caller, incident_id, UpdateIncident(title="after"))
    assert updated.title == "after", "the committed summary is the answer"
    listed = team_incidents(store, caller, teams[0], State.OPEN, PageRequest(limit=10))
    assert [i.title for i in listed.items] == ["before"], "the copy is behind, not broken"
    repaired = get_incident(store, caller, incident_id)
    assert {p.incident.title for p in repaired.participants} == {"after"}
    listed = team_incidents(store, caller, teams[0], State.OPEN, PageRequest(limit=10))
    assert [(i.title, i.version) for i in listed.items] == [("after", updated.version)]
