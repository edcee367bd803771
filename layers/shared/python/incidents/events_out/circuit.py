"""An endpoint's circuit: a failing endpoint costs the delivery queue O(1) in-flight
messages, not one per incident.

SQS FIFO keeps a group's head in flight while it waits out its retry, so an endpoint that
fails with 1,000 open incidents used to hold 1,000 messages in flight (a queue takes at
most 120,000, and looks for available groups only among its first 120,000 messages: one
dead endpoint could stall every account's deliveries). Now, from the first failure on,
one delivery group (webhook and incident) is the endpoint's **probe**: it keeps trying on
the retry schedule, and every other delivery to that webhook is **parked** in the table
(``<acct>#<webhook>#parked``, by incident and ``seq``) and deleted from the queue.

When a delivery succeeds the circuit closes and a `DrainJob` sends the parked deliveries
back to the queue a page at a time, each incident's in order; a delivery arriving while
some are still parked is parked behind them, so order per (webhook, incident) holds. When
the probe is given up (its 16 attempts failed) the oldest parked delivery is promoted to
be the next probe. A disabled webhook's parked deliveries are dropped by the drain, as
its queued ones are when they come up.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from dynashard.query import Item
from dynashard.throttling import cancellation_codes
from incidents.events_out.delivery_messages import (
    DeliveryMessage,
    DeliveryQueue,
    DrainJob,
    parse_message,
)
from incidents.events_out.webhook_models import TEST_EVENT
from incidents.events_out.webhooks import StoredWebhook, load_webhook, update_stored, webhook_key
from incidents.keys import parked_incident_prefix, parked_partition, parked_sort_key
from incidents.store import Store
from incidents.table import PK, SK, item_key, key_of

PAGE = 100
"""Parked deliveries sent back per drain message."""
KEPT_DAYS = 30
"""A parked delivery nobody drains (its webhook deleted) leaves with the table's TTL."""


def parks(store: Store, hook: StoredWebhook, message: DeliveryMessage) -> bool:
    """Whether `message` waits in the table instead of being tried. While the endpoint
    fails: unless it is the probe's group, or nobody probes (a probe was just given up) and
    none of its incident's deliveries is parked (then it probes). Otherwise: while earlier
    deliveries are still parked, unless it is one of them coming back. A test delivery
    always tries: it is how an operator checks a fixed endpoint, and its success closes
    the circuit."""
    if message.type == TEST_EVENT:
        return False
    if hook.failing_since:
        if hook.probe is not None:
            return hook.probe != message.group()
        return hook.parked > 0 and _incident_parked(store, message)
    return hook.parked > 0 and not message.drained


def _incident_parked(store: Store, message: DeliveryMessage) -> bool:
    """Whether a delivery of `message`'s incident is parked (one strongly consistent read)."""
    response = store.client.query(
        TableName=store.table_name,
        KeyConditionExpression=f"{PK} = :pk AND begins_with({SK}, :incident)",
        ExpressionAttributeValues={
            ":pk": {"S": parked_partition(message.account_id, message.webhook_id)},
            ":incident": {"S": parked_incident_prefix(message.incident_id)},
        },
        ConsistentRead=True,
        Limit=1,
    )
    return bool(response.get("Items"))


def park(store: Store, message: DeliveryMessage) -> bool:
    """Keep `message` in the webhook's parked partition and count it, in one transaction
    (the count tells a drain that something was parked while it read); False, parking
    nothing, if the webhook was deleted meanwhile (its count is never written onto a key
    with no webhook: a list would read that as a broken webhook)."""
    expires = int((store.clock() + timedelta(days=KEPT_DAYS)).timestamp())
    item = {
        **item_key(
            parked_partition(message.account_id, message.webhook_id),
            parked_sort_key(message.incident_id, message.seq, message.event_id),
        ),
        "Type": {"S": "parked"},
        "message": {"S": message.model_dump_json()},
        "ExpiresAt": {"N": str(expires)},
    }
    count: Any = {
        "TableName": store.table_name,
        "Key": webhook_key(message.account_id, message.webhook_id),
        "UpdateExpression": "ADD parked :one",
        "ConditionExpression": f"attribute_exists({PK})",
        "ExpressionAttributeValues": {":one": {"N": "1"}},
    }
    try:
        store.client.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": store.table_name, "Item": item}},
                {"Update": count},
            ]
        )
    except store.client.exceptions.TransactionCanceledException as error:
        if "ConditionalCheckFailed" not in cancellation_codes(error):
            raise
        return False
    return True


def drain(store: Store, queue: DeliveryQueue, job: DrainJob) -> None:
    """One page of a drain: while the circuit is open, promote the oldest parked delivery
    to probe if there is none; once closed, send a page back in order (dropped if the
    webhook is disabled), then ask for the next page, until none is left."""
    hook = load_webhook(store, job.account_id, job.webhook_id)
    if hook is None:
        _delete(store, _page(store, job, PAGE))
        return
    if hook.failing_since:
        if hook.probe is None:
            _promote(store, queue, hook, job)
        return
    items = _page(store, job, PAGE)
    if not items:
        _finish(store, queue, hook, job)
        return
    if hook.webhook.enabled:
        queue.send([_drained(item) for item in items])
    _delete(store, items)
    queue.send([job.model_copy(update={"page": job.page + 1})])


def _promote(store: Store, queue: DeliveryQueue, hook: StoredWebhook, job: DrainJob) -> None:
    """The oldest parked delivery becomes the probe (only if no other did meanwhile)."""
    oldest = _page(store, job, 1)
    if not oldest:
        return
    message = _drained(oldest[0])
    became = update_stored(
        store, job.account_id, job.webhook_id, {"probe": message.group()}, [],
        condition=("attribute_not_exists(probe)", {}, {}),
    )  # fmt: skip
    if became:
        queue.send([message])
        _delete(store, oldest)


def _finish(store: Store, queue: DeliveryQueue, hook: StoredWebhook, job: DrainJob) -> None:
    """Nothing left: the count back to 0, unless something was parked since it was read
    (then that is drained too)."""
    read = {":seen": {"N": str(hook.parked)}}
    done = update_stored(
        store, job.account_id, job.webhook_id, {"parked": 0}, [],
        condition=("attribute_not_exists(parked) OR parked = :seen", {}, read),
    )  # fmt: skip
    if not done:
        queue.send([job.model_copy(update={"page": job.page + 1})])


def _page(store: Store, job: DrainJob, limit: int) -> list[Item]:
    """The first `limit` parked deliveries, each incident's in order (strongly read)."""
    response = store.client.query(
        TableName=store.table_name,
        KeyConditionExpression=f"{PK} = :pk",
        ExpressionAttributeValues={":pk": {"S": parked_partition(job.account_id, job.webhook_id)}},
        ConsistentRead=True,
        Limit=limit,
    )
    return list(response.get("Items", []))


def _drained(item: Item) -> DeliveryMessage:
    message = parse_message(item["message"]["S"])
    assert isinstance(message, DeliveryMessage), "only deliveries are parked"
    return message.model_copy(update={"drained": True})


def _delete(store: Store, items: list[Item]) -> None:
    """Delete `items`, 25 a request, until none is left unprocessed."""
    for start in range(0, len(items), 25):
        pending: Any = {
            store.table_name: [
                {"DeleteRequest": {"Key": key_of(item)}} for item in items[start : start + 25]
            ]
        }
        while pending:
            pending = store.client.batch_write_item(RequestItems=pending)["UnprocessedItems"]
