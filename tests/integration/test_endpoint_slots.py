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
from incidents.events_out.webhook_models import NewWebhook, WebhookPatch
from incidents.events_out.webhooks import create_webhook, load_webhook, update_webhook
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


POLICY = EndpointPolicy(allow_loopback=True)


@pytest.fixture
def noticed_at_100_ms(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(endpoint_slots, "SLOW_MS", 100)
    monkeypatch.setattr(sender, "SLOW_MS", 100)


@pytest.fixture
def webhook(store: Store) -> tuple[Caller, str]:
    """A new account's webhook (its endpoint is never called: the tests post)."""
    caller = Caller(new_id("acct"), new_id("user"))
    return caller, create_webhook(store, caller, NewWebhook(url="http://127.0.0.1:9/s"), POLICY).id


def test_a_slow_endpoint_gets_at_most_its_slots_and_the_rest_wait_untried(
    store: Store, noticed_at_100_ms: None, webhook: tuple[Caller, str]
) -> None:
    caller, hook = webhook
    policy = POLICY
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
    assert 1 <= endpoint.most <= SLOTS, endpoint.most  # never more (how many overlap is timing)
    assert len(tried) >= 1
    assert all(r.retry_in == WAIT_SECONDS for r in waiting), "back to the queue, untried"
    after = load_webhook(store, caller.account_id, hook)
    assert after is not None
    assert take_slot(store, caller.account_id, after, store.clock()), "every lease given back"


def slow(store: Store, caller: Caller, hook: str) -> bool:
    stored = load_webhook(store, caller.account_id, hook)
    assert stored is not None
    return stored.slow


def test_a_new_endpoint_is_presumed_slow_until_it_answers_quickly(
    store: Store, webhook: tuple[Caller, str]
) -> None:
    caller, hook = webhook
    assert slow(store, caller, hook), "registered: not yet seen answer quickly"
    quick = Sender(store, POLICY, poster=lambda *_: Outcome(204, None, 30))
    assert quick.deliver(delivery(caller, hook)).delivery is not None, "under a lease"
    assert not slow(store, caller, hook)
    update_webhook(store, caller, hook, WebhookPatch(url="https://hooks.example.com/b"), POLICY)
    assert slow(store, caller, hook), "another endpoint: presumed slow again"


def test_an_endpoint_is_marked_slow_while_an_attempt_still_runs(
    store: Store, noticed_at_100_ms: None, webhook: tuple[Caller, str]
) -> None:
    caller, hook = webhook
    quick = Sender(store, POLICY, poster=lambda *_: Outcome(204, None, 30))
    quick.deliver(delivery(caller, hook))
    assert not slow(store, caller, hook), "seen answer quickly"
    seen: list[bool] = []

    def watched(*args: Any) -> Outcome:
        time.sleep(0.6)  # the mark is written 100 ms in: room for a loaded machine
        seen.append(slow(store, caller, hook))
        return Outcome(204, None, 600)

    Sender(store, POLICY, poster=watched).deliver(delivery(caller, hook))
    assert seen == [True], "marked 100 ms into the attempt, before it ended"
    assert quick.deliver(delivery(caller, hook)).delivery is not None, "it took a lease"
    assert not slow(store, caller, hook), "a quick attempt clears the mark"


def test_a_lease_a_dead_invocation_kept_lapses(store: Store, webhook: tuple[Caller, str]) -> None:
    caller, made = webhook
    hook = load_webhook(store, caller.account_id, made)
    assert hook is not None
    now = store.clock()
    for _ in range(SLOTS):
        assert take_slot(store, caller.account_id, hook, now) is not None
    assert take_slot(store, caller.account_id, hook, now) is None, "all taken, none freed"
    later = now + timedelta(seconds=LEASE_SECONDS + 1)
    assert take_slot(store, caller.account_id, hook, later) is not None
