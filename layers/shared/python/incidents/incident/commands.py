"""Incident commands: get, update (and resolve), notes, lookup by number (create is
`incidents.incident.create`).

Every change writes its timeline event in its own transaction (`incidents.timeline.events`);
participants are `incidents.incident.participants`, the copies of the summary they carry
`incidents.incident.copies`.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from functools import partial
from typing import Any

from dynashard.query import Item
from dynashard.resharding import Operation, Transaction
from incidents.errors import (
    AlreadyCreatedError,
    DomainError,
    KeyReusedError,
    NotFoundError,
    PreconditionFailedError,
    VersionConflictError,
)
from incidents.escalation.engine import Restart, status_operations
from incidents.incident.acknowledgement import acknowledgement_timeout, acknowledgement_timers
from incidents.incident.copies import get_refreshed_copies, refresh_after_commit, summary_item
from incidents.items import from_item
from incidents.keyed import guard_operations, guarded, request_digest
from incidents.keys import (
    details_key,
    event_key,
    number_index_key,
)
from incidents.models import (
    EventType,
    Incident,
    IncidentSummary,
    Note,
    NoteAdded,
    Status,
    Timeout,
    timestamp,
)
from incidents.requests import AddNote, UpdateIncident
from incidents.store import Caller, Failure, Store, labelled
from incidents.summaries import read_summary
from incidents.table import GSI2, GSI3
from incidents.timeline.events import (
    Counted,
    as_read,
    backfill_created,
    change_event,
    change_operations,
    event_from_item,
    event_puts,
    pause_before_retry,
    require_counted,
)

Change = Transaction[Failure, None]
CHANGE_ATTEMPTS = 8
"""Transactions an update or a note tries while other changes of the incident (which move
its event counter, not its version) win the race."""


def get_incident(store: Store, caller: Caller, incident_id: str) -> Incident:
    """Summary (one point read: its shard is calculated), details, and participants."""
    return _whole(store, caller.account_id, load_summary(store, caller, incident_id))


def get_incident_unless(
    store: Store, caller: Caller, incident_id: str, known: Collection[str]
) -> tuple[Incident | None, str]:
    """The incident and its `incident_tag`; None instead of the incident when that tag is
    one of `known`, or `known` holds ``*`` (the caller's copy is current, or any will do:
    one point read, nothing more)."""
    counted = require_counted(store, caller, incident_id)
    tag = incident_tag(counted.summary.version, counted.seq)
    if tag in known or "*" in known:
        return None, tag
    return _whole(store, caller.account_id, counted.summary), tag


def incident_tag(version: int, seq: int) -> str:
    """An incident's entity tag: its version (what If-Match compares) and its event counter
    (participants and notes move the counter and leave the version)."""
    return f"{version}.{seq}"


def _whole(store: Store, account: str, summary: IncidentSummary) -> Incident:
    details = store.get(*details_key(account, summary.id))
    body: dict[str, Any] = _details_of(details) if details else {}
    participants = get_refreshed_copies(store, account, summary)
    return Incident(summary=summary, details=body, participants=participants)


def update_incident(
    store: Store,
    caller: Caller,
    incident_id: str,
    request: UpdateIncident,
    if_match: int | None = None,
    *,
    also: Sequence[Operation[Failure]] = (),
    timeout: Timeout | None = None,
    restart: Restart | None = None,
) -> IncidentSummary:
    """Change title, status or severity, with its event; `if_match` makes it conditional on
    a version. A request that changes nothing writes nothing and answers the summary. `also`
    adds writes of the caller's to the transaction (a timer's claim); `timeout` names the
    lifecycle timer making the change, on its event. An acknowledge or a resolve sets or
    clears the incident's acknowledgement timer in the same transaction
    (`incidents.incident.acknowledgement`); triggered again, its escalation starts over
    where `restart` says (level 1 of the policy it keeps by default)."""
    for attempt in range(CHANGE_ATTEMPTS):
        counted = require_counted(store, caller, incident_id)
        current = counted.summary
        if if_match is not None and if_match != current.version:
            raise PreconditionFailedError(
                f"incident is at version {current.version}, not {if_match}"
            )
        changes = request.model_dump(exclude_none=True)
        if all(getattr(current, name) == value for name, value in changes.items()):
            if also:  # the caller's writes still go, on their own
                store.transact_growing(lambda: Transaction(list(also), None))
            return current
        updated = IncidentSummary.model_validate(
            {
                **current.model_dump(),
                **changes,
                "updated_at": timestamp(store.clock()),
                "version": current.version + 1,
            }
        )
        events = backfill_created(counted)
        seq = counted.seq + len(events) + 1
        events.append(change_event(current, updated, caller, seq, timeout))
        put = _summary_put(store, caller.account_id, updated, counted, len(events))
        written = [put, *event_puts(store, caller.account_id, events, updated)]
        seconds = acknowledgement_timeout(store, caller.account_id, current, updated)
        try:
            store.transact_growing(
                partial(
                    _change,
                    store,
                    caller.account_id,
                    written,
                    also,
                    seconds,
                    current,
                    updated,
                    restart,
                )
            )
        except VersionConflictError:
            _raise_if_version_moved(store, caller, current, if_match)
            pause_before_retry(attempt)
            continue
        refresh_after_commit(store, caller.account_id, updated)
        return updated
    raise VersionConflictError("the incident keeps changing; retry")


def _change(  # noqa: PLR0917 (bound by `partial`, one per try)
    store: Store,
    account: str,
    written: list[Item],
    also: Sequence[Operation[Failure]],
    seconds: int | None,
    before: IncidentSummary,
    updated: IncidentSummary,
    restart: Restart | None,
) -> Change:
    """An update's transaction: its summary and events, the caller's writes, and the
    acknowledgement timer's, derived from the due index's shard count as it is now (it
    grows if the timer's bucket is throttled), and the escalation's (stopped by an
    acknowledge or a resolve, started over when triggered again)."""
    timers = acknowledgement_timers(store, account, seconds, before, updated)
    escalation = status_operations(store, account, before, updated, restart)
    return Transaction([*map(labelled, written), *also, *timers, *escalation], None)


def _summary_put(
    store: Store, account: str, updated: IncidentSummary, counted: Counted, events: int
) -> Item:
    """The transaction's Put of the updated summary, on the version and counter read, and,
    when its state stays, on its list entry still being where it was read (a mover that
    re-pointed it meanwhile makes the change read again, rather than undo the move)."""
    condition, names, values = as_read(counted)
    listed_at = counted.listed_at if updated.state is counted.summary.state else None
    if listed_at is not None:
        condition += f" AND {GSI2.partition_key} = :listed"
        values = {**values, ":listed": {"S": listed_at}}
    item = summary_item(
        store, account, updated, event_seq=counted.seq + events, pk=counted.pk, listed_at=listed_at
    )
    return {
        "Put": {
            "TableName": store.table_name,
            "Item": item,
            "ConditionExpression": condition,
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values,
        }
    }


def _raise_if_version_moved(
    store: Store, caller: Caller, read: IncidentSummary, if_match: int | None
) -> None:
    """After a lost race: another update won (409, or 412 with If-Match); if only the event
    counter moved (a participant or a note), the update tries again."""
    now = require_counted(store, caller, read.id).summary
    if now.version == read.version:
        return
    if if_match is not None:
        raise PreconditionFailedError("the incident changed since that version")
    raise VersionConflictError("the incident changed meanwhile; retry")


def resolve_incident(store: Store, caller: Caller, incident_id: str) -> IncidentSummary:
    """Set the status to RESOLVED (state CLOSED)."""
    return update_incident(store, caller, incident_id, UpdateIncident(status=Status.RESOLVED))


def add_note(
    store: Store,
    caller: Caller,
    incident_id: str,
    request: AddNote,
    request_key: str | None = None,
) -> NoteAdded:
    """A ``note.added`` event on the incident's timeline; with `request_key` a retry
    returns the note the first request wrote (the guard rides in the transaction)."""
    digest = request_digest({"command": "note", "incident": incident_id, "text": request.text})
    if request_key is not None:
        noted = _noted_once(store, caller, request_key, digest)
        if noted is not None:
            return noted
    for attempt in range(CHANGE_ATTEMPTS):
        counted = require_counted(store, caller, incident_id)
        note = Note(text=request.text)
        operations, event = change_operations(
            store, caller, counted, EventType.NOTE_ADDED, note=note
        )
        assert isinstance(event, NoteAdded), "a note change writes a note event"
        written = {"incident_id": incident_id, "event_seq": event.seq}
        guard = guard_operations(store, caller, request_key, digest, written) if request_key else []
        failures: list[DomainError | None] = [None] * len(operations)
        failures += [AlreadyCreatedError("written by an earlier request with this key")]
        try:
            store.transact([*operations, *guard], failures)
        except AlreadyCreatedError:
            assert request_key is not None, "only a keyed note writes a guard"
            noted = _noted_once(store, caller, request_key, digest)
            assert noted is not None, "the guard that failed the transaction exists"
            return noted
        except VersionConflictError:
            pause_before_retry(attempt)
            continue
        return event
    raise VersionConflictError("the incident keeps changing; retry")


def _noted_once(store: Store, caller: Caller, request_key: str, digest: str) -> NoteAdded | None:
    """The note an earlier request with this key and this note wrote; 409 for another."""
    guard = guarded(store, caller, request_key, digest)
    if guard is None:
        return None
    if "event_seq" not in guard:  # a guard written before digests, by a create
        raise KeyReusedError("this Idempotency-Key was used for a create")
    item = store.get(*event_key(caller.account_id, guard["incident_id"], int(guard["event_seq"])))
    assert item is not None, "a guard is written with its event"
    noted = event_from_item(item)
    assert isinstance(noted, NoteAdded), "a note's guard names its note event"
    return noted


def incident_id_by_number(store: Store, caller: Caller, number: int) -> str:
    """The id of the account's incident `number` (GSI3: one key read); 404 without."""
    pk, sk = number_index_key(caller.account_id, number)
    response = store.client.query(
        TableName=store.table_name,
        IndexName=GSI3.name,
        KeyConditionExpression=f"{GSI3.partition_key} = :pk AND {GSI3.sort_key} = :sk",
        ExpressionAttributeValues={":pk": {"S": pk}, ":sk": {"S": sk}},
        ExpressionAttributeNames={"#id": "id"},
        ProjectionExpression="#id",
        Limit=1,
    )
    items = response.get("Items", [])
    if not items:
        raise NotFoundError(f"incident number {number} not found")
    return items[0]["id"]["S"]


def load_summary(store: Store, caller: Caller, incident_id: str) -> IncidentSummary:
    """The summary by one strongly consistent point read; 404 if not in the caller's account."""
    item = read_summary(store, caller.account_id, incident_id)
    if item is None:
        raise NotFoundError(f"incident {incident_id} not found")
    return from_item(IncidentSummary, item)


def _details_of(item: Item) -> dict[str, Any]:
    """The details JSON stored in a details item."""
    body: dict[str, Any] = json.loads(item["body"]["S"])
    return body
