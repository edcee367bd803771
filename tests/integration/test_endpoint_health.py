"""An endpoint's health, on DynamoDB Local: the first failure is remembered, a success
forgets it, and an endpoint whose every attempt failed for 5 days is disabled (then its
deliveries are dropped until someone re-enables it)."""

from __future__ import annotations

import socket
from datetime import timedelta

import pytest

from incidents.events_out.delivery_messages import DeliveryMessage
from incidents.events_out.endpoints import EndpointPolicy, Outcome
from incidents.events_out.sender import DISABLE_AFTER, MAX_DELAY, Sender
from incidents.events_out.webhook_models import NewWebhook, WebhookPatch
from incidents.events_out.webhooks import (
    create_webhook,
    load_webhook,
    update_stored,
    update_webhook,
)
from incidents.models import EventType, timestamp
from incidents.store import Caller, Store, new_id

LOOPBACK = EndpointPolicy(allow_loopback=True)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def message(caller: Caller, webhook_id: str, incident_id: str | None = None) -> DeliveryMessage:
    return DeliveryMessage(
        account_id=caller.account_id,
        webhook_id=webhook_id,
        event_id=new_id("evt"),
        type=EventType.NOTE_ADDED,
        incident_id=incident_id or new_id("inc"),
        seq=2,
        happened_at="2026-11-24T08:00:00.000000Z",
        body="{}",
    )


def test_failing_for_five_days_disables_and_a_success_before_forgets(store: Store) -> None:
    caller = Caller(new_id("acct"), new_id("user"))
    url = f"http://127.0.0.1:{closed_port()}/hooks"
    hook = create_webhook(store, caller, NewWebhook(url=url), LOOPBACK).id
    failing = Sender(store, LOOPBACK)

    probing = new_id("inc")  # from the first failure on, its deliveries probe the endpoint
    first = failing.deliver(message(caller, hook, probing))
    assert first.delivery is not None
    assert first.delivery.error == "connection refused"
    since = load_webhook(store, caller.account_id, hook)
    assert since is not None
    assert since.failing_since is not None

    healthy = Sender(store, LOOPBACK, poster=lambda *_: Outcome(204, None, 1))
    assert healthy.deliver(message(caller, hook, probing)).disabled is False
    cleared = load_webhook(store, caller.account_id, hook)
    assert cleared is not None
    assert cleared.failing_since is None

    long_ago = timestamp(store.clock() - DISABLE_AFTER - timedelta(minutes=1))
    update_stored(store, caller.account_id, hook, {"failing_since": long_ago}, [])
    last = failing.deliver(message(caller, hook))
    assert (last.disabled, last.retry_in) == (True, None)
    disabled = load_webhook(store, caller.account_id, hook)
    assert disabled is not None
    assert disabled.webhook.enabled is False
    assert str(disabled.webhook.disabled_reason).startswith(
        f"every delivery failed from {long_ago}"
    )
    assert failing.deliver(message(caller, hook)).delivery is None  # dropped while disabled

    again = update_webhook(store, caller, hook, WebhookPatch(enabled=True), LOOPBACK)
    assert (again.enabled, again.disabled_reason) == (True, None)


def test_410_gone_disables_the_endpoint_at_once(store: Store) -> None:
    """Issue 37, point 6: a receiver that says it is gone is not retried for 72 hours."""
    caller = Caller(new_id("acct"), new_id("user"))
    hook = create_webhook(store, caller, NewWebhook(url="http://127.0.0.1:9/h"), LOOPBACK).id
    gone = Sender(store, LOOPBACK, poster=lambda *_: Outcome(410, None, 1))
    attempted = gone.deliver(message(caller, hook))
    assert (attempted.disabled, attempted.retry_in) == (True, None)
    assert attempted.delivery is not None
    assert attempted.delivery.status == "failed"
    stored = load_webhook(store, caller.account_id, hook)
    assert stored is not None
    assert stored.webhook.enabled is False
    assert "410 Gone" in str(stored.webhook.disabled_reason)


@pytest.mark.parametrize(("status", "asked"), [(429, 3600), (503, 900), (503, 10**9)])
def test_retry_after_is_honoured_within_the_schedule(store: Store, status: int, asked: int) -> None:
    """A 429 or 503 with ``Retry-After`` waits at least that long, at most 12 h."""
    caller = Caller(new_id("acct"), new_id("user"))
    hook = create_webhook(store, caller, NewWebhook(url="http://127.0.0.1:9/h"), LOOPBACK).id
    busy = Sender(store, LOOPBACK, poster=lambda *_: Outcome(status, None, 1, retry_after=asked))
    attempted = busy.deliver(message(caller, hook))
    assert attempted.retry_in == min(asked, MAX_DELAY)
    assert attempted.disabled is False
