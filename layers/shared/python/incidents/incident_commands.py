"""Incident commands: create, get, update (and resolve), add and remove participants.

Consistency rules (README "Participation copies"): every participation carries a copy of
the summary; an update bumps the summary's ``version`` under a condition and then refreshes
every copy found by a strongly consistent query, each copy only ever moving forward; a
participant is added in a transaction that checks the summary's version, so an update and
an addition that race cannot leave a stale copy behind.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from dynashard import Item, error_code
from incidents.errors import (
    AlreadyCreatedError,
    DomainError,
    NotFoundError,
    PreconditionFailedError,
    ThrottledError,
    TooManyParticipantsError,
    VersionConflictError,
)
from incidents.items import (
    check_item_sizes,
    details_body,
    from_item,
    participation_from_item,
    participation_to_item,
    serialize,
    to_item,
)
from incidents.keys import (
    counter_key,
    create_once_key,
    details_key,
    number_index_key,
    participant_index_key,
    participant_meta,
    participant_sort_key,
    participations_partition,
    state_index_key,
    summary_key,
    teams_partition,
)
from incidents.models import Incident, IncidentSummary, Participation, Role, Status, timestamp
from incidents.requests import AddParticipant, CreateIncident, UpdateIncident
from incidents.store import (
    MAX_TRANSACTION_ITEMS,
    Caller,
    Store,
    cancellation_codes,
    condition_failed,
    new_id,
)
from incidents.users import user_exists_check

logger = logging.getLogger(__name__)
ADD_PARTICIPANT_ATTEMPTS = 5
REFRESH_ATTEMPTS = 5
"""Transactions of one refresh group: each retry drops the copies that failed their
condition (already newer, or removed), so it ends within as many as there are copies."""
MAX_PARTICIPANTS = 100
"""Participants (users and teams) of one incident: every update refreshes each one's copy,
in one transaction of up to 100 writes, so an update's work stays bounded."""
PARTICIPANT_COUNT = "participants"
"""The details item's count of participations, kept in step by every transaction that adds
or removes one (its condition enforces `MAX_PARTICIPANTS` under concurrent adds)."""
CREATE_KEY_SECONDS = 24 * 3600
"""How long a keyed create's guard lasts: as long as its idempotency record."""
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
    needed = 2 + len(participants) + len(teams) + len(checks) + (request_key is not None)
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
    failures: list[DomainError | None] = [None] * (2 + len(copies))
    failures += [NotFoundError(f"team {team} not found") for team in teams]
    failures += [missing for _, missing in checks]
    guard = _create_guard(store, caller, request_key, summary) if request_key else []
    failures += [AlreadyCreatedError("created by an earlier request with this key")] * len(guard)
    for attempt in range(GROWTH_ATTEMPTS):
        summary_item, *other_items = new_incident_items(store, account, summary, body, copies)
        operations = [
            store.put_operation(summary_item, new=True),
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
            if attempt + 1 == GROWTH_ATTEMPTS or not _grow_participants(store, account, hot):
                raise
    return Incident(summary=summary, details=request.details, participants=copies)


def _create_guard(
    store: Store, caller: Caller, request_key: str, summary: IncidentSummary
) -> list[Item]:
    """The transaction's Put of the keyed create's guard (expires with the key)."""
    pk, sk = create_once_key(caller.account_id, caller.user_id, request_key)
    expires = int(store.clock().timestamp()) + CREATE_KEY_SECONDS
    item = serialize(
        {"PK": pk, "SK": sk, "Type": "create_once", "incident_id": summary.id, "ExpiresAt": expires}
    )
    return [store.put_operation(item, new=True)]


def _created_once(store: Store, caller: Caller, request_key: str) -> Incident | None:
    """The incident an earlier create with `request_key` wrote (strongly consistent)."""
    guard = store.get(*create_once_key(caller.account_id, caller.user_id, request_key))
    if guard is None:
        return None
    return get_incident(store, caller, guard["incident_id"]["S"])


def new_incident_items(
    store: Store, account: str, summary: IncidentSummary, body: str, copies: list[Participation]
) -> list[Item]:
    """A new incident's items: summary, details (`body`, JSON), one per participation.

    The create command writes them in one transaction; demo seeding in batches.
    """
    details_pk, details_sk = details_key(account, summary.id)
    details = {"PK": details_pk, "SK": details_sk, "Type": "details", "body": body}
    return [
        _summary_item(store, account, summary),
        serialize({**details, PARTICIPANT_COUNT: len(copies)}),
        *[_participation_item(store, account, copy) for copy in copies],
    ]


def get_incident(store: Store, caller: Caller, incident_id: str) -> Incident:
    """Summary (one point read: its shard is calculated), details, and participants."""
    summary = load_summary(store, caller, incident_id)
    details = store.get(*details_key(caller.account_id, incident_id))
    body: dict[str, Any] = _details_of(details) if details else {}
    copies = store.query_partition(participations_partition(caller.account_id, incident_id))
    participants = [participation_from_item(item) for item in copies]
    behind = any(_copy_version(copy) < summary.version for copy in copies)
    # An update's refresh was interrupted: repair the copies it left behind.
    if behind and _refresh_after_commit(store, caller.account_id, summary, copies):
        participants = [p.model_copy(update={"incident": summary}) for p in participants]
    return Incident(summary=summary, details=body, participants=participants)


def update_incident(
    store: Store,
    caller: Caller,
    incident_id: str,
    request: UpdateIncident,
    if_match: int | None = None,
) -> IncidentSummary:
    """Change title, status or severity; `if_match` makes it conditional on a version."""
    current = load_summary(store, caller, incident_id)
    if if_match is not None and if_match != current.version:
        raise PreconditionFailedError(f"incident is at version {current.version}, not {if_match}")
    changes = request.model_dump(exclude_none=True)
    updated = IncidentSummary.model_validate(
        {
            **current.model_dump(),
            **changes,
            "updated_at": timestamp(store.clock()),
            "version": current.version + 1,
        }
    )
    item = _summary_item(store, caller.account_id, updated)
    try:
        store.client.put_item(
            TableName=store.table_name,
            Item=item,
            ConditionExpression="#version = :expected",
            ExpressionAttributeNames={"#version": "version"},
            ExpressionAttributeValues={":expected": {"N": str(current.version)}},
        )
    except ClientError as error:
        if not condition_failed(error):
            raise
        if if_match is not None:
            raise PreconditionFailedError("the incident changed since that version") from None
        raise VersionConflictError("the incident changed meanwhile; retry") from None
    _refresh_after_commit(store, caller.account_id, updated)
    return updated


def resolve_incident(store: Store, caller: Caller, incident_id: str) -> IncidentSummary:
    """Set the status to RESOLVED (state CLOSED)."""
    return update_incident(store, caller, incident_id, UpdateIncident(status=Status.RESOLVED))


def add_participant(
    store: Store, caller: Caller, incident_id: str, request: AddParticipant
) -> Participation:
    """Add a user or team (or a role to one already there), with an up-to-date copy; a new
    participant beyond `MAX_PARTICIPANTS` is refused (400 too_many_participants)."""
    account = caller.account_id
    for _ in range(ADD_PARTICIPANT_ATTEMPTS):
        summary = load_summary(store, caller, incident_id)
        copy_key = (participations_partition(account, incident_id), request.participant_id)
        existing = store.get(*copy_key)
        is_new = existing is None
        copy_item = _participation_item(
            store,
            account,
            Participation(
                participant_id=request.participant_id, roles=[request.role], incident=summary
            ),
        )
        operations = [
            _add_role(store, copy_item, summary, new=is_new),
            _summary_unchanged(store, account, summary),
        ]
        failures: list[Any] = [None, None]
        if is_new:
            operations.append(_count_participants(store, account, incident_id, +1))
            failures.append(
                TooManyParticipantsError(f"an incident has at most {MAX_PARTICIPANTS} participants")
            )
        if request.role is Role.TEAM:
            operations.append(store.exists_check(teams_partition(account), request.participant_id))
            failures.append(NotFoundError(f"team {request.participant_id} not found"))
        elif request.participant_id != caller.user_id:
            check, missing = user_exists_check(store, account, request.participant_id)
            operations.append(check)
            failures.append(missing)
        try:
            store.transact(operations, failures)
        except VersionConflictError:
            continue
        except ThrottledError as error:
            hot = [request.participant_id] if 0 in error.items else []
            if not _grow_participants(store, account, hot):
                raise
            continue
        return _participation_after_commit(store, copy_key, existing, request, summary)
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


def remove_participant(store: Store, caller: Caller, incident_id: str, participant_id: str) -> None:
    """Remove a participant (every role) from an incident, and count it out."""
    account = caller.account_id
    delete = store.delete_operation(participations_partition(account, incident_id), participant_id)
    missing = NotFoundError(f"{participant_id} does not participate in incident {incident_id}")
    store.transact([delete, _count_participants(store, account, incident_id, -1)], [missing])


def _count_participants(store: Store, account: str, incident_id: str, change: int) -> Item:
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


def _grow_participants(store: Store, account: str, participant_ids: list[str]) -> bool:
    """Grow the shard count of each participant whose partition throttled a transaction.

    True if any count grew (the caller retries on the wider key space); False within the
    cooldown or at the maximum, where the throttling goes back to the client as a 429.
    """
    grown = False
    for participant_id in participant_ids:
        key = participant_meta(account, participant_id)
        seen = store.counts.get(key)
        grown |= store.counts.grow(key, seen).shard_count != seen.shard_count
    return grown


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


def _summary_item(store: Store, account: str, summary: IncidentSummary) -> Item:
    pk, sk = summary_key(account, summary.id, store.config)
    gsi2pk, gsi2sk = state_index_key(
        account, summary.state, summary.id, summary.created_at, store.config
    )
    gsi3pk, gsi3sk = number_index_key(account, summary.number)
    keys = {"PK": pk, "SK": sk, "GSI2PK": gsi2pk, "GSI2SK": gsi2sk}
    return to_item(summary, "incident", {**keys, "GSI3PK": gsi3pk, "GSI3SK": gsi3sk})


def _participation_item(store: Store, account: str, copy: Participation) -> Item:
    summary = copy.incident
    count = store.counts.get(participant_meta(account, copy.participant_id)).shard_count
    keys = {
        "PK": participations_partition(account, summary.id),
        "SK": copy.participant_id,
        "GSI1PK": participant_index_key(account, copy.participant_id, summary.id, count),
        "GSI1SK": participant_sort_key(summary.state, summary.created_at, summary.id),
    }
    return participation_to_item(copy, keys)


def _summary_unchanged(store: Store, account: str, summary: IncidentSummary) -> Item:
    pk, sk = summary_key(account, summary.id, store.config)
    return {
        "ConditionCheck": {
            "TableName": store.table_name,
            "Key": {"PK": {"S": pk}, "SK": {"S": sk}},
            "ConditionExpression": "#version = :version",
            "ExpressionAttributeNames": {"#version": "version"},
            "ExpressionAttributeValues": {":version": {"N": str(summary.version)}},
        }
    }


def _copy_fields(summary: IncidentSummary) -> Item:
    """What a participation copies from the summary (and its sort key, which has the state)."""
    values = {f"incident_{name}": value for name, value in summary.model_dump(mode="json").items()}
    values["GSI1SK"] = participant_sort_key(summary.state, summary.created_at, summary.id)
    return serialize(values)


def _assignments(values: Item) -> tuple[str, dict[str, str], Item]:
    """``#a0 = :a0, ...`` for `values`, with its names and values."""
    names = {f"#a{i}": name for i, name in enumerate(values)}
    placeholders = {f":a{i}": value for i, value in enumerate(values.values())}
    return ", ".join(f"#a{i} = :a{i}" for i in range(len(values))), names, placeholders


def _add_role(store: Store, copy_item: Item, summary: IncidentSummary, *, new: bool) -> Item:
    """Create the copy (`new`: only if none exists, since the count goes up with it) or add a
    role to the existing one, moving its summary fields forward only."""
    fields = {
        name: value
        for name, value in copy_item.items()
        if name not in {"PK", "SK", "GSI1PK", "roles"}
    }
    assignments, names, values = _assignments(fields)
    names["#roles"] = "roles"
    values |= {":gsi1pk": copy_item["GSI1PK"], ":roles": copy_item["roles"]}
    if new:
        condition = "attribute_not_exists(PK)"
    else:
        condition = "attribute_exists(PK) AND #iv <= :version"
        names["#iv"] = "incident_version"
        values[":version"] = {"N": str(summary.version)}
    return {
        "Update": {
            "TableName": store.table_name,
            "Key": {"PK": copy_item["PK"], "SK": copy_item["SK"]},
            "UpdateExpression": (
                f"SET {assignments}, GSI1PK = if_not_exists(GSI1PK, :gsi1pk) ADD #roles :roles"
            ),
            "ConditionExpression": condition,
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values,
        }
    }


def _refresh_copies(
    store: Store, account: str, summary: IncidentSummary, copies: list[Item] | None = None
) -> None:
    """Bring every copy behind `summary` to it, in transactions of up to 100 conditional
    updates (one for an incident within `MAX_PARTICIPANTS`). A copy never goes back in
    version and a removed one is never re-created: a copy that fails its condition (newer,
    or gone) is dropped from the transaction, which runs again without it."""
    if copies is None:
        copies = store.query_partition(participations_partition(account, summary.id))
    stale = [copy for copy in copies if _copy_version(copy) < summary.version]
    assignments, names, values = _assignments(_copy_fields(summary))
    names["#iv"] = "incident_version"
    values[":version"] = {"N": str(summary.version)}
    for start in range(0, len(stale), MAX_TRANSACTION_ITEMS):
        keys = [
            {"PK": c["PK"], "SK": c["SK"]} for c in stale[start : start + MAX_TRANSACTION_ITEMS]
        ]
        _refresh_group(store, keys, f"SET {assignments}", names, values)


def _refresh_group(
    store: Store, keys: list[Item], update: str, names: dict[str, str], values: Item
) -> None:
    for _ in range(REFRESH_ATTEMPTS):
        if not keys:
            return
        operations = [
            {
                "Update": {
                    "TableName": store.table_name,
                    "Key": key,
                    "UpdateExpression": update,
                    "ConditionExpression": "attribute_exists(PK) AND #iv < :version",
                    "ExpressionAttributeNames": names,
                    "ExpressionAttributeValues": values,
                }
            }
            for key in keys
        ]
        try:
            store.client.transact_write_items(TransactItems=operations)  # type: ignore[arg-type]
            return
        except ClientError as error:
            if error_code(error) != "TransactionCanceledException":
                raise
            codes = cancellation_codes(error)
            keys = [
                key
                for key, code in zip(keys, codes, strict=False)
                if code != "ConditionalCheckFailed"
            ]
    raise VersionConflictError("copies kept changing during the refresh; the next update retries")


def _copy_version(copy: Item) -> int:
    return int(copy["incident_version"]["N"])


def _refresh_after_commit(
    store: Store, account: str, summary: IncidentSummary, copies: list[Item] | None = None
) -> bool:
    """`_refresh_copies` where the summary is already written: a failure must not turn the
    committed write into an error. The copies left behind keep their older version; the next
    update, or the next GET of the incident, brings them forward. True if all are current."""
    try:
        _refresh_copies(store, account, summary, copies)
    except (ClientError, BotoCoreError, DomainError):
        logger.warning(
            "participation copies left behind; the next update or GET refreshes them",
            exc_info=True,
            extra={"incident_id": summary.id, "version": summary.version},
        )
        return False
    return True
