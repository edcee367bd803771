"""Participants of an incident: add (a user or team, or a role), remove, and count them.

Each change is one transaction with its timeline event (`incidents.timeline.events`): the copy,
the details' participant count, the summary's event counter and the event commit together.
"""

from __future__ import annotations

import logging
from functools import partial

from botocore.exceptions import BotoCoreError, ClientError

from dynashard.query import Item
from dynashard.resharding import ShardedKey, Transaction
from incidents.errors import (
    NotFoundError,
    TooManyParticipantsError,
    VersionConflictError,
)
from incidents.incident.copies import add_role, participation_item
from incidents.items import participation_from_item
from incidents.keys import (
    details_key,
    participant_meta,
    participations_partition,
    teams_partition,
)
from incidents.models import EventParticipant, EventType, IncidentSummary, Participation, Role
from incidents.requests import AddParticipant
from incidents.store import Caller, Failure, Store, labelled
from incidents.timeline.events import (
    Counted,
    change_operations,
    pause_before_retry,
    require_counted,
)
from incidents.users import user_exists_check

logger = logging.getLogger(__name__)
CHANGE_ATTEMPTS = 8
"""Transactions one participant change tries: each concurrent change of the incident (its
event counter moved) costs one, with a jittered pause between them."""
MAX_PARTICIPANTS = 100
"""Participants (users and teams) of one incident: every update refreshes each one's copy,
in one transaction of up to 100 writes, so an update's work stays bounded."""
PARTICIPANT_COUNT = "participants"
"""The details item's count of participations, kept in step by every transaction that adds
or removes one (its condition enforces `MAX_PARTICIPANTS` under concurrent adds)."""


def add_participant(
    store: Store, caller: Caller, incident_id: str, request: AddParticipant
) -> Participation:
    """Add a user or team (or a role to one already there), with an up-to-date copy and a
    ``participant.added`` event; a new participant beyond `MAX_PARTICIPANTS` is refused. A
    role the participant already has changes nothing and writes nothing (no event, the
    incident's ETag stays), as an update that changes nothing."""
    account = caller.account_id
    for attempt in range(CHANGE_ATTEMPTS):
        counted = require_counted(store, caller, incident_id)
        summary = counted.summary
        copy_key = (participations_partition(account, incident_id), request.participant_id)
        existing = store.get(*copy_key)
        if existing is not None and request.role in existing.get("roles", {}).get("SS", []):
            return participation_from_item(existing)  # changes nothing: writes nothing
        build = partial(_add_transaction, store, caller, counted, request, is_new=existing is None)
        try:
            store.transact_growing(build)
        except VersionConflictError:
            pause_before_retry(attempt)
            continue
        return _participation_after_commit(store, copy_key, existing, request, summary)
    raise VersionConflictError("the incident keeps changing; retry")


def _add_transaction(
    store: Store, caller: Caller, counted: Counted, request: AddParticipant, *, is_new: bool
) -> Transaction[Failure, None]:
    """The add's transaction at the participant's current shard count: its copy (which
    grows that count when it throttles), the incident's change and event, the count of a
    new participant (within the limit), and the check that the user or team exists."""
    account, summary = caller.account_id, counted.summary
    participant = request.participant_id
    copy_item = participation_item(
        store,
        account,
        Participation(participant_id=participant, roles=[request.role], incident=summary),
    )
    sharded = participant_sharded(store, account, participant)
    operations = [labelled(add_role(store, copy_item, summary, new=is_new), None, sharded)]
    joined = EventParticipant(participant_id=participant, role=request.role)
    changes, _ = change_operations(
        store, caller, counted, EventType.PARTICIPANT_ADDED, participant=joined
    )
    operations += [labelled(change) for change in changes]
    if is_new:
        limit = TooManyParticipantsError(f"an incident has at most {MAX_PARTICIPANTS} participants")
        operations.append(labelled(count_participants(store, account, summary.id, +1), limit))
    if request.role is Role.TEAM:
        check = store.exists_check(teams_partition(account), participant)
        operations.append(labelled(check, NotFoundError(f"team {participant} not found")))
    elif participant != caller.user_id:
        operations.append(labelled(*user_exists_check(store, account, participant)))
    return Transaction(operations, None)


def remove_participant(store: Store, caller: Caller, incident_id: str, participant_id: str) -> None:
    """Remove a participant (every role) from an incident, count it out, and record a
    ``participant.removed`` event (with the participant's first role)."""
    account = caller.account_id
    key = (participations_partition(account, incident_id), participant_id)
    missing = NotFoundError(f"{participant_id} does not participate in incident {incident_id}")
    for attempt in range(CHANGE_ATTEMPTS):
        counted = require_counted(store, caller, incident_id)
        existing = store.get(*key)
        if existing is None:
            raise missing
        roles = participation_from_item(existing).roles
        left = EventParticipant(participant_id=participant_id, role=roles[0])
        operations = [
            store.delete_operation(*key),
            count_participants(store, account, incident_id, -1),
            *change_operations(
                store, caller, counted, EventType.PARTICIPANT_REMOVED, participant=left
            )[0],
        ]
        try:
            store.transact(operations, [missing])
            return
        except VersionConflictError:
            pause_before_retry(attempt)
    raise VersionConflictError("the incident keeps changing; retry")


def _participation_after_commit(
    store: Store,
    key: tuple[str, str],
    before: Item | None,
    request: AddParticipant,
    summary: IncidentSummary,
) -> Participation:
    """The participation as stored (a concurrent add may have added a role too); if it
    cannot be read back, what this add wrote: the committed write is never an error."""
    try:
        stored = store.get(*key)
    except (ClientError, BotoCoreError):
        logger.warning("could not read a participation back", exc_info=True)
        stored = None
    if stored is not None:
        return participation_from_item(stored)
    roles = {request.role} | (set(participation_from_item(before).roles) if before else set())
    return Participation(
        participant_id=request.participant_id, roles=sorted(roles), incident=summary
    )


def count_participants(store: Store, account: str, incident_id: str, change: int) -> Item:
    """The transaction's update of the details item's participant count by `change`; an
    increase is conditioned on the limit. Incidents written before the count existed get it
    here, counted once from their copies."""
    pk, sk = details_key(account, incident_id)
    details = store.get(pk, sk)
    if details is None:
        raise NotFoundError(f"incident {incident_id} not found")
    if PARTICIPANT_COUNT in details:
        counted = int(details[PARTICIPANT_COUNT]["N"])
    else:
        counted = len(store.query_partition(participations_partition(account, incident_id)))
    if change <= 0:
        return store.counter_update(pk, sk, (PARTICIPANT_COUNT, change), counted=counted)
    return store.counter_update(
        pk,
        sk,
        (PARTICIPANT_COUNT, change),
        counted=counted,
        condition=" AND (attribute_not_exists(#n) OR #n < :max)",
        values={":max": MAX_PARTICIPANTS - change + 1},
    )


def participant_sharded(store: Store, account: str, participant_id: str) -> tuple[ShardedKey]:
    """The participant's shard count, as the key a throttled write of its copy grows."""
    return (ShardedKey(store.counts, participant_meta(account, participant_id)),)
