"""Suppression at alert ingest: the window an alert falls in, and what is kept of it.

- **Which window**: each window not yet ended has an entry in its account's *live set*
  (`incidents.keys.live_window_key`), in `LIVE_WINDOW_COPIES` copies written in the
  window's own transactions (created, ended early, deleted). An alert reads one copy, at
  random, with one strongly consistent Query of the entries ending after now: one read unit
  while the account has up to about sixteen windows not yet ended (four at the default
  limit of 50, `incidents.account_limits`). There is no cache, so a window
  created or ended early applies to the next alert; the copies spread a storm's reads over
  eight partitions (24,000 alerts a second before one is at DynamoDB's 3,000 reads).
- **What is kept**: one item per window, integration and dedup key (its count moved with
  ``ADD``, its first and last time, the last action and summary), and the window's count, a
  sharded counter (`COUNTER_SHARDS` items: no item takes every alert of a storm), both in
  the transaction of the alert's seen item (`incidents.alerts.ingest`), so
  a retried alert is counted once.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dynashard.query import Item
from dynashard.resharding import Operation
from incidents.alerts.models import (
    AlertEvent,
    EventAction,
    Integration,
    SuppressedStatus,
    TriggerAlert,
)
from incidents.items import deserialize, serialize
from incidents.keys import (
    LIVE_WINDOW_COPIES,
    live_window_key,
    live_windows_partition,
    suppressed_count_base,
    suppressed_key,
)
from incidents.models import parse_timestamp, timestamp
from incidents.store import Failure, Store, labelled
from incidents.table import PK, SK, item_key

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import QueryOutputTypeDef

    from incidents.alerts.ingest import AlertKey

COUNTER_SHARDS = 8
LIVE_KEPT_SECONDS = 24 * 3600
"""How long after its end a live entry stays until the table's TTL removes it (no Query
after the end reads it: this only keeps the table tidy)."""


@dataclass(frozen=True)
class LiveWindow:
    """A window's entry in the live set: what an alert needs to tell whether it is held."""

    id: str
    scope: str
    """The team or the integration it is on."""
    start_time: str
    end_time: str


def live_entries(store: Store, account: str, window: LiveWindow) -> list[Item]:
    """The Puts of `window`'s entry in every copy of the live set."""
    expires = int(parse_timestamp(window.end_time).timestamp()) + LIVE_KEPT_SECONDS
    entries = []
    for copy in range(LIVE_WINDOW_COPIES):
        pk, sk = live_window_key(account, copy, window.end_time, window.id)
        values = {PK: pk, SK: sk, "Type": "live_window", "window_id": window.id,
                  "scope": window.scope, "start_time": window.start_time,
                  "ExpiresAt": expires}  # fmt: skip
        entries.append(store.put_operation(serialize(values)))
    return entries


def live_removals(store: Store, account: str, window_id: str, end_time: str) -> list[Item]:
    """The Deletes of a window's entry (ending `end_time`) in every copy of the live set."""
    removals = []
    for copy in range(LIVE_WINDOW_COPIES):
        pk, sk = live_window_key(account, copy, end_time, window_id)
        key = item_key(pk, sk)
        removals.append({"Delete": {"TableName": store.table_name, "Key": key}})
    return removals


def live_count(store: Store, account: str) -> int:
    """How many of the account's windows have not ended (one copy, strongly consistent)."""
    now = timestamp(store.clock())
    return _live_query(store, account, 0, now, count=True)["Count"]


def covering_window(store: Store, account: str, integration: Integration) -> str | None:
    """The window that holds `integration`'s alerts now (on it, or on its team), the one
    ending last if several do; None when none does."""
    now = timestamp(store.clock())
    scopes = {integration.id, integration.team_id}
    copy = random.randrange(LIVE_WINDOW_COPIES)
    holding = [
        values["window_id"]
        for values in map(deserialize, _live_query(store, account, copy, now)["Items"])
        if values["scope"] in scopes and values["start_time"] <= now
    ]
    return holding[-1] if holding else None  # by end time: the last ends last


def kept(window_id: str, key: AlertKey, alert: AlertEvent) -> list[Operation[Failure]]:
    """What the window keeps of one suppressed alert: its key's item (created by the first)
    and an add to the window's count, for the alert's transaction."""
    store, action = key.store, alert.event_action
    now = timestamp(store.clock())
    fields: dict[str, Any] = {
        "Type": "suppressed_alert",
        "integration_id": key.integration.id,
        "dedup_key": key.dedup_key,
        "last_action": action.value,
        "last_seen_at": now,
    }
    if isinstance(alert, TriggerAlert):
        fields |= {"summary": alert.payload.summary, "severity": alert.payload.severity.value}
    resolved = action is EventAction.RESOLVE
    status = SuppressedStatus.RESOLVED if resolved else SuppressedStatus.TRIGGERED
    # an acknowledge ends nothing: a key first seen acknowledged is still firing
    set_status = (
        "if_not_exists(#status, :status)" if action is EventAction.ACKNOWLEDGE else ":status"
    )
    pk, sk = suppressed_key(key.account, window_id, key.item_key()[1])
    sets = [f"#{name} = :{name}" for name in fields]
    update = {
        "Update": {
            "TableName": store.table_name,
            "Key": serialize({PK: pk, SK: sk}),
            "UpdateExpression": f"SET {', '.join(sets)}, #status = {set_status}, "
            "first_seen_at = if_not_exists(first_seen_at, :last_seen_at) ADD #count :one",
            "ExpressionAttributeNames": {
                **{f"#{name}": name for name in fields}, "#status": "status", "#count": "count"
            },
            "ExpressionAttributeValues": serialize(
                {**{f":{name}": value for name, value in fields.items()},
                 ":status": status.value, ":one": 1}
            ),
        }
    }  # fmt: skip
    return [
        labelled(update),
        labelled(store.counter(COUNTER_SHARDS).add(suppressed_count_base(key.account, window_id))),
    ]


def suppressed_count(store: Store, account: str, window_id: str) -> int:
    """How many alerts the window suppressed: its counter's shards, one batch read."""
    return store.counter(COUNTER_SHARDS).total(suppressed_count_base(account, window_id))


def _live_query(
    store: Store, account: str, copy: int, now: str, *, count: bool = False
) -> QueryOutputTypeDef:
    """One strongly consistent Query of a copy of the live set: the entries ending after
    `now` (``<end>#<id>`` sorts after ``<now>$`` only where the end is after now)."""
    return store.client.query(
        TableName=store.table_name,
        KeyConditionExpression=f"{PK} = :pk AND {SK} > :after",
        ExpressionAttributeValues={
            ":pk": {"S": live_windows_partition(account, copy)},
            ":after": {"S": f"{now}$"},
        },
        ConsistentRead=True,
        Select="COUNT" if count else "ALL_ATTRIBUTES",
    )
