"""The incident's timeline: one event per change, written in the change's own transaction.

The transactional outbox (README "Timeline and events"): every command that changes an
incident moves the summary's event counter (``event_seq``) from n to n+1 under a condition
and puts event n+1 in the same ``TransactWriteItems``, so a change and its event commit
together or not at all, and the events of one incident are numbered 1..n with no gap and
no repeat whatever runs concurrently. The table's stream carries them out.

Events live beside the details (``<acct>#<incident id>`` / ``event#<seq>``) and in a
sharded account-wide index by time (GSI2, ``<acct>#events#<shard>``) for ``GET /events``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dynashard.query import Item
from incidents.errors import NotFoundError
from incidents.items import KEY_ATTRIBUTES, deserialize, from_item, serialize
from incidents.keys import event_index_key, event_key
from incidents.models import (
    ACCOUNT_EVENTS,
    EVENTS,
    AccountEvent,
    Actor,
    Changes,
    ChangeType,
    EventParticipant,
    EventType,
    IncidentChanged,
    IncidentCreated,
    IncidentSummary,
    Participation,
    State,
    TimelineEvent,
    Timeout,
    timestamp,
)
from incidents.store import Caller, Store, new_id
from incidents.summaries import SEQ_ATTRIBUTE, read_summary
from incidents.table import GSI2, PK, SK, item_key
from incidents.tenant_shards import Family

CREATED_PARTICIPANTS = 20
"""Participants an ``incident.created`` event lists (the incident has up to 100): an event
stays one write unit (under 1 KB with 20); the rest are in the incident and its
``participant.added`` events do not exist for them, so the event says how many there were."""
SUMMARY_AFTER = "summary_after"
EVENT_TYPE = "event"
"""A timeline event's item type (its insert is what the stream publishes)."""
"""The event item's copy of the incident summary after the change: what the event's
webhook and EventBridge deliveries carry (``data.incident``); never part of the event the
API shows (an ``incident.created`` event shows its first summary itself)."""


@dataclass(frozen=True)
class Counted:
    """A summary as read, with its event counter (0: written before the timeline)."""

    summary: IncidentSummary
    seq: int
    pk: str
    """Where the summary was read: a change writes it there (`dynashard.resharding.mover`
    moves it)."""
    listed_at: str | None = None
    """Its state list's partition (``GSI2PK``) as read: a change that keeps the state keeps
    the entry there (the mover moves it; a change never does)."""


def load_counted(store: Store, caller: Caller, incident_id: str) -> Counted | None:
    """The summary and its event counter, by one strongly consistent point read."""
    item = read_summary(store, caller.account_id, incident_id)
    if item is None:
        return None
    seq = int(item[SEQ_ATTRIBUTE]["N"]) if SEQ_ATTRIBUTE in item else 0
    listed = item[GSI2.partition_key]["S"] if GSI2.partition_key in item else None
    return Counted(from_item(IncidentSummary, item), seq, item[PK]["S"], listed)


def require_counted(store: Store, caller: Caller, incident_id: str) -> Counted:
    """`load_counted`, or 404 if the incident is not in the caller's account."""
    counted = load_counted(store, caller, incident_id)
    if counted is None:
        raise NotFoundError(f"incident {incident_id} not found")
    return counted


MAX_PAUSE_SECONDS = 1.0
"""The longest wait between two tries of one change."""


def pause_before_retry(attempt: int, took: float = 0.0) -> None:
    """Full jitter before another try: concurrent changes of one item spread out.

    The window starts at the failed try's own duration (`took`, at least 10 ms): racers
    whose tries take longer than the window (a loaded table) would collide again.
    """
    window = max(0.01, took) * 2**attempt
    time.sleep(random.uniform(0, min(MAX_PAUSE_SECONDS, window)))


def change_operations(
    store: Store, caller: Caller, counted: Counted, kind: EventType, **fields: Any
) -> tuple[list[Item], TimelineEvent]:
    """A change's counter move and event Puts (after the backfilled ``incident.created``
    of an incident written before the timeline), and its event."""
    events = backfill_created(counted)
    seq = counted.seq + len(events) + 1
    events.append(plain_event(kind, counted.summary, caller, seq, at_now(store), **fields))
    account = caller.account_id
    moved = counter_move(store, account, counted, len(events))
    return [moved, *event_puts(store, account, events, counted.summary)], events[-1]


def created_event(
    summary: IncidentSummary, participants: Sequence[Participation], actor: str, at: str
) -> IncidentCreated:
    """Event 1 of an incident: its first summary and (some of) its participants."""
    listed = [
        EventParticipant(participant_id=p.participant_id, role=role)
        for p in participants
        for role in p.roles
    ]
    return IncidentCreated(
        id=new_id("evt"),
        incident_id=summary.id,
        seq=1,
        type=EventType.CREATED,
        at=at,
        actor=Actor(user_id=actor),
        version=summary.version,
        incident=summary,
        participants=listed[:CREATED_PARTICIPANTS],
        participant_count=len(participants),
    )


def change_event(
    before: IncidentSummary,
    after: IncidentSummary,
    caller: Caller,
    seq: int,
    timeout: Timeout | None = None,
) -> IncidentChanged:
    """The event of an update: resolved, reopened or updated, with every changed field and
    the lifecycle timer that made it, if one did."""
    changes = Changes.model_validate(
        {
            name: {"from": old, "to": new}
            for name in Changes.model_fields
            if (old := getattr(before, name)) != (new := getattr(after, name))
        }
    )
    kind: ChangeType = EventType.UPDATED
    if before.state is State.OPEN and after.state is State.CLOSED:
        kind = EventType.RESOLVED
    elif before.state is State.CLOSED and after.state is State.OPEN:
        kind = EventType.REOPENED
    return IncidentChanged(
        id=new_id("evt"),
        incident_id=after.id,
        seq=seq,
        type=kind,
        at=after.updated_at,
        actor=Actor(user_id=caller.user_id),
        version=after.version,
        changes=changes,
        timeout=timeout,
    )


def plain_event(
    kind: EventType, summary: IncidentSummary, caller: Caller, seq: int, at: str, **fields: object
) -> TimelineEvent:
    """A participant or note event (`fields`: ``participant`` or ``note``)."""
    return EVENTS.validate_python(
        {
            "id": new_id("evt"),
            "incident_id": summary.id,
            "seq": seq,
            "type": kind,
            "at": at,
            "actor": {"user_id": caller.user_id},
            "version": summary.version,
            **fields,
        }
    )


def backfill_created(counted: Counted) -> list[TimelineEvent]:
    """For an incident written before the timeline, the ``incident.created`` event its first
    change writes before its own (from the summary as it is: the creator and creation time
    are known, earlier changes are not)."""
    if counted.seq:
        return []
    summary = counted.summary
    first = created_event(summary, [], summary.created_by, summary.created_at)
    return [first.model_copy(update={"participant_count": None, "backfilled": True})]


def event_item(store: Store, account: str, event: TimelineEvent, after: IncidentSummary) -> Item:
    """The event as an item: in its incident's partition and in the account's index, with
    the summary `after` the change (not repeated when the event shows it already)."""
    pk, sk = event_key(account, event.incident_id, event.seq)
    count = store.shards.write_count(account, Family.EVENTS)
    gsi2pk, gsi2sk = event_index_key(account, event.id, event.at, count)
    snapshot = None if first_summary(event) == after else after.model_dump(mode="json")
    values = {
        **event.model_dump(mode="json", exclude_none=True, by_alias=True),
        SUMMARY_AFTER: snapshot,
        PK: pk,
        SK: sk,
        GSI2.partition_key: gsi2pk,
        GSI2.sort_key: gsi2sk,
        "Type": EVENT_TYPE,
        "ExpiresAt": store.event_expiry(event.at),
    }
    return serialize(values)


def event_puts(
    store: Store, account: str, events: Sequence[TimelineEvent], after: IncidentSummary
) -> list[Item]:
    """The transaction's Puts of `events` (a backfilled creation, then the change's event,
    whose summary is `after`), each refused if its number is taken."""
    return [
        store.put_operation(event_item(store, account, e, first_summary(e) or after), new=True)
        for e in events
    ]


def counter_move(store: Store, account: str, counted: Counted, moved: int) -> Item:
    """The transaction's Update moving the summary's event counter on by `moved`, only if
    it is still where it was read and the summary is at the version read."""
    condition, names, values = as_read(counted)
    return {
        "Update": {
            "TableName": store.table_name,
            "Key": item_key(counted.pk, counted.summary.id),
            "UpdateExpression": "SET #seq = :next",
            "ConditionExpression": condition,
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": {**values, ":next": {"N": str(counted.seq + moved)}},
        }
    }


def as_read(counted: Counted) -> tuple[str, dict[str, str], Item]:
    """The condition that the summary is still as `counted` read it: the same version and
    the same event counter (absent on a summary written before the timeline)."""
    names = {"#seq": SEQ_ATTRIBUTE, "#version": "version"}
    values: Item = {":version": {"N": str(counted.summary.version)}}
    if not counted.seq:
        return "#version = :version AND attribute_not_exists(#seq)", names, values
    values[":seq"] = {"N": str(counted.seq)}
    return "#version = :version AND #seq = :seq", names, values


def event_from_item(item: Item) -> TimelineEvent:
    """The incident's event stored in `item` (without the summary it keeps for deliveries)."""
    return EVENTS.validate_python(_event_values(item))


def account_event_from_item(item: Item) -> AccountEvent:
    """The account's event stored in `item`: an incident's, or a schedule's handoff."""
    return ACCOUNT_EVENTS.validate_python(_event_values(item))


def _event_values(item: Item) -> dict[str, Any]:
    values = deserialize(item)
    return {k: v for k, v in values.items() if k not in KEY_ATTRIBUTES and k != SUMMARY_AFTER}


def first_summary(event: AccountEvent) -> IncidentSummary | None:
    """The summary an ``incident.created`` event shows; None for any other event."""
    return event.incident if isinstance(event, IncidentCreated) else None


def summary_after(item: Item) -> IncidentSummary | None:
    """The incident summary after the change of the event stored in `item` (None for an
    event written before summaries were kept on events, or one of no incident)."""
    if SUMMARY_AFTER in item:
        return from_item(IncidentSummary, item[SUMMARY_AFTER]["M"])
    return first_summary(account_event_from_item(item))


def at_now(store: Store) -> str:
    """The instant an event happens, as events and summaries write it."""
    return timestamp(store.clock())
