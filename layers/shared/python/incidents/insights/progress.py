"""How far an incident's figures are counted, kept on its publish position.

Events are folded strictly one after another from event 1: an event the progress has
passed is counted already, and an event beyond the next one means history this incident's
progress never saw (an incident older than insights), which only the backfill counts. The
progress moves in the same transaction as the figures it adds, under a condition on its
value as read, so the stream's retries and a backfill racing the stream count each event
once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from dynashard.query import Item
from incidents.errors import DomainError, VersionConflictError
from incidents.insights.aggregates import add_operations
from incidents.insights.figures import Figure, Life, follow
from incidents.keys import PUBLISHED
from incidents.models import TimelineEvent
from incidents.store import Store, condition_failed
from incidents.timeline.events import pause_before_retry

SEQ = "insights_seq"
LIFE = "insights_life"


@dataclass(frozen=True)
class Progress:
    """Events 1..`seq` of an incident are counted; `life` is what they left."""

    seq: int = 0
    life: Life | None = None


def progress_from(item: Item | None) -> Progress:
    """The progress stored on an item (none yet: nothing counted)."""
    if item is None or SEQ not in item:
        return Progress()
    life = Life.model_validate_json(item[LIFE]["S"]) if LIFE in item else None
    return Progress(int(item[SEQ]["N"]), life)


def counted(progress: Progress, events: Iterable[TimelineEvent]) -> tuple[Progress, list[Figure]]:
    """The progress after `events` (in ``seq`` order), and the figures of those it counts."""
    figures: list[Figure] = []
    for event in events:
        if event.seq != progress.seq + 1:
            continue
        life, made = follow(progress.life, event)
        progress = Progress(event.seq, life)
        figures += made
    return progress, figures


class ProgressMovedError(DomainError):
    """The item moved since it was read (another writer got there): read it again."""

    code, status = VersionConflictError.code, VersionConflictError.status


CONFLICT_ATTEMPTS = 4
"""Tries of one transaction that lost to a concurrent one on an aggregate (a busy day's
figures race on its shards): the same write again, safe under the progress's condition."""


@dataclass(frozen=True)
class Guarded:
    """More of an Update of the item that keeps the progress: ``SET`` clauses, a condition
    ANDed to the progress's own, and their names and values."""

    clauses: tuple[str, ...] = ()
    condition: str = ""
    names: dict[str, str] = field(default_factory=dict)
    values: Item = field(default_factory=dict)


def record(
    store: Store,
    key: tuple[str, str],
    was: Progress,
    now: Progress,
    figures: Sequence[Figure],
    *,
    also: Guarded | None = None,
) -> None:
    """Move the progress on the item at `key` from `was` to `now` and add `figures` to
    their aggregates, in one transaction (one Update when there are none);
    `ProgressMovedError` if the item changed since it was read. A transaction that lost to
    a concurrent one on an aggregate is tried again."""
    update = _update(store.table_name, key, was, now, also or Guarded())
    added = add_operations(store.table_name, key[0].split("#", 1)[0], figures)
    moved = ProgressMovedError(f"{key[0]} moved since it was read")
    if not added:
        try:
            store.client.update_item(**update)
        except ClientError as error:
            if condition_failed(error):
                raise moved from None
            raise
        return
    for attempt in range(CONFLICT_ATTEMPTS):
        try:
            store.transact([{"Update": update}, *added], [moved])
            return
        except VersionConflictError:  # lost to a concurrent transaction, not a condition
            if attempt == CONFLICT_ATTEMPTS - 1:
                raise
            pause_before_retry(attempt)


def _update(
    table_name: str, key: tuple[str, str], was: Progress, now: Progress, also: Guarded
) -> dict[str, Any]:
    names = {"#iseq": SEQ, "#type": "Type", **also.names}
    values: Item = {
        ":iseq": {"N": str(now.seq)},
        ":iwas": {"N": str(was.seq)},
        ":type": {"S": PUBLISHED},
        **also.values,
    }
    clauses = ["#iseq = :iseq", "#type = :type", *also.clauses]
    if now.life is not None:  # DynamoDB refuses a name or value the expressions do not use
        clauses.append("#ilife = :ilife")
        names["#ilife"] = LIFE
        values[":ilife"] = {"S": now.life.model_dump_json()}
    condition = "(attribute_not_exists(#iseq) OR #iseq = :iwas)"
    return {
        "TableName": table_name,
        "Key": {"PK": {"S": key[0]}, "SK": {"S": key[1]}},
        "UpdateExpression": "SET " + ", ".join(clauses),
        "ConditionExpression": " AND ".join(filter(None, (condition, also.condition))),
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": values,
    }
