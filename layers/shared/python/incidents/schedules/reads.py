"""A schedule's reads: its items as the engine's model, its overrides over a range, and
its materialized current and next shift."""

from __future__ import annotations

from datetime import datetime

from dynashard.query import Item
from incidents.errors import NotFoundError
from incidents.keys import (
    oncall_sort_key,
    schedule_overrides_prefix,
    schedule_sort_key,
    schedule_versions_prefix,
    teams_partition,
)
from incidents.models import timestamp
from incidents.schedules.model import Override
from incidents.schedules.on_call_now import Known, OverridesIn, known_from
from incidents.schedules.stored import StoredSchedule, override_from, schedule_from
from incidents.store import Store
from incidents.table import TABLE_SCHEMA


def find_schedule(store: Store, account: str, schedule_id: str) -> StoredSchedule | None:
    """The schedule with its versions (strongly consistent), if it exists."""
    head = store.get(teams_partition(account), schedule_sort_key(schedule_id))
    if head is None:
        return None
    versions = store.query_partition(
        teams_partition(account), prefix=schedule_versions_prefix(schedule_id)
    )
    return schedule_from(head, versions)


def read_schedule(store: Store, account: str, schedule_id: str) -> StoredSchedule:
    """The schedule with its versions; 404 if the account has none by that id."""
    found = find_schedule(store, account, schedule_id)
    if found is None:
        raise NotFoundError(f"schedule {schedule_id} not found")
    return found


def read_known(store: Store, account: str, schedule_id: str) -> Known | None:
    """The schedule's materialized current and next shift, if written."""
    item = store.get(teams_partition(account), oncall_sort_key(schedule_id))
    return None if item is None else known_from(item)


def overrides_between(
    store: Store, account: str, schedule_id: str, since: datetime, until: datetime
) -> list[Override]:
    """The overrides ending after `since` that start before `until` (read from the first
    that ends after `since`)."""
    items = overrides_ending(store, account, schedule_id, since)
    found = [override_from(item) for item in items]
    return [o for o in found if o.end > since and o.start < until]


def overrides_reader(store: Store, account: str, schedule_id: str) -> OverridesIn:
    """`overrides_between` for one schedule, as the materialization asks for them."""
    return lambda since, until: overrides_between(store, account, schedule_id, since, until)


def future_override_count(store: Store, account: str, schedule_id: str, now: datetime) -> int:
    """How many of the schedule's overrides have not ended by `now`."""
    return len(overrides_ending(store, account, schedule_id, now, projection=True))


def overrides_ending(
    store: Store, account: str, schedule_id: str, after: datetime, *, projection: bool = False
) -> list[Item]:
    """The schedule's override items (by end) from the first ending after `after`; with
    `projection`, their keys only."""
    table = TABLE_SCHEMA
    low = schedule_overrides_prefix(schedule_id) + timestamp(after)
    options = (
        {"ProjectionExpression": f"{table.partition_key}, {table.sort_key}"} if projection else {}
    )
    pages = store.client.get_paginator("query").paginate(
        TableName=store.table_name,
        KeyConditionExpression=(
            f"{table.partition_key} = :pk AND {table.sort_key} BETWEEN :low AND :high"
        ),
        ExpressionAttributeValues={
            ":pk": {"S": teams_partition(account)},
            ":low": {"S": low},
            ":high": {"S": schedule_overrides_prefix(schedule_id) + "~"},
        },
        ConsistentRead=True,
        **options,  # type: ignore[arg-type]
    )
    return [item for page in pages for item in page.get("Items", [])]
