"""A failing endpoint costs the queue O(1) in-flight messages (issue 37, points 2 and 8),
on DynamoDB Local, through the real sender handler on the local SQS held to SQS's limits
(`local.events.strict_sqs`), scaled down: at most `IN_FLIGHT_CAP` messages in flight and a
receive that looks through the first `SCAN_WINDOW` messages only, as SQS FIFO does at
120,000 of each.

One account's endpoint fails for 2 hours of simulated time while 150 of its incidents
have two events each; another account's healthy webhook gets 50 events queued behind them.
Without the circuit every failing incident keeps a message in flight while it waits for
its retry: the cap is reached and the backlog fills the scan window, so the other
account's deliveries wait until the endpoint recovers (2 hours). With it, the failing
endpoint holds one message in flight, its deliveries are parked in the table, and the
other account's are delivered within minutes."""

from __future__ import annotations

import dataclasses
import json
import random
from collections import defaultdict
from collections.abc import Iterator
from contextlib import nullcontext
from typing import Any

import pytest

from incidents.events_out import circuit
from incidents.events_out.delivery_messages import DeliveryMessage, DrainJob
from incidents.events_out.endpoints import EndpointPolicy, Outcome
from incidents.events_out.sender import Sender
from incidents.events_out.webhook_models import NewWebhook
from incidents.events_out.webhooks import (
    create_webhook,
    delete_webhook,
    list_webhooks,
    load_webhook,
    update_stored,
)
from incidents.models import EventType
from incidents.paging import PageRequest
from incidents.store import Caller, Store, new_id
from lambdas import sender as handler_module
from local.events.sender_simulation import (
    SimClock,
    SimulatedQueue,
    invoking,
    simulated_queue,
    without_circuit,
)
from local.events.sender_simulation import run as run_queue
from local.events.strict_sqs import scaled

pytestmark = pytest.mark.integration
BATCH = 10
"""Messages a receive hands the sender."""
FAILING_FOR = 2 * 3600
INCIDENTS = 150
IN_FLIGHT_CAP = 50
SCAN_WINDOW = 100


def delivery(caller: Caller, webhook: str, incident: str, seq: int) -> DeliveryMessage:
    return DeliveryMessage(
        account_id=caller.account_id, webhook_id=webhook, event_id=new_id("evt"),
        type=EventType.NOTE_ADDED, incident_id=incident, seq=seq,
        happened_at="2026-11-25T00:00:00.000000Z", body="{}",
    )  # fmt: skip


def run(h: Harness, until: float) -> int:
    """The real handler on the queue until nothing is left or `until`; the most messages
    of the failing webhook ever in flight at once."""
    return run_queue(h.queue, invoking(handler_module.handler), until, h.failing_id)


@dataclasses.dataclass
class Harness:
    """Two accounts' webhooks (one endpoint failing until `failing_for`) behind the model
    queue, the real handler and sender, on a simulated clock."""

    clock: SimClock
    store: Store
    queue: SimulatedQueue
    sending: Sender
    failing: Caller
    failing_id: str
    healthy: Caller
    healthy_id: str
    delivered: dict[str, list[tuple[str, int]]]
    delivered_at: dict[str, list[float]]
    attempted: list[str]
    events: dict[str, DeliveryMessage]

    def enqueue(self, messages: list[DeliveryMessage]) -> None:
        self.events.update((message.event_id, message) for message in messages)
        self.queue.queue.send(messages)

    def bodies(self) -> list[dict[str, Any]]:
        """The messages the queue holds."""
        return [json.loads(message.body) for message in self.queue.held()._messages]


@pytest.fixture
def harness(store: Store, monkeypatch: pytest.MonkeyPatch) -> Iterator[Harness]:
    clock = SimClock()
    timed = dataclasses.replace(store, clock=clock.now)
    policy = EndpointPolicy(allow_loopback=True)
    failing, healthy = (Caller(new_id("acct"), new_id("user")) for _ in "ab")
    failing_id = create_webhook(timed, failing, NewWebhook(url="http://127.0.0.1:9/f"), policy).id
    healthy_id = create_webhook(timed, healthy, NewWebhook(url="http://127.0.0.1:9/h"), policy).id
    delivered: dict[str, list[tuple[str, int]]] = defaultdict(list)
    delivered_at: dict[str, list[float]] = defaultdict(list)
    attempted: list[str] = []
    events: dict[str, DeliveryMessage] = {}

    def endpoint(url: str, body: bytes, headers: dict[str, str], _: Any) -> Outcome:
        clock.seconds += 0.05
        sent = events[headers["webhook-id"]]
        attempted.append(str(sent.incident_id))
        if url.endswith("/f") and clock.seconds < FAILING_FOR:
            return Outcome(503, None, 50)
        delivered[sent.webhook_id].append((str(sent.incident_id), int(sent.seq or 0)))
        delivered_at[sent.webhook_id].append(clock.seconds)
        return Outcome(204, None, 50)

    sending = Sender(timed, policy, poster=endpoint, rng=random.Random(3))
    with simulated_queue(clock) as queue, scaled(IN_FLIGHT_CAP, SCAN_WINDOW):
        monkeypatch.setattr(handler_module, "sender", lambda: sending)
        monkeypatch.setattr(handler_module, "delivery_queue", lambda: queue.queue)
        monkeypatch.setattr(handler_module, "store", lambda: timed)
        monkeypatch.setattr(handler_module, "clock", clock.monotonic)
        yield Harness(clock, timed, queue, sending, failing, failing_id, healthy, healthy_id,
                      delivered, delivered_at, attempted, events)  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("with_circuit", [True, False], ids=["circuit", "no circuit"])
def test_a_failing_endpoint_holds_a_constant_number_in_flight_and_loses_nothing(
    harness: Harness, with_circuit: bool
) -> None:
    h = harness
    incidents = [new_id("inc") for _ in range(INCIDENTS)]
    for seq in (1, 2):
        h.enqueue([delivery(h.failing, h.failing_id, i, seq) for i in incidents])
    h.enqueue([delivery(h.healthy, h.healthy_id, new_id("inc"), 1) for _ in range(50)])
    with nullcontext() if with_circuit else without_circuit():
        most = run(h, 12 * 3600)

    others = h.delivered_at[h.healthy_id]
    print(f"circuit={with_circuit}: at most {most} of the failing endpoint's messages in "
          f"flight; the other account's 50 delivered by {max(others):,.0f} s")  # fmt: skip
    assert len(others) == 50, "the other account's deliveries all went out"
    if not with_circuit:
        assert most >= IN_FLIGHT_CAP, "the strict queue shows the cost the circuit removes"
        assert max(others) >= FAILING_FOR, "the others waited for the endpoint to recover"
        return
    # A constant: a batch's worth at most (a new endpoint starts under its 2 leases, the
    # rest of its first batch wait 5 s untried, then are parked), never one per incident.
    assert most <= BATCH, most
    assert max(others) < 600, "the other account's deliveries flowed meanwhile"
    got = h.delivered[h.failing_id]
    assert sorted(got) == sorted((i, seq) for i in incidents for seq in (1, 2)), "all, once"
    by_incident: dict[str, list[int]] = defaultdict(list)
    for incident, seq in got:
        by_incident[incident].append(seq)
    assert all(seqs == [1, 2] for seqs in by_incident.values()), "in order per incident"
    hook = load_webhook(h.store, h.failing.account_id, h.failing_id)
    assert hook is not None
    assert (hook.failing_since, hook.probe, hook.parked) == (None, None, 0)
    assert circuit.PAGE < INCIDENTS * 2, "the drain ran over several pages"


def test_a_probe_given_up_hands_over_to_the_oldest_parked_delivery(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three attempts each (a shortened schedule): the probe is given up, the oldest parked
    delivery probes next, then the next; one in flight at a time, none lost from the log."""
    monkeypatch.setattr(harness.sending, "delays", (5, 5))
    h = harness
    incidents = sorted(new_id("inc") for _ in range(4))
    h.enqueue([delivery(h.failing, h.failing_id, i, 1) for i in incidents])
    most = run(h, 600)
    probes = list(dict.fromkeys(h.attempted))
    assert most <= BATCH  # constant: see the first test
    assert len(probes) == 4, "each incident probed in turn"
    assert all(h.attempted.count(incident) == 3 for incident in probes)
    hook = load_webhook(h.store, h.failing.account_id, h.failing_id)
    assert hook is not None
    assert hook.failing_since is not None, "still failing: every delivery given up"


def test_a_disabled_webhooks_parked_deliveries_are_dropped_by_the_drain(
    harness: Harness,
) -> None:
    h = harness
    for incident in (new_id("inc") for _ in range(3)):
        circuit.park(h.store, delivery(h.failing, h.failing_id, incident, 1))
    patch = {"enabled": False, "disabled_reason": "test"}
    update_stored(h.store, h.failing.account_id, h.failing_id, patch, [])
    job = DrainJob(account_id=h.failing.account_id, webhook_id=h.failing_id, started="t")
    circuit.drain(h.store, h.queue.queue, job)
    assert [body["kind"] for body in h.bodies()] == ["drain"], "none sent"
    circuit.drain(h.store, h.queue.queue, job.model_copy(update={"page": 2}))
    hook = load_webhook(h.store, h.failing.account_id, h.failing_id)
    assert hook is not None
    assert hook.parked == 0


def test_a_test_delivery_is_never_parked_and_its_success_closes_the_circuit(
    harness: Harness,
) -> None:
    h = harness
    h.enqueue([delivery(h.failing, h.failing_id, new_id("inc"), 1) for _ in range(3)])
    run(h, 60)  # failing: one probes, two are parked
    h.clock.seconds = FAILING_FOR  # the endpoint is fixed
    test = delivery(h.failing, h.failing_id, new_id("inc"), 1).model_copy(
        update={"type": "webhook.test", "incident_id": None, "seq": None}
    )
    h.enqueue([test])
    run(h, FAILING_FOR + 60)
    assert ("None", 0) in h.delivered[h.failing_id], "the test delivery went out at once"
    assert len(h.delivered[h.failing_id]) == 4, "and the parked ones followed it"


def test_after_a_probe_given_up_the_next_failing_delivery_probes(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing parked when the probe is given up: of the next deliveries to fail (side by
    side in one batch) one takes over, and the others are parked after their attempt
    rather than each waiting for its retry in flight."""
    monkeypatch.setattr(harness.sending, "delays", (5, 5))
    h = harness
    h.enqueue([delivery(h.failing, h.failing_id, new_id("inc"), 1)])
    run(h, 120)
    given_up = load_webhook(h.store, h.failing.account_id, h.failing_id)
    assert given_up is not None
    assert (given_up.failing_since is not None, given_up.probe) == (True, None)
    h.enqueue([delivery(h.failing, h.failing_id, new_id("inc"), 1) for _ in range(5)])
    most = run(h, h.clock.seconds + 3)  # before any retry
    assert most <= BATCH  # constant: see the first test
    taken_over = load_webhook(h.store, h.failing.account_id, h.failing_id)
    assert taken_over is not None
    assert taken_over.probe is not None
    assert taken_over.parked == 4, "the four that failed beside the new probe"
    most = run(h, 600)
    assert most <= BATCH  # constant: see the first test
    assert len(set(h.attempted)) == 6, "each parked one probed in turn, none lost"


def test_a_delivery_parked_after_its_webhook_was_deleted_writes_nothing(store: Store) -> None:
    """The sender loaded the webhook, then a user deleted it, then the delivery was to be
    parked: the park's count once went onto the deleted webhook's key, and the account's
    webhook list failed on that half-written item (500), found by schemathesis."""
    caller = Caller(new_id("acct"), new_id("user"))
    request = NewWebhook(url="https://hooks.example.com/in")
    hook = create_webhook(store, caller, request, EndpointPolicy())
    delete_webhook(store, caller, hook.id)
    assert not circuit.park(store, delivery(caller, hook.id, new_id("inc"), 1))
    assert load_webhook(store, caller.account_id, hook.id) is None
    assert list_webhooks(store, caller, PageRequest()).items == []
