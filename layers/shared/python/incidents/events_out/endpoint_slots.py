"""Attempts at once to a slow endpoint, bounded: an endpoint whose last attempt took
`SLOW_MS` or more is marked slow on its webhook, and so is a new one (registered, or its
URL changed) until an attempt answers within `SLOW_MS`; an attempt to a slow endpoint
first takes one of `SLOTS` leases on the webhook's item (a conditional write each). A delivery
that finds none goes back to the queue for `WAIT_SECONDS`, not counted as an attempt. So a
slow endpoint holds at most `SLOTS` sender slots however many of its deliveries are queued,
and other webhooks' deliveries are not held behind it (they take no lease: a fast endpoint
pays nothing once it has answered quickly). A known-fast endpoint turning slow is marked as
soon as an attempt has run `SLOW_MS`, so until then its attempts may hold every sender
slot once, for at most one attempt (10 s): the time it takes to be noticed. A lease lapses
`LEASE_SECONDS` after it was taken, so one a dead invocation never gave back frees itself.
"""

from __future__ import annotations

import random
from datetime import datetime

from incidents.events_out.endpoints import TIMEOUT_SECONDS
from incidents.events_out.webhooks import Condition, StoredWebhook, update_stored
from incidents.store import Store

SLOW_MS = 2_000
SLOTS = 2
LEASE_SECONDS = int(TIMEOUT_SECONDS) + 10
WAIT_SECONDS = 5


def take_slot(store: Store, account: str, hook: StoredWebhook, now: datetime) -> str | None:
    """A free lease on `hook`'s endpoint (its attribute's name), or None if all are taken."""
    instant = int(now.timestamp())
    for slot in random.sample(range(SLOTS), SLOTS):
        name = f"slot{slot}"
        free: Condition = (
            "attribute_not_exists(#slot) OR #slot < :now",
            {"#slot": name},
            {":now": {"N": str(instant)}},
        )
        changes = {name: instant + LEASE_SECONDS}
        if update_stored(store, account, hook.webhook.id, changes, [], condition=free):
            return name
    return None


def free_slot(store: Store, account: str, hook: StoredWebhook, slot: str) -> None:
    """Give a lease back once its attempt is over."""
    update_stored(store, account, hook.webhook.id, {}, [slot])


def mark_slow(store: Store, account: str, hook: StoredWebhook) -> None:
    """Mark the endpoint slow (an attempt has run `SLOW_MS`: the sender does it while the
    attempt still runs, so the deliveries received meanwhile already take leases)."""
    if not hook.slow:
        update_stored(store, account, hook.webhook.id, {"slow": True}, [])


def mark_speed(store: Store, account: str, hook: StoredWebhook, duration_ms: int) -> None:
    """After an attempt: slow if it took `SLOW_MS` or more, else not (writes on a change)."""
    if duration_ms >= SLOW_MS:
        mark_slow(store, account, hook)
    elif hook.slow:
        update_stored(store, account, hook.webhook.id, {}, ["slow"])
