"""The outbox's relay: timeline events, as the table's stream carries them, out to the
stage's EventBridge bus and to the delivery queue of every webhook that wants them.

One body for both (`payloads`, docs "Events and webhooks"): ``{"type", "timestamp",
"data": {"account_id", "event", "incident"}}``, where ``incident`` is the summary after the
change. An incident's events enter the queue in ``seq`` order whatever order the stream
hands them over in (`publish_order`: repeats are skipped, a gap is filled from the table),
and the first that fails stops the batch (the stream retries from it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dynashard.query import Item
from incidents.events_out.delivery_messages import DeliveryMessage, DeliveryQueue
from incidents.events_out.payloads import event_body
from incidents.events_out.publish_order import (
    Position,
    advance,
    missing_before,
    published_position,
)
from incidents.events_out.webhooks import StoredWebhook, stored_from_item
from incidents.insights.figures import Figure
from incidents.insights.progress import counted
from incidents.keys import WEBHOOK_PREFIX, webhooks_partition
from incidents.models import AccountEvent, IncidentSummary, ScheduleHandoff
from incidents.store import Store
from incidents.table import PK
from incidents.timeline.events import (
    EVENT_TYPE,
    account_event_from_item,
    event_from_item,
    summary_after,
)

if TYPE_CHECKING:
    from mypy_boto3_events import EventBridgeClient

EVENT_SOURCE_NAME = "incidents"
"""The ``source`` of every event on the stage's bus (``detail-type``: the event's type)."""


@dataclass
class BatchReads:
    """What a stream batch reads once: each account's webhooks, and each incident's
    published position (kept as the batch moves it; a concurrent publisher's move is
    still caught by the position's conditional write)."""

    hooks: dict[str, list[StoredWebhook]] = field(default_factory=dict)
    positions: dict[tuple[str, str], Position] = field(default_factory=dict)


@dataclass(frozen=True)
class Outgoing:
    """One event on its way out, with its body."""

    account_id: str
    event: AccountEvent
    body: str


def outgoing(account_id: str, event: AccountEvent, incident: IncidentSummary | None) -> Outgoing:
    """The event and the summary after it (an incident's), as the body every consumer
    receives."""
    return Outgoing(account_id, event, event_body(account_id, event, incident))


WRITES = ("INSERT", "MODIFY")
"""A stream record's names of an item written (``REMOVE``: deleted)."""


def inserts(record: dict[str, Any], item_type: str) -> bool:
    """Whether a stream record inserts an item of `item_type`: the cloud event source
    mapping's filters (`stacks.event_delivery`) and the local stream poller's."""
    image = record.get("dynamodb", {}).get("NewImage", {})
    return record.get("eventName") == "INSERT" and image.get("Type", {}).get("S") == item_type


def writes(record: dict[str, Any], item_type: str) -> bool:
    """Whether a stream record inserts or changes an item of `item_type`."""
    image = record.get("dynamodb", {}).get("NewImage", {})
    return record.get("eventName") in WRITES and image.get("Type", {}).get("S") == item_type


def is_timeline_insert(record: dict[str, Any]) -> bool:
    """Whether a stream record inserts a timeline event."""
    return inserts(record, EVENT_TYPE)


def from_stream(record: dict[str, Any]) -> Outgoing | None:
    """The event a stream record inserts (None: another item, or not an insert)."""
    if not is_timeline_insert(record):
        return None
    return outgoing_from_item(record["dynamodb"]["NewImage"])


def outgoing_from_item(item: Item) -> Outgoing:
    """The event stored in `item` (the table's or its index's), ready to go out."""
    account_id = item[PK]["S"].split("#", 1)[0]
    return outgoing(account_id, account_event_from_item(item), summary_after(item))


def account_webhooks(store: Store, account_id: str) -> list[StoredWebhook]:
    """The account's enabled webhooks (one strongly consistent query of its partition: a
    webhook registered a moment ago gets the next event)."""
    items = store.query_partition(webhooks_partition(account_id), prefix=WEBHOOK_PREFIX)
    return [hook for hook in map(stored_from_item, items) if hook.webhook.enabled]


def deliveries(item: Outgoing, hooks: Iterable[StoredWebhook]) -> list[DeliveryMessage]:
    """A delivery message for each webhook that wants the event (a handoff's in its
    schedule's order, as an incident's are in the incident's)."""
    event = item.event
    if isinstance(event, ScheduleHandoff):
        subject: dict[str, Any] = {
            "incident_id": None,
            "seq": None,
            "schedule_id": event.schedule.id,
        }
    else:
        subject = {"incident_id": event.incident_id, "seq": event.seq}
    return [
        DeliveryMessage(
            account_id=item.account_id,
            webhook_id=hook.webhook.id,
            event_id=event.id,
            type=event.type,
            happened_at=event.at,
            body=item.body,
            **subject,
        )
        for hook in hooks
        if hook.wants(event.type.value)
    ]


@dataclass
class Publisher:
    """Sends events to the bus and the delivery queue (the same code in Lambda and in
    ``make dev``)."""

    store: Store
    queue: DeliveryQueue
    events: EventBridgeClient
    bus_name: str

    def publish(self, item: Outgoing, batch: BatchReads) -> list[Figure]:
        """Publish one event in its incident's order (`publish_order`): a repeat is
        skipped, a gap before it is filled from the timeline first; each goes to
        EventBridge, then to the queue group of each webhook that wants it. The position
        moves with the insights' figures of the events sent (`incidents.insights`), which
        are returned. An entry EventBridge refuses, or a concurrent publisher's move,
        raises, so the stream retries from this record. A schedule's handoff has no
        incident: it is sent as it comes (a retried batch may send it again, with its
        id)."""
        if isinstance(item.event, ScheduleHandoff):
            self._send(item, batch)
            return []
        account, incident, seq = item.account_id, item.event.incident_id, item.event.seq
        key = (account, incident)
        if key not in batch.positions:
            batch.positions[key] = published_position(self.store, account, incident)
        position = batch.positions[key]
        if position.seq is not None and seq <= position.seq:
            return []
        missing = missing_before(self.store, account, incident, seq, position.seq)
        for earlier in [*map(outgoing_from_item, missing), item]:
            self._send(earlier, batch)
        changes = [*map(event_from_item, missing), item.event]
        insights, figures = counted(position.insights, changes)
        advance(self.store, account, incident, seq, position, insights=insights, figures=figures)
        batch.positions[key] = Position(seq, insights)
        return figures

    def _send(self, item: Outgoing, batch: BatchReads) -> None:
        response = self.events.put_events(Entries=[self._entry(item)])
        if response.get("FailedEntryCount"):
            raise RuntimeError(f"EventBridge refused the event: {response['Entries']}")
        if item.account_id not in batch.hooks:
            batch.hooks[item.account_id] = account_webhooks(self.store, item.account_id)
        self.queue.send(deliveries(item, batch.hooks[item.account_id]))

    def _entry(self, item: Outgoing) -> Any:
        return {
            "EventBusName": self.bus_name,
            "Source": EVENT_SOURCE_NAME,
            "DetailType": item.event.type.value,
            "Detail": item.body,
            "Resources": [],
        }
