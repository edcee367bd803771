"""Each incident's events go out in `seq` order, whatever order the stream hands them in.

DynamoDB Streams orders records per item; an incident's events are separate items, so
across shards (a partition split, one split for heat on a busy incident) their order is not
promised, and a record can come after a later one. The publisher keeps, per incident, the
last `seq` it published (an item of its own, ``<acct>#<incident id>#published``): a record
at or below it is a repeat and is skipped; a record beyond the next is a gap, filled from
the timeline (the source of truth) before it. The position moves only after the events
went out, and only from the value read (a conditional write), so a crash or a concurrent
publisher delivers an event twice at worst (receivers deduplicate on its id), never skips
one. An incident with no position yet (its events published before this existed) fills
only the events the stream still holds (24 hours): older ones went out then.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta

from botocore.exceptions import ClientError

from dynashard.query import Item
from incidents.errors import DomainError, VersionConflictError
from incidents.insights.aggregates import add_operations
from incidents.insights.figures import Figure
from incidents.insights.progress import Progress, progress_from, progress_part
from incidents.keys import PUBLISHED, published_key
from incidents.models import timestamp
from incidents.store import Store, condition_failed
from incidents.timeline.events import event_from_item, pause_before_retry
from incidents.timeline.queries import stored_events
from incidents.updates import UpdatePart, update_request

STREAM_RETENTION = timedelta(hours=24)
CONFLICT_ATTEMPTS = 4
"""Tries of one transaction that lost to a concurrent one on an aggregate (a busy day's
figures race on its shards): the same write again, safe under the position's condition."""
TYPED = UpdatePart(("#type = :type",), names={"#type": "Type"}, values={":type": {"S": PUBLISHED}})


class PublishRaceError(DomainError):
    """Another writer (a publisher, the insights backfill) moved the incident's position
    since it was read: the batch is retried, the backfill reads it again."""

    code = VersionConflictError.code


@dataclass(frozen=True)
class Position:
    """An incident's publish position: the last `seq` published (None before the first),
    and how far its insights are counted (`incidents.insights.progress`)."""

    seq: int | None
    insights: Progress = field(default_factory=Progress)


def published_position(store: Store, account: str, incident_id: str) -> Position:
    """The incident's position, strongly read."""
    item = store.get(*published_key(account, incident_id))
    seq = int(item["seq"]["N"]) if item and "seq" in item else None
    return Position(seq, progress_from(item))


def missing_before(
    store: Store, account: str, incident_id: str, seq: int, published: int | None
) -> list[Item]:
    """The stored events between the position and `seq` (exclusive), in order; with no
    position, only those the stream still holds."""
    first = (published or 0) + 1
    if first >= seq:
        return []
    items = stored_events(store, account, incident_id, first, seq - 1)
    if published is not None:
        return items
    since = timestamp(store.clock() - STREAM_RETENTION)
    return [item for item in items if event_from_item(item).at >= since]


def advance(
    store: Store,
    account: str,
    incident_id: str,
    seq: int,
    was: Position,
    *,
    insights: Progress | None = None,
    figures: Sequence[Figure] = (),
) -> None:
    """The position to `seq` and the insights' progress to `insights`, from `was` only
    (`PublishRaceError` if either moved; no `seq` is 0, so a missing position reads as 0
    in the condition), with `figures` added to their aggregates in the same transaction.

    A failed condition gets a second look: a position that already is the one this move
    writes was moved by this very write (its answer lost and the SDK's retry refused by its
    own effect), or by a twin that sent the same events and figures; either way the move
    is done."""
    moved = UpdatePart(
        clauses=("#seq = :seq",),
        condition="(attribute_not_exists(#seq) OR #seq = :was)",
        names={"#seq": "seq"},
        values={":seq": {"N": str(seq)}, ":was": {"N": str(was.seq or 0)}},
    )
    progress = was.insights if insights is None else insights
    try:
        _write(store, account, incident_id, [moved, progress_part(was.insights, progress)], figures)
    except PublishRaceError:
        if published_position(store, account, incident_id) != Position(seq, progress):
            raise


def count_insights(
    store: Store,
    account: str,
    incident_id: str,
    was: Progress,
    *,
    now: Progress,
    figures: Sequence[Figure],
) -> None:
    """The insights' progress alone from `was` to `now` (the backfill's write), with
    `figures` added in the same transaction; `PublishRaceError` if the progress moved."""
    _write(store, account, incident_id, [progress_part(was, now)], figures)


def _write(
    store: Store,
    account: str,
    incident_id: str,
    parts: Sequence[UpdatePart],
    figures: Sequence[Figure],
) -> None:
    """One Update of the position item (a transaction with the aggregates' when there are
    figures); a transaction that lost to a concurrent one on an aggregate is tried again."""
    key = published_key(account, incident_id)
    update = update_request(store.table_name, key, [TYPED, *parts])
    moved = PublishRaceError(f"the position of incident {incident_id} moved since it was read")
    added = add_operations(store.table_name, account, figures)
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
