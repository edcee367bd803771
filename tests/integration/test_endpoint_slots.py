"""A slow endpoint holds a bounded number of sender slots (issue 37, point 2), on DynamoDB
Local: once an attempt to it has run `SLOW_MS`, attempts take one of `SLOTS` leases on its
webhook, and deliveries finding none go back to the queue untried. Before, every delivery
received was attempted at once: 100 deliveries to an endpoint answering in 9.5 s held all
of the sender's slots, and another account's deliveries waited behind them."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import pytest

from incidents.events_out import endpoint_slots, sender
from incidents.events_out.delivery_messages import DeliveryMessage
from incidents.events_out.endpoint_slots import LEASE_SECONDS, SLOTS, WAIT_SECONDS, take_slot
from incidents.events_out.endpoints import EndpointPolicy, Outcome
from incidents.events_out.sender import Attempted, Sender
from incidents.events_out.webhook_models import NewWebhook
from incidents.events_out.webhooks import create_webhook, load_webhook
from incidents.models import EventType
from incidents.store import Caller, Store, new_id

pytestmark = pytest.mark.integration
ANSWER_SECONDS = 0.3
DELIVERIES = 12


class SlowEndpoint:
    """Answers 204 after `ANSWER_SECONDS`, counting the attempts running at once."""

    def __init__(self) -> None:
        self.running = self.most = 0
        self.lock = threading.Lock()

    def __call__(self, *_: Any) -> Outcome:
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
        time.sleep(ANSWER_SECONDS)
        with self.lock:
            self.running -= 1
        return Outcome(204, None, int(ANSWER_SECONDS * 1000))


def delivery(caller: Caller, webhook: str) -> DeliveryMessage:
    return DeliveryMessage(
        account_id=caller.account_id, webhook_id=webhook, event_id=new_id("evt"),
        type=EventType.NOTE_ADDED, incident_id=new_id("inc"), seq=1,
        happened_at="2026-11-26T00:00:00.000000Z", body="{}",
    )  # fmt: skip


@pytest.fixture
def noticed_at_100_ms(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(endpoint_slots, "SLOW_MS", 100)
    monkeypatch.setattr(sender, "SLOW_MS", 100)


def test_a_slow_endpoint_gets_at_most_its_slots_and_the_rest_wait_untried(
    store: Store, noticed_at_100_ms: None
) -> None:
    caller = Caller(new_id("acct"), new_id("user"))
    policy = EndpointPolicy(allow_loopback=True)
    hook = create_webhook(store, caller, NewWebhook(url="http://127.0.0.1:9/slow"), policy).id
    endpoint = SlowEndpoint()
    sending = Sender(store, policy, poster=endpoint)
    first = sending.deliver(delivery(caller, hook))
    assert first.delivery is not None
    marked = load_webhook(store, caller.account_id, hook)
    assert marked is not None
    assert marked.slow, "its first attempt ran past SLOW_MS"

    with ThreadPoolExecutor(DELIVERIES) as pool:
        results: list[Attempted] = list(
            pool.map(sending.deliver, [delivery(caller, hook) for _ in range(DELIVERIES)])
        )
    tried = [r for r in results if r.delivery is not None]
    waiting = [r for r in results if r.delivery is None]
    assert endpoint.most == SLOTS, endpoint.most
    assert len(tried) >= SLOTS
    assert all(r.retry_in == WAIT_SECONDS for r in waiting), "back to the queue, untried"
    after = load_webhook(store, caller.account_id, hook)
    assert after is not None
    assert take_slot(store, caller.account_id, after, store.clock()), "every lease given back"


def test_an_endpoint_is_marked_slow_while_its_first_attempt_still_runs(
    store: Store, noticed_at_100_ms: None
) -> None:
    caller = Caller(new_id("acct"), new_id("user"))
    policy = EndpointPolicy(allow_loopback=True)
    hook = create_webhook(store, caller, NewWebhook(url="http://127.0.0.1:9/slow"), policy).id
    seen: list[bool] = []

    def watched(*args: Any) -> Outcome:
        time.sleep(0.25)
        during = load_webhook(store, caller.account_id, hook)
        seen.append(during is not None and during.slow)
        return Outcome(204, None, 250)

    Sender(store, policy, poster=watched).deliver(delivery(caller, hook))
    assert seen == [True]
    quick = Sender(store, policy, poster=lambda *_: Outcome(204, None, 30))
    assert quick.deliver(delivery(caller, hook)).delivery is not None, "it took a lease"
    after = load_webhook(store, caller.account_id, hook)
    assert after is not None
    assert not after.slow, "a quick attempt clears the mark"


def test_a_lease_a_dead_invocation_kept_lapses(store: Store) -> None:
    caller = Caller(new_id("acct"), new_id("user"))
    policy = EndpointPolicy(allow_loopback=True)
    made = create_webhook(store, caller, NewWebhook(url="http://127.0.0.1:9/slow"), policy)
    hook = load_webhook(store, caller.account_id, made.id)
    assert hook is not None
    now = store.clock()
    for _ in range(SLOTS):
        assert take_slot(store, caller.account_id, hook, now) is not None
    assert take_slot(store, caller.account_id, hook, now) is None, "all taken, none freed"
    later = now + timedelta(seconds=LEASE_SECONDS + 1)
    assert take_slot(store, caller.account_id, hook, later) is not None
