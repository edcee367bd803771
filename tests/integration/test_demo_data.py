"""Demo seeding on a real engine: a table without the demo data is seeded, so every printed
token belongs to a user that exists, and incident numbers never repeat."""

from __future__ import annotations

import pytest

from incidents.incident.commands import get_incident, incident_id_by_number, update_incident
from incidents.incident.create import create_incident
from incidents.incident.participants import add_participant
from incidents.incident.queries import account_incidents
from incidents.keys import counter_key
from incidents.models import EventType, IncidentChanged, IncidentSummary, Role, State, Status
from incidents.paging import PageRequest
from incidents.requests import AddParticipant, CreateIncident, UpdateIncident
from incidents.store import Caller, Store
from incidents.timeline.events import load_counted
from incidents.timeline.queries import EventRequest, incident_timeline
from incidents.users import get_profile
from local.demo.data import (
    DemoSize,
    _people_items,
    demo_accounts,
    demo_seeded,
    prepare_demo,
    write_batches,
)

pytestmark = pytest.mark.integration
SIZE = DemoSize(accounts=2, incidents=12, seed=3)


def counter(store: Store, account_id: str) -> int:
    pk, sk = counter_key(account_id)
    item = store.get(pk, sk)
    assert item is not None
    return int(item["value"]["N"])


def listed(store: Store, caller: Caller) -> list[IncidentSummary]:
    page = account_incidents(store, caller, State.OPEN, PageRequest(limit=100))
    closed = account_incidents(store, caller, State.CLOSED, PageRequest(limit=100))
    return page.items + closed.items


def numbers(store: Store, caller: Caller) -> list[int]:
    return [incident.number for incident in listed(store, caller)]


def test_an_empty_table_is_seeded_and_every_token_is_a_real_user(store: Store) -> None:
    assert not demo_seeded(store, demo_accounts(SIZE))
    accounts = prepare_demo(store, SIZE)
    assert demo_seeded(store, accounts)
    for account in accounts:
        for user_id in account.tokens.values():
            caller = Caller(account.account_id, user_id)
            assert get_profile(store, caller, user_id).id == user_id
        assert counter(store, account.account_id) == account.incidents == 6


def test_every_seeded_incident_is_found_by_its_number(store: Store) -> None:
    """GSI3 holds one item an incident, keyed by its number in the account."""
    accounts = prepare_demo(store, SIZE)
    first = accounts[0]
    caller = Caller(first.account_id, first.users[0].id)
    by_id = {incident.number: incident.id for incident in listed(store, caller)}
    assert sorted(by_id) == list(range(1, 7))
    for number, incident_id in by_id.items():
        assert incident_id_by_number(store, caller, number) == incident_id
    scanned = store.client.scan(TableName=store.table_name, IndexName="GSI3", Select="COUNT")
    assert scanned["Count"] == SIZE.incidents


def test_a_half_seeded_table_is_seeded_again(store: Store) -> None:
    """What a crash mid-seeding leaves (people, no incidents, no counters) is not served as is."""
    accounts = demo_accounts(SIZE)
    write_batches(store, [item for account in accounts for item in _people_items(account)])
    assert not demo_seeded(store, accounts)
    prepare_demo(store, SIZE)
    first = accounts[0]
    caller = Caller(first.account_id, first.users[0].id)
    assert sorted(numbers(store, caller)) == list(range(1, 7))


def test_reseeding_never_moves_a_counter_back(store: Store) -> None:
    accounts = prepare_demo(store, SIZE)
    first = accounts[0]
    caller = Caller(first.account_id, first.users[0].id)
    created = create_incident(store, caller, CreateIncident(title="after the seed"))
    assert created.summary.number == 7
    prepare_demo(store, SIZE, reseed=True)
    assert counter(store, first.account_id) == 7
    again = create_incident(store, caller, CreateIncident(title="after the reseed"))
    assert again.summary.number == 8
    seen = numbers(store, caller)
    assert sorted(seen) == list(range(1, 9)), "every number once"


def test_reseeding_never_moves_a_version_back(store: Store) -> None:
    """A reseed once put summaries back to version 1 while copies stayed ahead: the version
    guard then left those copies stale for good."""
    accounts = prepare_demo(store, SIZE)
    first = accounts[0]
    caller = Caller(first.account_id, first.users[0].id)
    (seeded, *_) = account_incidents(store, caller, State.OPEN, PageRequest(limit=1)).items
    incident_id = seeded.id
    update_incident(store, caller, incident_id, UpdateIncident(title="changed after seeding"))
    add_participant(
        store,
        caller,
        incident_id,
        AddParticipant(participant_id=first.users[1].id, role=Role.RESPONDER),
    )
    prepare_demo(store, SIZE, reseed=True)
    after = get_incident(store, caller, incident_id)
    changed = seeded.version + 1
    assert (after.summary.version, after.summary.title) == (changed, "changed after seeding")
    assert {copy.incident.version for copy in after.participants} == {changed}
    update_incident(store, caller, incident_id, UpdateIncident(title="and again"))
    again = get_incident(store, caller, incident_id)
    assert {copy.incident.version for copy in again.participants} == {changed + 1}


def test_seeded_incidents_have_the_timelines_their_changes_wrote(store: Store) -> None:
    """Every seeded incident's timeline starts with its creation, numbers its events 1..n
    as its counter says, ends with the change that gave it its status, and carries the
    summary's version; some have notes and a responder joining."""
    accounts = prepare_demo(store, DemoSize(accounts=1, incidents=40, seed=5))
    caller = Caller(accounts[0].account_id, accounts[0].users[0].id)
    kinds: set[EventType] = set()
    for incident in listed(store, caller):
        events = incident_timeline(
            store, caller, incident.id, EventRequest(PageRequest(limit=100, descending=False))
        ).items
        counted = load_counted(store, caller, incident.id)
        assert counted is not None
        assert [e.seq for e in events] == list(range(1, counted.seq + 1))
        assert events[0].type is EventType.CREATED
        changes = [e for e in events if isinstance(e, IncidentChanged)]
        assert [e.version for e in changes] == list(range(2, incident.version + 1))
        moves = [e.changes.status.to for e in changes if e.changes.status]
        assert (moves or [Status.TRIGGERED])[-1] is incident.status
        kinds |= {e.type for e in events}
    assert {EventType.NOTE_ADDED, EventType.PARTICIPANT_ADDED, EventType.RESOLVED} <= kinds
