"""The timeline as a transactional outbox, on the session's engine (DynamoDB Local):
one event per change in the change's own transaction, numbered 1..n with no gap, under
failures and under concurrency, and read back exactly."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from typing import Any

import pytest
from botocore.exceptions import ClientError

from dynashard.query import PageBudget, item_size
from incidents.errors import (
    NotFoundError,
    PreconditionFailedError,
    ThrottledError,
    VersionConflictError,
)
from incidents.incident.commands import add_note, get_incident, resolve_incident, update_incident
from incidents.incident.create import create_incident
from incidents.incident.participants import add_participant, remove_participant
from incidents.keys import event_key
from incidents.models import (
    AccountEvent,
    Changes,
    EventType,
    IncidentChanged,
    IncidentCreated,
    Note,
    NoteAdded,
    ParticipantChanged,
    Role,
    Severity,
    Status,
    TimelineEvent,
)
from incidents.paging import PageRequest
from incidents.requests import AddNote, AddParticipant, CreateIncident, SaveProfile, UpdateIncident
from incidents.store import Caller, Store, new_id
from incidents.summaries import read_summary
from incidents.timeline.events import event_item, load_counted, plain_event
from incidents.timeline.queries import EventRequest, account_events, incident_timeline
from incidents.users import save_profile

pytestmark = pytest.mark.integration


@pytest.fixture
def alice(store: Store) -> Caller:
    who = Caller(new_id("acct"), new_id("user"))
    save_profile(store, who, SaveProfile(name="Alice"))
    return who


def colleague(store: Store, of: Caller, name: str = "Bob") -> Caller:
    who = Caller(of.account_id, new_id("user"))
    save_profile(store, who, SaveProfile(name=name))
    return who


def timeline(store: Store, who: Caller, incident_id: str, **options: Any) -> list[TimelineEvent]:
    """The whole timeline, walked page by page."""
    events: list[TimelineEvent] = []
    cursor = None
    while True:
        page = PageRequest(limit=options.get("limit", 100), cursor=cursor, descending=False)
        result = incident_timeline(store, who, incident_id, EventRequest(page))
        events += result.items
        cursor = result.next_cursor
        if not result.has_more:
            return events


def stored_events(store: Store, who: Caller, incident_id: str) -> list[int]:
    """Every event number in the incident's partition, read straight from the table."""
    pk, _ = event_key(who.account_id, incident_id, 1)
    items = store.query_partition(pk, prefix="event#")
    return [int(item["seq"]["N"]) for item in items]


def test_every_change_writes_one_event_with_what_changed(store: Store, alice: Caller) -> None:
    bob = colleague(store, alice)
    created = create_incident(
        store, alice, CreateIncident(title="DB down", assignees=[bob.user_id])
    )
    incident = created.summary.id
    update_incident(store, bob, incident, UpdateIncident(title="DB slow", severity=Severity.SEV1))
    resolve_incident(store, alice, incident)
    update_incident(store, alice, incident, UpdateIncident(status=Status.ACKNOWLEDGED))
    carol = colleague(store, alice, "Carol")
    add_participant(
        store, alice, incident, AddParticipant(participant_id=carol.user_id, role=Role.RESPONDER)
    )
    remove_participant(store, alice, incident, carol.user_id)
    note = add_note(store, bob, incident, AddNote(text="Rolled back 4812"))

    events = timeline(store, alice, incident)
    assert [e.seq for e in events] == [1, 2, 3, 4, 5, 6, 7]
    assert [e.type for e in events] == [
        EventType.CREATED,
        EventType.UPDATED,
        EventType.RESOLVED,
        EventType.REOPENED,
        EventType.PARTICIPANT_ADDED,
        EventType.PARTICIPANT_REMOVED,
        EventType.NOTE_ADDED,
    ]
    first, update, resolved, _, added, _, _ = events
    assert isinstance(first, IncidentCreated)
    assert isinstance(update, IncidentChanged)
    assert isinstance(resolved, IncidentChanged)
    assert isinstance(added, ParticipantChanged)
    assert isinstance(note, NoteAdded)
    assert first.incident == created.summary
    assert {(p.participant_id, p.role) for p in first.participants} == {
        (alice.user_id, Role.CREATOR),
        (bob.user_id, Role.ASSIGNEE),
    }
    assert first.actor.user_id == alice.user_id
    assert update.actor.user_id == bob.user_id
    assert update.changes == Changes.model_validate(
        {"title": {"from": "DB down", "to": "DB slow"}, "severity": {"from": "SEV3", "to": "SEV1"}}
    )
    assert resolved.changes == Changes.model_validate(
        {"status": {"from": "TRIGGERED", "to": "RESOLVED"}}
    )
    assert (added.participant.participant_id, added.participant.role) == (
        carol.user_id,
        Role.RESPONDER,
    )
    assert events[-1] == note
    assert note.note == Note(text="Rolled back 4812")
    assert [e.version for e in events] == [1, 2, 3, 4, 4, 4, 4]
    assert all(e.id.startswith("evt_") and e.incident_id == incident for e in events)


def test_an_update_that_changes_nothing_writes_no_event(store: Store, alice: Caller) -> None:
    incident = create_incident(store, alice, CreateIncident(title="t")).summary.id
    update_incident(store, alice, incident, UpdateIncident(title="t"))
    assert stored_events(store, alice, incident) == [1]


def test_a_cancelled_transaction_writes_neither_change_nor_event(
    store: Store, alice: Caller
) -> None:
    """A create naming a team that does not exist: nothing of it is written."""
    with pytest.raises(NotFoundError):
        create_incident(store, alice, CreateIncident(title="t", teams=[new_id("team")]))
    events = account_events(store, alice, EventRequest(PageRequest()))
    assert events.items == []


def test_a_failed_condition_writes_neither_change_nor_event(store: Store, alice: Caller) -> None:
    incident = create_incident(store, alice, CreateIncident(title="t")).summary.id
    with pytest.raises(PreconditionFailedError):
        update_incident(store, alice, incident, UpdateIncident(title="x"), if_match=7)
    with pytest.raises(NotFoundError):
        remove_participant(store, alice, incident, new_id("user"))
    assert stored_events(store, alice, incident) == [1]
    assert get_incident(store, alice, incident).summary.title == "t"


@pytest.fixture
def throttled_once(store: Store) -> Iterator[Callable[[], None]]:
    """Arms one throttled TransactWriteItems, answered as DynamoDB answers one (cancelled,
    a ThrottlingError reason per item, nothing written): DynamoDB Local never throttles,
    so the answer is given before the request reaches it."""
    armed = threading.Event()

    def throttle(params: dict[str, Any], **_: Any) -> None:
        if armed.is_set():
            armed.clear()
            reasons = [{"Code": "ThrottlingError"} for _ in params["TransactItems"]]
            response: Any = {
                "Error": {"Code": "TransactionCanceledException", "Message": "throttled"},
                "CancellationReasons": reasons,
            }
            raise ClientError(response, "TransactWriteItems")

    events = store.client.meta.events
    events.register("provide-client-params.dynamodb.TransactWriteItems", throttle)
    yield armed.set
    events.unregister("provide-client-params.dynamodb.TransactWriteItems", throttle)


def test_a_throttled_write_writes_neither_change_nor_event(
    store: Store, alice: Caller, throttled_once: Callable[[], None]
) -> None:
    incident = create_incident(store, alice, CreateIncident(title="t")).summary.id
    throttled_once()
    with pytest.raises(ThrottledError):
        add_note(store, alice, incident, AddNote(text="lost?"))
    assert stored_events(store, alice, incident) == [1]
    add_note(store, alice, incident, AddNote(text="kept"))
    assert stored_events(store, alice, incident) == [1, 2]


class Crash(BaseException):
    """The process dying (not an error the code handles)."""


def test_a_crash_after_the_commit_keeps_change_and_event_together(
    store: Store, alice: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The update's transaction committed, then the process died before refreshing the
    copies: the change and its event are both there, and the next change follows on."""
    incident = create_incident(store, alice, CreateIncident(title="t")).summary.id

    def die(*_: object, **__: object) -> None:
        raise Crash

    monkeypatch.setattr("incidents.incident.commands.refresh_after_commit", die)
    with pytest.raises(Crash):
        update_incident(store, alice, incident, UpdateIncident(severity=Severity.SEV1))
    monkeypatch.undo()
    assert get_incident(store, alice, incident).summary.severity is Severity.SEV1
    update_incident(store, alice, incident, UpdateIncident(severity=Severity.SEV2))
    assert stored_events(store, alice, incident) == [1, 2, 3]


def test_a_crash_before_the_commit_leaves_neither(
    store: Store, alice: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    incident = create_incident(store, alice, CreateIncident(title="t")).summary.id

    def die(*_: object, **__: object) -> None:
        raise Crash

    monkeypatch.setattr(store, "transact_growing", die)
    with pytest.raises(Crash):
        update_incident(store, alice, incident, UpdateIncident(severity=Severity.SEV1))
    monkeypatch.undo()
    assert get_incident(store, alice, incident).summary.severity is Severity.SEV3
    assert stored_events(store, alice, incident) == [1]


def test_an_incident_from_before_the_timeline_gets_its_created_event_first(
    store: Store, alice: Caller
) -> None:
    incident = create_incident(store, alice, CreateIncident(title="old")).summary.id
    summary = read_summary(store, alice.account_id, incident)
    assert summary is not None
    pk, sk = summary["PK"]["S"], incident
    store.client.update_item(
        TableName=store.table_name,
        Key={"PK": {"S": pk}, "SK": {"S": sk}},
        UpdateExpression="REMOVE event_seq",
    )
    first = event_key(alice.account_id, incident, 1)
    store.client.delete_item(
        TableName=store.table_name, Key={"PK": {"S": first[0]}, "SK": {"S": first[1]}}
    )
    update_incident(store, alice, incident, UpdateIncident(status=Status.ACKNOWLEDGED))
    events = timeline(store, alice, incident)
    assert [(e.seq, e.type) for e in events] == [(1, EventType.CREATED), (2, EventType.UPDATED)]
    assert isinstance(events[0], IncidentCreated)
    assert events[0].backfilled
    assert events[0].participants == []
    assert events[0].participant_count is None
    assert events[0].incident == get_incident(store, alice, incident).summary.model_copy(
        update={"status": Status.TRIGGERED, "version": 1, "updated_at": events[0].at}
    )
    counted = load_counted(store, alice, incident)
    assert counted is not None
    assert counted.seq == 2


def test_concurrent_changes_number_their_events_one_to_n_in_commit_order(
    store: Store, alice: Caller
) -> None:
    people = [colleague(store, alice, f"P{n}") for n in range(4)]
    incident = create_incident(store, alice, CreateIncident(title="busy")).summary.id
    done: list[str] = []

    def retrying(change: Callable[[], object], name: str) -> None:
        for _ in range(50):
            try:
                change()
                done.append(name)
                return
            except VersionConflictError:
                continue
        raise AssertionError(f"{name} never went through")

    def work(n: int) -> None:
        who = people[n % len(people)]
        if n % 3 == 0:  # every update changes something: a new title
            retitle = UpdateIncident(title=f"update {n}")
            retrying(lambda: update_incident(store, who, incident, retitle), f"update {n}")
        elif n % 3 == 1:
            join = AddParticipant(participant_id=who.user_id, role=Role.RESPONDER)
            # a role already held writes nothing: one event per person
            retrying(lambda: add_participant(store, who, incident, join), f"add {who.user_id}")
        else:
            retrying(lambda: add_note(store, who, incident, AddNote(text=f"n{n}")), f"note {n}")

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(work, range(36)))
    for who in people:  # removals, concurrently with more notes
        with ThreadPoolExecutor(2) as pool:
            pool.submit(remove_participant, store, alice, incident, who.user_id)
            pool.submit(add_note, store, who, incident, AddNote(text="after"))

    events = timeline(store, alice, incident, limit=7)
    counted = load_counted(store, alice, incident)
    assert counted is not None
    assert [e.seq for e in events] == list(range(1, counted.seq + 1))
    assert stored_events(store, alice, incident) == list(range(1, counted.seq + 1))
    changed = [e for e in events if e.type in (EventType.UPDATED, EventType.CREATED)]
    assert [e.version for e in changed] == list(range(1, len(changed) + 1))
    assert changed[-1].version == counted.summary.version
    versions = [e.version for e in events]
    assert versions == sorted(versions), "events commit in the order of the summary's versions"
    assert len(events) == 1 + len(set(done)) + 2 * len(people)


LONG_TIMELINE = 1_200
"""Events of a long timeline: each item carries a copy of the summary and a note of
`LONG_NOTE` characters, so together they are well past DynamoDB's 1 MB a Query and the
walk crosses its pages."""
LONG_NOTE = 1_000


@pytest.mark.slow
def test_a_timeline_past_1_mb_pages_to_the_end_exactly(store: Store, alice: Caller) -> None:
    created = create_incident(store, alice, CreateIncident(title="long"))
    summary = created.summary
    items = []
    for seq in range(2, LONG_TIMELINE + 1):
        note = Note(text=f"n{seq}".ljust(LONG_NOTE, "."))
        event = plain_event(
            EventType.NOTE_ADDED, summary, alice, seq, summary.created_at, note=note
        )
        items.append(event_item(store, alice.account_id, event, summary))
    for start in range(0, len(items), 25):
        batch = [{"PutRequest": {"Item": item}} for item in items[start : start + 25]]
        store.client.batch_write_item(RequestItems={store.table_name: batch})  # type: ignore[dict-item]
    stored = sum(item_size(item) for item in items)
    assert stored > 1_048_576, "the timeline must span more than one Query page"
    walked = timeline(store, alice, summary.id)
    assert [e.seq for e in walked] == list(range(1, LONG_TIMELINE + 1))
    newest = incident_timeline(
        store, alice, summary.id, EventRequest(PageRequest(limit=3, descending=True))
    )
    assert [e.seq for e in newest.items] == [LONG_TIMELINE, LONG_TIMELINE - 1, LONG_TIMELINE - 2]


def test_timelines_are_the_callers_accounts_only(store: Store, alice: Caller) -> None:
    incident = create_incident(store, alice, CreateIncident(title="mine")).summary.id
    mallory = Caller(new_id("acct"), new_id("user"))
    with pytest.raises(NotFoundError):
        incident_timeline(store, mallory, incident, EventRequest(PageRequest()))
    assert account_events(store, mallory, EventRequest(PageRequest())).items == []


def test_account_events_merge_every_incident_newest_first_with_filters(
    store: Store, alice: Caller
) -> None:
    incidents = [
        create_incident(store, alice, CreateIncident(title=f"i{n}")).summary.id for n in range(6)
    ]
    for n, incident in enumerate(incidents):
        add_note(store, alice, incident, AddNote(text=f"note {n}"))
        if n % 2:
            resolve_incident(store, alice, incident)
    walked: list[AccountEvent] = []
    cursor = None
    while True:
        page = PageRequest(limit=4, cursor=cursor, budget=PageBudget())
        result = account_events(store, alice, EventRequest(page))
        walked += result.items
        cursor = result.next_cursor
        if not result.has_more:
            break
    assert len(walked) == 6 + 6 + 3
    keys = [(e.at, e.id) for e in walked]
    assert keys == sorted(keys, reverse=True)
    resolved = account_events(
        store, alice, EventRequest(PageRequest(limit=100), (EventType.RESOLVED,))
    )
    changed = [e for e in resolved.items if isinstance(e, IncidentChanged)]
    assert sorted(e.incident_id for e in changed) == sorted(incidents[1::2])
    assert len(changed) == len(resolved.items)
    assert resolved.has_more is False


def test_concurrent_creates_take_every_number_once(store: Store, alice: Caller) -> None:
    """The number is claimed in the create's transaction: racing creates retry, none
    repeats a number and none leaves a gap."""

    def create(n: int) -> int:
        while True:  # as a client retries the 409 a create that keeps losing answers
            try:
                return create_incident(store, alice, CreateIncident(title=f"c{n}")).summary.number
            except VersionConflictError:
                continue

    with ThreadPoolExecutor(6) as pool:
        numbers = sorted(pool.map(create, range(30)))
    assert numbers == list(range(1, 31))


def test_a_stage_retention_gives_events_an_expiry(store: Store, alice: Caller) -> None:
    incident = create_incident(store, alice, CreateIncident(title="t")).summary.id
    kept = add_note(store, alice, incident, AddNote(text="kept for ever"))
    store.event_retention_days = 30
    expiring = add_note(store, alice, incident, AddNote(text="kept 30 days"))
    items = {
        int(i["seq"]["N"]): i
        for i in store.query_partition(event_key(alice.account_id, incident, 1)[0], prefix="event#")
    }
    assert "ExpiresAt" not in items[kept.seq]
    written = datetime.fromisoformat(expiring.at.replace("Z", "+00:00"))
    assert int(items[expiring.seq]["ExpiresAt"]["N"]) == int(
        (written + timedelta(days=30)).timestamp()
    )
