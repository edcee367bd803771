"""Alert grouping (PagerDuty's ``time`` and ``content_based``): a trigger whose dedup key
names no open incident joins the open incident of its *group* instead of opening one.

A group is an item per integration and group value (``<acct>#alertgroup``, 16 shards by
value) naming the incident its alerts join and when it last took one (``grouped_at``):

- ``time``: one value per integration, so every trigger joins its open incident;
- ``content_based``, ``all``: one value, the digest of the chosen fields' values;
- ``content_based``, ``any``: a value per chosen field the alert has, so an alert joins
  the incident of any earlier alert that shared one of them (the most recently grouped).

A group joins while its incident is open and while its last grouped alert is within its
``time_window`` (rolling; without one, `KEPT`: a group item lives that long after its last
grouped alert, then DynamoDB's TTL removes it, so high-cardinality fields leave nothing
behind). The trigger that opens an incident or joins one through its group writes every
one of its group items in its transaction: one it opens or replaces on the condition that
it is as the trigger read it (of racing openers one wins, the others read again and
join), one it joins on the condition that it still names that incident, and only if its
last write is `REFRESH` old (racing joiners neither conflict nor queue). Alerts of a key
already open join as before, through the key's own item, and do not move the window (they
are the same alert again).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from dynashard import build_key, calculated_shard, sharded_key
from dynashard.resharding import Operation
from incidents.alerts.models import (
    Aggregate,
    ContentGrouping,
    Integration,
    NoGrouping,
    TimeGrouping,
    TriggerAlert,
)
from incidents.errors import DomainError
from incidents.items import serialize
from incidents.models import timestamp
from incidents.store import Failure, Store, labelled
from incidents.table import PK, SK

GROUP_SHARDS = 16
REFRESH = timedelta(seconds=10)
"""A joining trigger leaves a group item written this recently as it is: a storm of keys
joining one group does not queue on its item, and the rolling window keeps to 10 s."""
KEPT = timedelta(days=30)
"""How long a group without a window joins its open incident after its last grouped alert."""
TIME_GROUP = "time"
"""The one group value of time-based grouping."""


class GroupMovedError(DomainError):
    """A group item changed since the trigger read it (never leaves the alerts package:
    the trigger reads again)."""


@dataclass(frozen=True)
class GroupRead:
    """One group item as a trigger read it (no incident: none yet)."""

    value: str
    incident_id: str | None
    grouped_at: str | None


@dataclass(frozen=True)
class Group:
    """A trigger's group items as read, and the incident they offer to join, if any is
    within the window (the caller checks that it is still open)."""

    account: str
    integration_id: str
    reads: tuple[GroupRead, ...]
    window: int | None

    def candidates(self, now: datetime) -> list[str]:
        """Incidents the group offers within its window, the most recently grouped first."""
        horizon = timestamp(now - self.lifetime)
        offered = [r for r in self.reads if r.incident_id and (r.grouped_at or "") >= horizon]
        offered.sort(key=lambda read: read.grouped_at or "", reverse=True)
        return [read.incident_id for read in offered if read.incident_id]

    @property
    def lifetime(self) -> timedelta:
        """How long after its last grouped alert a group still joins."""
        return timedelta(seconds=self.window) if self.window else KEPT

    def puts(self, store: Store, incident_id: str) -> list[Operation[Failure]]:
        """The writes that make every group item name `incident_id`, grouped now (one that
        names it already and was written within `REFRESH` is left as it is)."""
        moved = GroupMovedError("the alert's group changed meanwhile")
        fresh = timestamp(store.clock() - REFRESH)
        return [
            labelled(self._put(store, read, incident_id), moved)
            for read in self.reads
            if read.incident_id != incident_id or (read.grouped_at or "") < fresh
        ]

    def _put(self, store: Store, read: GroupRead, incident_id: str) -> dict[str, Any]:
        pk, sk = group_key(self.account, self.integration_id, read.value)
        now = store.clock()
        item = {PK: pk, SK: sk, "Type": "alert_group", "incident_id": incident_id,
                "grouped_at": timestamp(now),
                "ExpiresAt": int((now + self.lifetime).timestamp())}  # fmt: skip
        put: dict[str, Any] = {"TableName": store.table_name, "Item": serialize(item)}
        if read.incident_id is None:
            put["ConditionExpression"] = f"attribute_not_exists({PK})"
        elif read.incident_id == incident_id:  # joining it: racing joiners all pass
            put["ConditionExpression"] = "incident_id = :incident"
            put["ExpressionAttributeValues"] = serialize({":incident": incident_id})
        else:  # replacing a lapsed group: one replacer wins
            put["ConditionExpression"] = "incident_id = :incident AND grouped_at = :at"
            put["ExpressionAttributeValues"] = serialize(
                {":incident": read.incident_id, ":at": read.grouped_at}
            )
        return {"Put": put}


def group_key(account: str, integration_id: str, value: str) -> tuple[str, str]:
    """(PK, SK) of a group item: ``<acct>#alertgroup#<shard>``, ``<integration>#<value>``."""
    base, sort_key = build_key(account, "alertgroup"), f"{integration_id}#{value}"
    shard = calculated_shard(base, sort_key, GROUP_SHARDS)
    return sharded_key(base, shard, GROUP_SHARDS), sort_key


def read_group(
    store: Store, account: str, integration: Integration, alert: TriggerAlert
) -> Group | None:
    """The trigger's group items (strongly consistent), or None if its integration does not
    group or the alert has none of the fields a content-based grouping compares."""
    grouping = integration.alert_grouping
    if isinstance(grouping, NoGrouping):
        return None
    values = group_values(grouping, alert)
    if not values:
        return None
    reads = []
    for value in values:
        item = store.get(*group_key(account, integration.id, value))
        reads.append(
            GroupRead(
                value,
                item["incident_id"]["S"] if item else None,
                item["grouped_at"]["S"] if item else None,
            )
        )
    return Group(account, integration.id, tuple(reads), grouping.time_window)


def group_values(grouping: TimeGrouping | ContentGrouping, alert: TriggerAlert) -> list[str]:
    """The group values of a trigger (see the module's docstring)."""
    if isinstance(grouping, TimeGrouping):
        return [TIME_GROUP]
    fields = {name: field_value(alert, name) for name in grouping.fields}
    if all(value is None for value in fields.values()):
        return []  # none of the fields: nothing to group on
    if grouping.aggregate is Aggregate.ALL:
        return ["all:" + _digest(sorted(fields.items()))]
    return [f"any:{_digest([name, value])}" for name, value in fields.items() if value is not None]


def field_value(alert: TriggerAlert, name: str) -> Any:
    """A payload field's value as sent (None when absent): ``class`` by its JSON name,
    ``custom_details.<key>`` from the details' top level."""
    payload = alert.payload.model_dump(mode="json", by_alias=True)
    if name.startswith("custom_details."):
        details = payload.get("custom_details") or {}
        return details.get(name.removeprefix("custom_details."))
    return payload.get(name)


def _digest(value: Any) -> str:
    """A short, stable digest of JSON-able values (group values stay small sort keys)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:32]
