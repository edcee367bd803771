"""``make dev``'s demo webhooks: one per demo account, to the receiver's documented address
(``make receiver``, port 9000), for resolutions only (few deliveries while nobody listens).
Swagger UI's webhook operations are prefilled with the first account's, and ``make dev``
prints its id and secret (``$WEBHOOK``, ``$WEBHOOK_SECRET``) for the README's receiver."""

from __future__ import annotations

from dataclasses import dataclass

from incidents.events_out.endpoints import EndpointPolicy
from incidents.events_out.webhook_models import NewWebhook
from incidents.events_out.webhooks import create_webhook, stored_from_item
from incidents.keys import WEBHOOK_PREFIX, webhooks_partition
from incidents.models import EventType
from incidents.store import Caller, Store
from local.demo.data import DemoAccount
from local.webhook_receiver import RECEIVER_URL

DESCRIPTION = "make dev's receiver (make receiver SECRET=$WEBHOOK_SECRET)"


@dataclass(frozen=True)
class DemoWebhook:
    """A demo account's webhook to the local receiver, with its current secret."""

    id: str
    secret: str


def receiver_webhook(store: Store, account: DemoAccount) -> DemoWebhook:
    """The account's webhook to the receiver: the one an earlier ``make dev`` registered on
    a kept table (found by its URL), or a new one."""
    items = store.query_partition(webhooks_partition(account.account_id), prefix=WEBHOOK_PREFIX)
    for stored in map(stored_from_item, items):
        if stored.webhook.url == RECEIVER_URL:
            return DemoWebhook(stored.webhook.id, stored.secret)
    request = NewWebhook(
        url=RECEIVER_URL, event_types=[EventType.RESOLVED], description=DESCRIPTION
    )
    caller = Caller(account.account_id, account.users[0].id)
    created = create_webhook(store, caller, request, EndpointPolicy(allow_loopback=True))
    return DemoWebhook(created.id, created.secret)
