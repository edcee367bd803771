"""Deliveries asked for through the API: a replay of the account's events from a moment on,
and a test event. Both go through the delivery queue, so they are signed, retried and
logged like every delivery, in order per incident."""

from __future__ import annotations

from datetime import datetime

from incidents.events_out.delivery_messages import DeliveryMessage, DeliveryQueue, ReplayJob
from incidents.events_out.outbox import deliveries, outgoing_from_item
from incidents.events_out.payloads import test_body
from incidents.events_out.webhook_models import TEST_EVENT
from incidents.events_out.webhooks import load_webhook, require_webhook
from incidents.models import parse_timestamp, timestamp
from incidents.paging import CreatedWindow, PageRequest
from incidents.store import Caller, Store, new_id
from incidents.timeline.queries import EventRequest, account_event_items

REPLAY_PAGE = 100
"""Events a replay job enqueues before it queues its next page."""


def start_replay(
    store: Store, queue: DeliveryQueue, caller: Caller, webhook_id: str, since: datetime
) -> str:
    """Queue a replay of the account's events from `since` on to one webhook; its id."""
    require_webhook(store, caller, webhook_id)
    job = ReplayJob(
        account_id=caller.account_id,
        user_id=caller.user_id,
        webhook_id=webhook_id,
        replay_id=new_id("rpl"),
        since=timestamp(since),
    )
    queue.send([job])
    return job.replay_id


def run_replay_page(store: Store, queue: DeliveryQueue, job: ReplayJob) -> None:
    """Enqueue one page of a replay (oldest first) for the webhook, then the next page."""
    hook = load_webhook(store, job.account_id, job.webhook_id)
    if hook is None or not hook.webhook.enabled:
        return
    since = parse_timestamp(job.since)
    page = PageRequest(
        limit=REPLAY_PAGE,
        cursor=job.cursor,
        descending=False,
        window=CreatedWindow(since=since),
    )
    caller = Caller(job.account_id, job.user_id)
    found = account_event_items(store, caller, EventRequest(page), outgoing_from_item)
    messages: list[DeliveryMessage | ReplayJob] = [
        message.model_copy(update={"replay_id": job.replay_id})
        for item in found.items
        for message in deliveries(item, [hook])
    ]
    if found.next_cursor:
        messages.append(job.model_copy(update={"cursor": found.next_cursor, "page": job.page + 1}))
    queue.send(messages)


def send_test(store: Store, queue: DeliveryQueue, caller: Caller, webhook_id: str) -> str:
    """Queue a ``webhook.test`` event for one webhook; the event's id."""
    require_webhook(store, caller, webhook_id)
    event_id, at = new_id("evt"), timestamp(store.clock())
    message = DeliveryMessage(
        account_id=caller.account_id,
        webhook_id=webhook_id,
        event_id=event_id,
        type=TEST_EVENT,
        incident_id=None,
        seq=None,
        happened_at=at,
        body=test_body(caller.account_id, webhook_id, event_id, at),
    )
    queue.send([message])
    return event_id
