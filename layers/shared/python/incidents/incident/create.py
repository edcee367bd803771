"""Creating an incident: summary, details, participations, its first event and its number,
in one transaction (`create_incident`); the same items for seeding (`new_incident_items`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from dynashard.query import Item
from dynashard.resharding import Operation, Transaction
from incidents.errors import (
    AlreadyCreatedError,
    DomainError,
    KeyReusedError,
    NotFoundError,
    TooManyParticipantsError,
    VersionConflictError,
)
from incidents.incident.commands import get_incident
from incidents.incident.copies import participation_item, summary_item
from incidents.incident.participants import (
    MAX_PARTICIPANTS,
    PARTICIPANT_COUNT,
    participant_sharded,
)
from incidents.items import check_item_sizes, details_body, serialize
from incidents.keyed import guard_operations, guarded, request_digest
from incidents.keys import COUNTER_SK, details_key, number_sequence, teams_partition
from incidents.models import (
    Incident,
    IncidentSummary,
    Participation,
    Role,
    TimelineEvent,
    timestamp,
)
from incidents.requests import CreateIncident
from incidents.store import MAX_TRANSACTION_ITEMS, Caller, Failure, Store, labelled, new_id
from incidents.table import PK, SK
from incidents.tenant_shards import Family
from incidents.timeline.events import created_event, event_item, pause_before_retry
from incidents.users import user_exists_check

CREATE_ATTEMPTS = 12
"""Transactions a create tries while other writes of the account conflict with it."""
GUARDED = "created by an earlier request with this key"
Also = Callable[[IncidentSummary], list[Operation[Failure]]]
"""More writes for a create's transaction, given its summary, with their errors."""


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
    store: Store,
    caller: Caller,
    request: CreateIncident,
    request_key: str | None = None,
    *,
    also: Also | None = None,
) -> Incident:
    """Summary, details and every participation in one transaction, numbered per account.

    With `request_key` (the client's Idempotency-Key) the transaction also writes a guard
    that names the incident: a second create with the same key, whatever path it takes
    (a retry after the idempotency record was lost or expired early), fails on the guard
    and returns the incident the first one wrote, never a second incident. `also` adds
    writes of the caller's to the transaction (an alert's claim on its key), each with the
    error its failed condition raises.
    """
    digest = request_digest({"command": "create", "body": request.model_dump(mode="json")})
    if request_key is not None:
        existing = _created_once(store, caller, request_key, digest)
        if existing is not None:
            return existing
    participants, checks = _checked_participants(store, caller, request, request_key)
    body = details_body(request.details)
    account = caller.account_id
    now = timestamp(store.clock())

    number = next_number(store, account)  # once: a create tried again keeps it
    if number == 1:  # a new account: its maps first, at one shard a family
        store.shards.ensure_maps(account)

    def build() -> Transaction[Failure, tuple[IncidentSummary, list[Participation]]]:
        summary = new_summary(caller, number, request, now)
        copies = [
            Participation(participant_id=pid, roles=sorted(roles), incident=summary)
            for pid, roles in participants.items()
        ]
        guard = (
            guard_operations(store, caller, request_key, digest, {"incident_id": summary.id})
            if request_key
            else []
        )
        operations = [
            *_incident_writes(store, account, summary, body, copies),
            *[labelled(check, missing) for check, missing in checks],
            *[labelled(operation, AlreadyCreatedError(GUARDED)) for operation in guard],
            *(also(summary) if also else []),
        ]
        check_item_sizes([operation.request for operation in operations])
        return Transaction(operations, (summary, copies))

    for attempt in range(CREATE_ATTEMPTS):
        started = time.monotonic()
        try:
            summary, copies = store.transact_growing(build)
            break
        except AlreadyCreatedError:
            assert request_key is not None, "only a keyed create writes a guard"
            existing = _created_once(store, caller, request_key, digest)
            assert existing is not None, "the guard that failed the transaction exists"
            return existing
        except VersionConflictError:  # another write to an item of this one came first
            pause_before_retry(attempt, time.monotonic() - started)
    else:
        raise VersionConflictError("the incident's items keep changing under it; retry")
    return Incident(summary=summary, details=request.details, participants=copies)


def _incident_writes(
    store: Store, account: str, summary: IncidentSummary, body: str, copies: list[Participation]
) -> list[Operation[Failure]]:
    """The new incident's puts, each with the sharded keys it writes under: the summary
    (its family and its state list's), each participation (its participant's), each event
    (the account's events)."""
    first, details, *rest = new_incident_items(store, account, summary, body, copies)
    items, events = rest[: len(copies)], rest[len(copies) :]
    lists = store.shards.sharded(account, Family.SUMMARIES, Family.of_state(summary.state))
    timeline = store.shards.sharded(account, Family.EVENTS)
    return [
        labelled(store.put_operation(first, new=True), None, lists),
        labelled(store.put_operation(details)),
        *[
            labelled(store.put_operation(item), None, participant_sharded(store, account, pid))
            for item, pid in zip(items, (copy.participant_id for copy in copies), strict=True)
        ],
        *[labelled(store.put_operation(item), None, timeline) for item in events],
    ]


def _checked_participants(
    store: Store, caller: Caller, request: CreateIncident, request_key: str | None
) -> tuple[dict[str, set[Role]], list[tuple[Item, DomainError]]]:
    """The participants with their roles, and a check that each team and each assignee
    exists; `TooManyParticipantsError` if they would not fit one incident or one
    transaction."""
    participants = _participants(caller, request)
    account = caller.account_id
    teams = list(dict.fromkeys(request.teams))
    checks: list[tuple[Item, DomainError]] = [
        (
            store.exists_check(teams_partition(account), team),
            NotFoundError(f"team {team} not found"),
        )
        for team in teams
    ]
    checks += [
        user_exists_check(store, account, user)
        for user in dict.fromkeys(request.assignees)
        if user != caller.user_id
    ]
    if len(participants) > MAX_PARTICIPANTS:
        raise TooManyParticipantsError(
            f"{len(participants)} participants; an incident has at most {MAX_PARTICIPANTS}"
        )
    needed = 3 + len(participants) + len(checks) + (request_key is not None)
    if needed > MAX_TRANSACTION_ITEMS:
        raise TooManyParticipantsError(
            f"{len(participants)} participants and {len(teams)} teams need {needed} "
            f"operations; one transaction takes {MAX_TRANSACTION_ITEMS}"
        )
    return participants, checks


def _created_once(store: Store, caller: Caller, request_key: str, digest: str) -> Incident | None:
    """The incident an earlier create with this key and this body wrote; 409 for another."""
    guard = guarded(store, caller, request_key, digest)
    if guard is None:
        return None
    if "event_seq" in guard:  # a guard written before digests, by a note
        raise KeyReusedError("this Idempotency-Key was used for a note")
    return get_incident(store, caller, guard["incident_id"])


def new_incident_items(
    store: Store,
    account: str,
    summary: IncidentSummary,
    body: str,
    copies: list[Participation],
    *,
    history: Sequence[tuple[TimelineEvent, IncidentSummary]] | None = None,
) -> list[Item]:
    """A new incident's items: summary, details (`body`, JSON), one per participation, and
    its timeline: `history` (each event with the summary after it), or only its
    ``incident.created`` event (by its creator).

    The create command writes them in one transaction; demo seeding in batches.
    """
    details_pk, details_sk = details_key(account, summary.id)
    details = {PK: details_pk, SK: details_sk, "Type": "details", "body": body}
    if history is None:
        created = created_event(summary, copies, summary.created_by, summary.created_at)
        history = [(created, summary)]
    return [
        summary_item(store, account, summary, event_seq=len(history)),
        serialize({**details, PARTICIPANT_COUNT: len(copies)}),
        *[participation_item(store, account, copy) for copy in copies],
        *[event_item(store, account, event, after) for event, after in history],
    ]


def _participants(caller: Caller, request: CreateIncident) -> dict[str, set[Role]]:
    roles: dict[str, set[Role]] = {caller.user_id: {Role.CREATOR}} if caller.takes_part else {}
    for user in request.assignees:
        roles.setdefault(user, set()).add(Role.ASSIGNEE)
    for team in request.teams:
        roles.setdefault(team, set()).add(Role.TEAM)
    return roles


def next_number(store: Store, account: str) -> int:
    """The account's next incident number, taken before the create's transaction and outside
    it (`dynashard.limits.Sequence`): creates that take at once, a burst of expiries or of
    alerts, never conflict over it; a create that then fails leaves a gap."""
    return store.table.sequence(COUNTER_SK).take(number_sequence(account))[0]
