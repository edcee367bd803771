"""Incident commands: create, get, update (and resolve), notes, lookup by number.

Every change writes its timeline event in its own transaction (`incidents.timeline`);
participants are `incidents.participant_commands`, the copies of the summary they carry
`incidents.copies`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from dynashard import Item
from incidents.copies import (
    get_refreshed_copies,
    participation_item,
    refresh_after_commit,
    summary_item,
)
from incidents.errors import (
    AlreadyCreatedError,
    DomainError,
    KeyReusedError,
    NotFoundError,
    PreconditionFailedError,
    ThrottledError,
    TooManyParticipantsError,
    VersionConflictError,
)
from incidents.items import check_item_sizes, deserialize, details_body, from_item, serialize
from incidents.keys import (
    counter_key,
    create_once_key,
    details_key,
    event_key,
    number_index_key,
    summary_key,
    teams_partition,
)
from incidents.models import (
    EventType,
    Incident,
    IncidentSummary,
    Note,
    Participation,
    Role,
    Status,
    TimelineEvent,
    timestamp,
)
from incidents.participant_commands import MAX_PARTICIPANTS, PARTICIPANT_COUNT, grow_participants
from incidents.requests import AddNote, CreateIncident, UpdateIncident
from incidents.store import MAX_TRANSACTION_ITEMS, Caller, Store, new_id
from incidents.timeline import (
    Counted,
    backfill_created,
    change_event,
    change_operations,
    counter_condition,
    created_event,
    event_from_item,
    event_item,
    event_puts,
    pause_before_retry,
    require_counted,
)
from incidents.users import user_exists_check

CHANGE_ATTEMPTS = 8
"""Transactions an update or a note tries while other changes of the incident (which move
its event counter, not its version) win the race."""
CREATE_KEY_SECONDS = 24 * 3600
"""How long a keyed create's (or note's) guard lasts: as long as its idempotency record."""
GROWTH_ATTEMPTS = 3
"""Transactions throttled on a participant's hot partition: grow its shards, retry, at most."""


def new_summary(caller: Caller, number: int, request: CreateIncident, now: str) -> IncidentSummary:
    """Version 1 of an incident `caller` creates at `now`, numbered `number`."""
    return IncidentSummary(
        id=new_id("inc"),
        number=number,
        title=request.title,
        status=request.status,
        severity=request.severity,
        created_by=caller.user_id,
        created_at=now,
        updated_at=now,
        version=1,
    )


def create_incident(
    store: Store, caller: Caller, request: CreateIncident, request_key: str | None = None
) -> Incident:
    """Summary, details and every participation in one transaction, numbered per account.

    With `request_key` (the client's Idempotency-Key) the transaction also writes a guard
    that names the incident: a second create with the same key, whatever path it takes
    (a retry after the idempotency record was lost or expired early), fails on the guard
    and returns the incident the first one wrote, never a second incident.
    """
    if request_key is not None:
        existing = _created_once(store, caller, request_key)
        if existing is not None:
            return existing
    participants = _participants(caller, request)
    teams = list(dict.fromkeys(request.teams))
    checks = [
        user_exists_check(store, caller.account_id, user)
        for user in dict.fromkeys(request.assignees)
        if user != caller.user_id
    ]
    if len(participants) > MAX_PARTICIPANTS:
        raise TooManyParticipantsError(
            f"{len(participants)} participants; an incident has at most {MAX_PARTICIPANTS}"
        )
    needed = 3 + len(participants) + len(teams) + len(checks) + (request_key is not None)
    if needed > MAX_TRANSACTION_ITEMS:
        raise TooManyParticipantsError(
            f"{len(participants)} participants and {len(teams)} teams need {needed} "
            f"operations; one transaction takes {MAX_TRANSACTION_ITEMS}"
        )
    body = details_body(request.details)
    summary = new_summary(
        caller,
        _next_number(store, caller.account_id),
        request,
        timestamp(store.clock()),
    )
    copies = [
        Participation(participant_id=pid, roles=sorted(roles), incident=summary)
        for pid, roles in participants.items()
    ]
    account = caller.account_id
    failures: list[DomainError | None] = [None] * (3 + len(copies))
    failures += [NotFoundError(f"team {team} not found") for team in teams]
    failures += [missing for _, missing in checks]
    guard = _guard(store, caller, request_key, {"incident_id": summary.id}) if request_key else []
    failures += [AlreadyCreatedError("created by an earlier request with this key")] * len(guard)
    for attempt in range(GROWTH_ATTEMPTS):
        first, *other_items = new_incident_items(store, account, summary, body, copies)
        operations = [
            store.put_operation(first, new=True),
            *[store.put_operation(item) for item in other_items],
            *[store.exists_check(teams_partition(account), team) for team in teams],
            *[check for check, _ in checks],
            *guard,
        ]
        check_item_sizes(operations)
        try:
            store.transact(operations, failures)
            break
        except AlreadyCreatedError:
            assert request_key is not None, "only a keyed create writes a guard"
            existing = _created_once(store, caller, request_key)
            assert existing is not None, "the guard that failed the transaction exists"
            return existing
        except ThrottledError as error:
            hot = [copies[i - 2].participant_id for i in error.items if 2 <= i < 2 + len(copies)]
            if attempt + 1 == GROWTH_ATTEMPTS or not grow_participants(store, account, hot):
                raise
    return Incident(summary=summary, details=request.details, participants=copies)


def _guard(store: Store, caller: Caller, request_key: str, written: dict[str, Any]) -> list[Item]:
    """The transaction's Put of a keyed command's guard, naming what it `written` (expires
    with the key)."""
    pk, sk = create_once_key(caller.account_id, caller.user_id, request_key)
    expires = int(store.clock().timestamp()) + CREATE_KEY_SECONDS
    item = serialize({"PK": pk, "SK": sk, "Type": "create_once", **written, "ExpiresAt": expires})
    return [store.put_operation(item, new=True)]


def _guarded(store: Store, caller: Caller, request_key: str) -> dict[str, Any] | None:
    """What an earlier keyed command with `request_key` wrote (strongly consistent)."""
    guard = store.get(*create_once_key(caller.account_id, caller.user_id, request_key))
    return deserialize(guard) if guard else None


def _created_once(store: Store, caller: Caller, request_key: str) -> Incident | None:
    """The incident an earlier create with `request_key` wrote."""
    guard = _guarded(store, caller, request_key)
    if guard is None:
        return None
    if "event_seq" in guard:
        raise KeyReusedError("this Idempotency-Key was used for a note")
    return get_incident(store, caller, guard["incident_id"])


def new_incident_items(
    store: Store,
    account: str,
    summary: IncidentSummary,
    body: str,
    copies: list[Participation],
    *,
    history: Sequence[TimelineEvent] | None = None,
) -> list[Item]:
    """A new incident's items: summary, details (`body`, JSON), one per participation, and
    its timeline: `history`, or only its ``incident.created`` event (by its creator).

    The create command writes them in one transaction; demo seeding in batches.
    """
    details_pk, details_sk = details_key(account, summary.id)
    details = {"PK": details_pk, "SK": details_sk, "Type": "details", "body": body}
    if history is None:
        history = [created_event(summary, copies, summary.created_by, summary.created_at)]
    return [
        summary_item(store, account, summary, event_seq=len(history)),
        serialize({**details, PARTICIPANT_COUNT: len(copies)}),
        *[participation_item(store, account, copy) for copy in copies],
        *[event_item(store, account, event) for event in history],
    ]


def get_incident(store: Store, caller: Caller, incident_id: str) -> Incident:
    """Summary (one point read: its shard is calculated), details, and participants."""
    summary = load_summary(store, caller, incident_id)
    details = store.get(*details_key(caller.account_id, incident_id))
    body: dict[str, Any] = _details_of(details) if details else {}
    participants = get_refreshed_copies(store, caller.account_id, summary)
    return Incident(summary=summary, details=body, participants=participants)


def update_incident(
    store: Store,
    caller: Caller,
    incident_id: str,
    request: UpdateIncident,
    if_match: int | None = None,
) -> IncidentSummary:
    """Change title, status or severity, with its event; `if_match` makes it conditional on
    a version. A request that changes nothing writes nothing and answers the summary."""
    for attempt in range(CHANGE_ATTEMPTS):
        counted = require_counted(store, caller, incident_id)
        current = counted.summary
        if if_match is not None and if_match != current.version:
            raise PreconditionFailedError(
                f"incident is at version {current.version}, not {if_match}"
            )
        changes = request.model_dump(exclude_none=True)
        if all(getattr(current, name) == value for name, value in changes.items()):
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
        events.append(change_event(current, updated, caller, counted.seq + len(events) + 1))
        put = _summary_put(store, caller.account_id, updated, counted, len(events))
        try:
            store.transact([put, *event_puts(store, caller.account_id, events)], [None])
        except VersionConflictError:
            _raise_if_version_moved(store, caller, current, if_match)
            pause_before_retry(attempt)
            continue
        refresh_after_commit(store, caller.account_id, updated)
        return updated
    raise VersionConflictError("the incident keeps changing; retry")


def _summary_put(
    store: Store, account: str, updated: IncidentSummary, counted: Counted, events: int
) -> Item:
    """The transaction's Put of the updated summary, on the version and counter read."""
    counter, names, values = counter_condition(counted)
    return {
        "Put": {
            "TableName": store.table_name,
            "Item": summary_item(store, account, updated, event_seq=counted.seq + events),
            "ConditionExpression": f"#version = :expected AND {counter}",
            "ExpressionAttributeNames": {"#version": "version", **names},
            "ExpressionAttributeValues": {
                ":expected": {"N": str(counted.summary.version)},
                **values,
            },
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
) -> TimelineEvent:
    """A ``note.added`` event on the incident's timeline; with `request_key` a retry
    returns the note the first request wrote (the guard rides in the transaction)."""
    if request_key is not None:
        noted = _noted_once(store, caller, request_key)
        if noted is not None:
            return noted
    for attempt in range(CHANGE_ATTEMPTS):
        counted = require_counted(store, caller, incident_id)
        note = Note(text=request.text)
        operations, event = change_operations(
            store, caller, counted, EventType.NOTE_ADDED, note=note
        )
        written = {"incident_id": incident_id, "event_seq": event.seq}
        guard = _guard(store, caller, request_key, written) if request_key else []
        failures: list[DomainError | None] = [None] * len(operations)
        failures += [AlreadyCreatedError("written by an earlier request with this key")]
        try:
            store.transact([*operations, *guard], failures)
        except AlreadyCreatedError:
            assert request_key is not None, "only a keyed note writes a guard"
            noted = _noted_once(store, caller, request_key)
            assert noted is not None, "the guard that failed the transaction exists"
            return noted
        except VersionConflictError:
            pause_before_retry(attempt)
            continue
        return event
    raise VersionConflictError("the incident keeps changing; retry")


def _noted_once(store: Store, caller: Caller, request_key: str) -> TimelineEvent | None:
    """The note an earlier keyed request wrote; 409 if the key was used for a create."""
    guard = _guarded(store, caller, request_key)
    if guard is None:
        return None
    if "event_seq" not in guard:
        raise KeyReusedError("this Idempotency-Key was used for a create")
    item = store.get(*event_key(caller.account_id, guard["incident_id"], int(guard["event_seq"])))
    assert item is not None, "a guard is written with its event"
    return event_from_item(item)


def incident_id_by_number(store: Store, caller: Caller, number: int) -> str:
    """The id of the account's incident `number` (GSI3: one key read); 404 without."""
    pk, sk = number_index_key(caller.account_id, number)
    response = store.client.query(
        TableName=store.table_name,
        IndexName="GSI3",
        KeyConditionExpression="GSI3PK = :pk AND GSI3SK = :sk",
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
    item = store.get(*summary_key(caller.account_id, incident_id, store.config))
    if item is None:
        raise NotFoundError(f"incident {incident_id} not found")
    return from_item(IncidentSummary, item)


def _details_of(item: Item) -> dict[str, Any]:
    """The details JSON stored in a details item."""
    body: dict[str, Any] = json.loads(item["body"]["S"])
    return body


def _participants(caller: Caller, request: CreateIncident) -> dict[str, set[Role]]:
    roles: dict[str, set[Role]] = {caller.user_id: {Role.CREATOR}}
    for user in request.assignees:
        roles.setdefault(user, set()).add(Role.ASSIGNEE)
    for team in request.teams:
        roles.setdefault(team, set()).add(Role.TEAM)
    return roles


def _next_number(store: Store, account: str) -> int:
    """The account's next incident number (atomic counter; a failed create leaves a gap)."""
    pk, sk = counter_key(account)
    response = store.client.update_item(
        TableName=store.table_name,
        Key={"PK": {"S": pk}, "SK": {"S": sk}},
        UpdateExpression="ADD #value :one",
        ExpressionAttributeNames={"#value": "value"},
        ExpressionAttributeValues={":one": {"N": "1"}},
        ReturnValues="UPDATED_NEW",
    )
    return int(response["Attributes"]["value"]["N"])
