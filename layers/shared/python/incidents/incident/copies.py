"""Participation copies: every participation carries a copy of its incident's summary.

An update bumps the summary's ``version`` and then refreshes every copy found by a strongly
consistent query, each copy only ever moving forward (README "Participation copies"); a
participant is added in a transaction that checks the summary's version, so an update and
an addition that race cannot leave a stale copy behind.
"""

from __future__ import annotations

import logging

from botocore.exceptions import BotoCoreError, ClientError

from dynashard.query import Item
from dynashard.throttling import cancellation_codes, error_code
from incidents.errors import DomainError, VersionConflictError
from incidents.items import participation_from_item, participation_to_item, serialize, to_item
from incidents.keys import (
    number_index_key,
    participant_index_key,
    participant_meta,
    participant_sort_key,
    participations_partition,
    state_index_key,
    summary_key,
)
from incidents.models import IncidentSummary, Participation
from incidents.store import MAX_TRANSACTION_ITEMS, Store
from incidents.summaries import SEQ_ATTRIBUTE
from incidents.table import GSI1, GSI2, GSI3, PK, SK, key_of
from incidents.tenant_shards import Family

logger = logging.getLogger(__name__)
REFRESH_ATTEMPTS = 5
"""Transactions of one refresh group: each retry drops the copies that failed their
condition (already newer, or removed), so it ends within as many as there are copies."""


def summary_item(
    store: Store,
    account: str,
    summary: IncidentSummary,
    *,
    event_seq: int,
    pk: str | None = None,
    listed_at: str | None = None,
) -> Item:
    """The summary's item with its index keys and its timeline's event counter: at `pk`
    and in its state list at `listed_at` (where they were read: a halving's mover moves
    them, an update never does, or a reader whose map lags the halving would miss the
    entry moved behind its cursor), or for a new one (a new state) the account's current
    shards."""
    shards = store.shards
    if pk is None:
        pk, _ = summary_key(account, summary.id, shards.write_count(account, Family.SUMMARIES))
    listed = shards.write_count(account, Family.of_state(summary.state))
    gsi2pk, gsi2sk = state_index_key(account, summary.state, summary.id, summary.created_at, listed)
    gsi2pk = listed_at or gsi2pk
    gsi3pk, gsi3sk = number_index_key(account, summary.number)
    keys = {PK: pk, SK: summary.id, GSI2.partition_key: gsi2pk, GSI2.sort_key: gsi2sk}
    keys |= {GSI3.partition_key: gsi3pk, GSI3.sort_key: gsi3sk}
    return to_item(summary, "incident", keys) | serialize({SEQ_ATTRIBUTE: event_seq})


def participation_item(store: Store, account: str, copy: Participation) -> Item:
    """A participation's item, in its participant's current shard of GSI1."""
    summary = copy.incident
    count = store.counts.get(participant_meta(account, copy.participant_id)).shard_count
    keys = {
        PK: participations_partition(account, summary.id),
        SK: copy.participant_id,
        GSI1.partition_key: participant_index_key(account, copy.participant_id, summary.id, count),
        GSI1.sort_key: participant_sort_key(summary.state, summary.created_at, summary.id),
    }
    return participation_to_item(copy, keys)


def copy_fields(summary: IncidentSummary) -> Item:
    """What a participation copies from the summary (and its sort key, which has the state)."""
    values = {f"incident_{name}": value for name, value in summary.model_dump(mode="json").items()}
    values[GSI1.sort_key] = participant_sort_key(summary.state, summary.created_at, summary.id)
    return serialize(values)


def set_clause(values: Item) -> tuple[str, dict[str, str], Item]:
    """``#a0 = :a0, ...`` for `values`, with its names and values."""
    names = {f"#a{i}": name for i, name in enumerate(values)}
    placeholders = {f":a{i}": value for i, value in enumerate(values.values())}
    return ", ".join(f"#a{i} = :a{i}" for i in range(len(values))), names, placeholders


def add_role(store: Store, copy_item: Item, summary: IncidentSummary, *, new: bool) -> Item:
    """Create the copy (`new`: only if none exists, since the count goes up with it) or add a
    role to the existing one, moving its summary fields forward only."""
    fields = {
        name: value
        for name, value in copy_item.items()
        if name not in {PK, SK, GSI1.partition_key, "roles"}
    }
    assignments, names, values = set_clause(fields)
    names |= {"#roles": "roles", "#gsi1pk": GSI1.partition_key}
    values |= {":gsi1pk": copy_item[GSI1.partition_key], ":roles": copy_item["roles"]}
    if new:
        condition = f"attribute_not_exists({PK})"
    else:
        condition = f"attribute_exists({PK}) AND #iv <= :version"
        names["#iv"] = "incident_version"
        values[":version"] = {"N": str(summary.version)}
    return {
        "Update": {
            "TableName": store.table_name,
            "Key": key_of(copy_item),
            "UpdateExpression": (
                f"SET {assignments}, #gsi1pk = if_not_exists(#gsi1pk, :gsi1pk) ADD #roles :roles"
            ),
            "ConditionExpression": condition,
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values,
        }
    }


def refresh_copies(
    store: Store, account: str, summary: IncidentSummary, copies: list[Item] | None = None
) -> None:
    """Bring every copy behind `summary` to it, in transactions of up to 100 conditional
    updates (one for an incident within `MAX_PARTICIPANTS`). A copy never goes back in
    version and a removed one is never re-created: a copy that fails its condition (newer,
    or gone) is dropped from the transaction, which runs again without it."""
    if copies is None:
        copies = store.query_partition(participations_partition(account, summary.id))
    stale = [copy for copy in copies if copy_version(copy) < summary.version]
    assignments, names, values = set_clause(copy_fields(summary))
    names["#iv"] = "incident_version"
    values[":version"] = {"N": str(summary.version)}
    for start in range(0, len(stale), MAX_TRANSACTION_ITEMS):
        keys = [key_of(c) for c in stale[start : start + MAX_TRANSACTION_ITEMS]]
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
                    "ConditionExpression": f"attribute_exists({PK}) AND #iv < :version",
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


def copy_version(copy: Item) -> int:
    return int(copy["incident_version"]["N"])


def refresh_after_commit(
    store: Store, account: str, summary: IncidentSummary, copies: list[Item] | None = None
) -> bool:
    """`_refresh_copies` where the summary is already written: a failure must not turn the
    committed write into an error. The copies left behind keep their older version; the next
    update, or the next GET of the incident, brings them forward. True if all are current."""
    try:
        refresh_copies(store, account, summary, copies)
    except (ClientError, BotoCoreError, DomainError):
        logger.warning(
            "participation copies left behind; the next update or GET refreshes them",
            exc_info=True,
            extra={"incident_id": summary.id, "version": summary.version},
        )
        return False
    return True


def get_refreshed_copies(
    store: Store, account: str, summary: IncidentSummary
) -> list[Participation]:
    """The incident's participations, repairing the copies an interrupted refresh left
    behind `summary` (a GET of the incident is one of the places that brings them forward)."""
    copies = store.query_partition(participations_partition(account, summary.id))
    participants = [participation_from_item(item) for item in copies]
    behind = any(copy_version(copy) < summary.version for copy in copies)
    if behind and refresh_after_commit(store, account, summary, copies):
        participants = [p.model_copy(update={"incident": summary}) for p in participants]
    return participants
