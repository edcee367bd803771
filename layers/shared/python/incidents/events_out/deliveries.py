"""A webhook's delivery log: one item per attempt, kept 30 days, read newest first."""

from __future__ import annotations

from datetime import datetime, timedelta

from dynashard import SortKeyRange
from incidents.events_out.delivery_messages import DeliveryMessage
from incidents.events_out.endpoints import Outcome
from incidents.events_out.webhook_models import Delivery, DeliveryStatus
from incidents.events_out.webhooks import require_webhook
from incidents.items import from_item_fields, to_item
from incidents.keys import deliveries_partition, delivery_sort_key
from incidents.models import timestamp
from incidents.paging import ListPage, PageRequest, partition_page
from incidents.store import Caller, Store
from incidents.table import PK, SK

LOG_DAYS = 30
"""Days an attempt stays in the log (the table's TTL removes it)."""


def record_attempt(
    store: Store,
    message: DeliveryMessage,
    attempt: int,
    outcome: Outcome,
    *,
    status: DeliveryStatus,
    next_attempt_at: str | None,
) -> Delivery:
    """Write one attempt, what it got and what follows, to the log."""
    now = store.clock()
    delivery = Delivery(
        event_id=message.event_id,
        type=message.type,
        incident_id=message.incident_id,
        seq=message.seq,
        attempt=attempt,
        status=status,
        response_status=outcome.status,
        error=outcome.error,
        duration_ms=outcome.duration_ms,
        at=timestamp(now),
        next_attempt_at=next_attempt_at,
    )
    keys = {
        PK: deliveries_partition(message.account_id, message.webhook_id),
        SK: delivery_sort_key(delivery.at, message.event_id, attempt),
    }
    item = to_item(delivery, "delivery", keys)
    item["ExpiresAt"] = {"N": str(_expires(now))}
    store.client.put_item(TableName=store.table_name, Item=item)
    return delivery


def list_deliveries(
    store: Store, caller: Caller, webhook_id: str, page: PageRequest
) -> ListPage[Delivery]:
    """A webhook's attempts, newest first (404 if the webhook is not the account's)."""
    if page.cursor is None:
        require_webhook(store, caller, webhook_id)
    partition = (deliveries_partition(caller.account_id, webhook_id), SortKeyRange())
    binding = "\x1f".join([caller.account_id, caller.user_id, "deliveries", webhook_id])
    return partition_page(
        store, partition, binding, page, lambda item: from_item_fields(Delivery, item)
    )


def _expires(now: datetime) -> int:
    return int((now + timedelta(days=LOG_DAYS)).timestamp())
