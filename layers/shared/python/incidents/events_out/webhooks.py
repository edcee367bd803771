"""An account's webhooks: register, read, change, delete, rotate the secret.

Any user of the account manages its webhooks (they belong to the account, like its
incidents; docs "Events and webhooks"). Webhooks live in one partition per account
(``<acct>#webhook``) beside their count, which a create and a delete move in the same
transaction, so an account never holds more than `MAX_WEBHOOKS`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from dynashard import SortKeyRange
from dynashard.query import Item
from incidents.account_limits import count_update
from incidents.errors import ConflictError, DomainError, NotFoundError
from incidents.events_out.endpoints import EndpointPolicy
from incidents.events_out.signing import new_secret
from incidents.events_out.webhook_models import (
    TEST_EVENT,
    NewWebhook,
    RotatedSecret,
    Webhook,
    WebhookCreated,
    WebhookPatch,
)
from incidents.items import deserialize, model_from_values, serialize
from incidents.keys import WEBHOOK_COUNT_SK, WEBHOOK_PREFIX, webhooks_partition
from incidents.models import timestamp
from incidents.paging import ListPage, PageRequest, partition_page
from incidents.store import Caller, Store, new_id
from incidents.table import PK, item_key

MAX_WEBHOOKS = 20
ROTATION_OVERLAP = timedelta(hours=24)
"""How long the previous secret keeps signing after a rotation."""
MAX_PREVIOUS_SECRETS = 3
"""Earlier secrets signing at once (a leaked secret can be replaced three times a day; each
is one more signature in every delivery's header)."""


class TooManyWebhooksError(DomainError):
    """The account has `MAX_WEBHOOKS` already."""

    code = "too_many_webhooks"


class TooManyRotationsError(DomainError):
    """`MAX_PREVIOUS_SECRETS` earlier secrets still sign: a rotation would drop one early."""

    code = "too_many_rotations"


@dataclass(frozen=True)
class StoredWebhook:
    """A webhook with what only the sender sees: its secrets and its health."""

    webhook: Webhook
    secret: str
    previous: tuple[tuple[str, str], ...]
    """Earlier secrets and when each stops signing, oldest first."""
    failing_since: str | None
    probe: str | None = None
    """While failing: the delivery group that keeps trying the endpoint (`circuit`)."""
    parked: int = 0
    """Deliveries parked since the last drain finished (`circuit`)."""
    slow: bool = False
    """Its last attempt took 2 s or more: attempts to it take a lease (`endpoint_slots`)."""

    def signing_secrets(self, now: str) -> list[str]:
        """The secrets that sign a delivery at `now`: the current one, and each earlier one
        during the 24 hours after the rotation that replaced it."""
        return [self.secret, *(secret for secret, until in self.previous if now < until)]

    def live_previous(self, now: str) -> list[tuple[str, str]]:
        """The earlier secrets still signing at `now`, oldest first."""
        return [(secret, until) for secret, until in self.previous if now < until]

    def wants(self, event_type: str) -> bool:
        """Whether the webhook takes events of `event_type` (a test event: always)."""
        chosen = self.webhook.event_types
        if chosen is None or event_type == TEST_EVENT:
            return True
        return event_type in {t.value for t in chosen}


def webhook_key(account: str, webhook_id: str) -> dict[str, Item]:
    """The key of a webhook's item."""
    return item_key(webhooks_partition(account), webhook_id)


def stored_from_item(item: Item) -> StoredWebhook:
    """The webhook stored in `item`."""
    values = deserialize(item)
    return StoredWebhook(
        webhook=model_from_values(Webhook, values),
        secret=values["secret"],
        previous=_previous_of(values),
        failing_since=values.get("failing_since"),
        probe=values.get("probe"),
        parked=int(values.get("parked", 0)),
        slow=bool(values.get("slow", False)),
    )


def _previous_of(values: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """Earlier secrets: the list rotations keep, and the one attribute pair of items
    rotated before it (read as the list's first entry)."""
    listed = [(str(s), str(u)) for s, u in json.loads(values.get("previous_secrets") or "[]")]
    single = values.get("previous_secret"), values.get("previous_expires_at")
    older = [(str(single[0]), str(single[1]))] if all(single) else []
    return tuple(older + listed)


def create_webhook(
    store: Store, caller: Caller, request: NewWebhook, policy: EndpointPolicy
) -> WebhookCreated:
    """Register a webhook; its secret is in this answer only (and on rotation)."""
    policy.check_url(request.url)
    created = WebhookCreated(
        id=new_id("wh"),
        url=request.url,
        event_types=request.event_types,
        description=request.description,
        enabled=True,
        created_at=timestamp(store.clock()),
        secret=new_secret(),
    )
    item = serialize(
        {
            **created.model_dump(mode="json"),
            **{k: v["S"] for k, v in webhook_key(caller.account_id, created.id).items()},
            "Type": "webhook",
            "slow": True,  # an endpoint not yet seen answer quickly: `endpoint_slots`
        }
    )
    store.transact(
        [_count_move(store, caller.account_id, +1), store.put_operation(item, new=True)],
        [TooManyWebhooksError(f"an account has at most {MAX_WEBHOOKS} webhooks"), None],
    )
    return created


def load_webhook(store: Store, account: str, webhook_id: str) -> StoredWebhook | None:
    """The webhook with its secrets, by one strongly consistent point read."""
    response = store.client.get_item(
        TableName=store.table_name, Key=webhook_key(account, webhook_id), ConsistentRead=True
    )
    item = response.get("Item")
    return stored_from_item(item) if item else None


def get_webhook(store: Store, caller: Caller, webhook_id: str) -> Webhook:
    """One webhook of the caller's account (never its secret); 404 otherwise."""
    return require_webhook(store, caller, webhook_id).webhook


def require_webhook(store: Store, caller: Caller, webhook_id: str) -> StoredWebhook:
    """`load_webhook`, or 404 if the webhook is not in the caller's account."""
    stored = load_webhook(store, caller.account_id, webhook_id)
    if stored is None:
        raise NotFoundError(f"webhook {webhook_id} not found")
    return stored


def list_webhooks(store: Store, caller: Caller, page: PageRequest) -> ListPage[Webhook]:
    """The account's webhooks, newest first unless asked otherwise, paged like every list."""
    partition = (webhooks_partition(caller.account_id), SortKeyRange.begins_with(WEBHOOK_PREFIX))
    binding = "\x1f".join([caller.account_id, caller.user_id, "webhooks"])
    return partition_page(
        store, partition, binding, page, lambda item: stored_from_item(item).webhook
    )


def update_webhook(
    store: Store, caller: Caller, webhook_id: str, patch: WebhookPatch, policy: EndpointPolicy
) -> Webhook:
    """Change the fields given; re-enabling clears why it was disabled (a replay catches
    up on what it missed)."""
    if patch.url is not None:
        policy.check_url(patch.url)
    changes: dict[str, Any] = patch.model_dump(mode="json", include=patch.model_fields_set)
    removed = [name for name, value in changes.items() if value is None]
    kept = {name: value for name, value in changes.items() if value is not None}
    if patch.url is not None:
        kept["slow"] = True  # another endpoint: not yet seen answer quickly
    if patch.enabled:
        removed += ["disabled_reason", "failing_since"]
    updated = update_stored(store, caller.account_id, webhook_id, kept, removed)
    if updated is None:
        raise NotFoundError(f"webhook {webhook_id} not found")
    return updated.webhook


def delete_webhook(store: Store, caller: Caller, webhook_id: str) -> None:
    """Delete a webhook; deliveries already queued for it are dropped when they come up."""
    pk, sk = webhooks_partition(caller.account_id), webhook_id
    store.transact(
        [store.delete_operation(pk, sk), _count_move(store, caller.account_id, -1)],
        [NotFoundError(f"webhook {webhook_id} not found"), None],
    )


def rotate_secret(store: Store, caller: Caller, webhook_id: str) -> RotatedSecret:
    """A new secret; the current one and every earlier one still inside its 24 hours keep
    signing (a signature each), so receivers can switch without losing a delivery. At most
    `MAX_PREVIOUS_SECRETS` earlier secrets sign at once: one more rotation is 409 until the
    oldest expires. Concurrent rotations: one wins, the others are 409 (the condition on
    the current secret)."""
    current = require_webhook(store, caller, webhook_id)
    now = store.clock()
    live = current.live_previous(timestamp(now))
    if len(live) >= MAX_PREVIOUS_SECRETS:
        raise TooManyRotationsError(
            f"{len(live)} earlier secrets still sign deliveries; the oldest stops at "
            f"{live[0][1]}: rotate again after it"
        )
    expires = timestamp(now + ROTATION_OVERLAP)
    kept = json.dumps([*live, (current.secret, expires)])
    changes = {"secret": new_secret(), "previous_secrets": kept}
    removed = ["previous_secret", "previous_expires_at"]
    condition = ("#secret = :was", {"#secret": "secret"}, {":was": {"S": current.secret}})
    account = caller.account_id
    if update_stored(store, account, webhook_id, changes, removed, condition=condition) is None:
        raise ConflictError("the secret was rotated at the same time; rotate again")
    return RotatedSecret(secret=changes["secret"], previous_expires_at=expires)


Condition = tuple[str, dict[str, str], Item]
"""A condition's expression, its names and its values (`update_stored`)."""


def update_stored(
    store: Store,
    account: str,
    webhook_id: str,
    changes: dict[str, Any],
    removed: list[str],
    *,
    condition: Condition | None = None,
) -> StoredWebhook | None:
    """SET `changes`, REMOVE `removed` on an existing webhook (the sender's record of an
    endpoint's health: `failing_since`, its probe, disabling it); None if there is none
    (or `condition` failed)."""
    names = {f"#s{n}": name for n, name in enumerate(changes)}
    names.update({f"#r{n}": name for n, name in enumerate(removed)})
    values = {f":s{n}": value for n, value in enumerate(changes.values())}
    clauses = []
    if changes:
        clauses.append("SET " + ", ".join(f"#s{n} = :s{n}" for n in range(len(changes))))
    if removed:
        clauses.append("REMOVE " + ", ".join(f"#r{n}" for n in range(len(removed))))
    expression, extra_names, extra_values = condition or ("", {}, {})
    request: dict[str, Any] = {
        "TableName": store.table_name,
        "Key": webhook_key(account, webhook_id),
        "UpdateExpression": " ".join(clauses),
        "ConditionExpression": f"attribute_exists({PK})"
        + (f" AND {expression}" if expression else ""),
        "ExpressionAttributeNames": {**names, **extra_names},
        "ReturnValues": "ALL_NEW",
    }
    if values or extra_values:
        request["ExpressionAttributeValues"] = {**serialize(values), **extra_values}
    try:
        response = store.client.update_item(**request)
    except store.client.exceptions.ConditionalCheckFailedException:
        return None
    return stored_from_item(response["Attributes"])


def _count_move(store: Store, account: str, change: int) -> Item:
    """The transaction's Update of the account's webhook count (refused past the maximum)."""
    key = item_key(webhooks_partition(account), WEBHOOK_COUNT_SK)
    return count_update(store.table_name, key, "webhook_count", change, MAX_WEBHOOKS)
