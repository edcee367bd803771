"""A failing endpoint costs the queue O(1) in-flight messages (issue 37, point 2), on
DynamoDB Local, through the real sender handler under a model of SQS FIFO.

The model keeps what SQS does and moto does not: a group's messages go out one at a time
(none while one of the group is in flight), a received message is in flight until deleted
or until its visibility ends, and a repeat of a deduplication id within 5 minutes is
dropped. One account's endpoint fails for 2 hours of simulated time while 300 of its
incidents have two events each; another account's healthy webhook gets 50 events
meanwhile. Without the circuit every failing incident kept a message in flight (300 of
300: it grows with the incidents); with it, one."""

from __future__ import annotations

import dataclasses
import json
import random
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import pytest
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from incidents.events_out import circuit
from incidents.events_out.delivery_messages import DeliveryMessage, DrainJob, ReplayJob
from incidents.events_out.endpoints import EndpointPolicy, Outcome
from incidents.events_out.sender import Sender
from incidents.events_out.webhook_models import NewWebhook
from incidents.events_out.webhooks import create_webhook, load_webhook, update_stored
from incidents.models import EventType
from incidents.store import Caller, Store, new_id
from lambdas import sender as handler_module
from tests.integration.test_retry_schedule_on_sqs import SimClock, SimContext

pytestmark = pytest.mark.integration
VISIBILITY = 360
DEDUPLICATION_SECONDS = 300
FAILING_FOR = 2 * 3600
INCIDENTS = 300


@dataclasses.dataclass
class Held:
    """One message as the queue holds it."""

    number: int
    body: str
    group: str
    visible_at: float = 0.0
    received: bool = False
    deleted: bool = False


class FifoModel:
    """SQS FIFO as the sender uses it, on a simulated clock."""

    def __init__(self, clock: SimClock) -> None:
        self.clock = clock
        self.held: list[Held] = []
        self.sent_at: dict[str, float] = {}

    def send(self, messages: Sequence[DeliveryMessage | ReplayJob | DrainJob]) -> None:
        for message in messages:
            key = message.deduplication()
            if self.clock.seconds - self.sent_at.get(key, -1e9) < DEDUPLICATION_SECONDS:
                continue
            self.sent_at[key] = self.clock.seconds
            number = len(self.held)
            self.held.append(Held(number, message.model_dump_json(), message.group()))

    def heads(self) -> list[Held]:
        """Each group's first message not deleted: the only one SQS may hand out (none
        while it is in flight)."""
        heads: dict[str, Held] = {}
        for held in self.held:
            if not held.deleted and held.group not in heads:
                heads[held.group] = held
        return list(heads.values())

    def receive(self, most: int = 10) -> list[Held]:
        """Available heads, oldest first."""
        now = self.clock.seconds
        ready = [h for h in self.heads() if h.visible_at <= now][:most]
        for held in ready:
            held.received, held.visible_at = True, now + VISIBILITY
        return ready

    def in_flight(self, prefix: str) -> int:
        now = self.clock.seconds
        return sum(
            1
            for h in self.held
            if h.group.startswith(prefix) and not h.deleted and h.received and h.visible_at > now
        )

    def next_visible(self) -> float | None:
        """When a head next becomes available (None: the queue is empty)."""
        pending = [h.visible_at for h in self.heads()]
        return min(pending) if pending else None

    def done(self, receipt: str) -> None:
        self.held[int(receipt)].deleted = True

    def retry_in(self, receipt: str, seconds: int) -> None:
        self.held[int(receipt)].visible_at = self.clock.seconds + seconds

    def release(self, receipts: list[str]) -> None:
        for receipt in receipts:
            self.held[int(receipt)].visible_at = self.clock.seconds


def delivery(caller: Caller, webhook: str, incident: str, seq: int) -> DeliveryMessage:
    return DeliveryMessage(
        account_id=caller.account_id, webhook_id=webhook, event_id=new_id("evt"),
        type=EventType.NOTE_ADDED, incident_id=incident, seq=seq,
        happened_at="2026-11-25T00:00:00.000000Z", body="{}",
    )  # fmt: skip


def run(queue: FifoModel, clock: SimClock, until: float, watched: str) -> int:
    """Drive the real handler until nothing is left or `until`; the most messages of the
    `watched` webhook ever in flight at once."""
    most = 0
    while clock.seconds < until:
        batch = queue.receive()
        if not batch:
            upcoming = queue.next_visible()
            if upcoming is None:
                break
            clock.seconds = max(clock.seconds, upcoming)
            continue
        for held in batch:
            record = SQSRecord({"messageId": str(held.number), "receiptHandle": str(held.number),
                                "body": held.body, "attributes": {}})  # fmt: skip
            context: Any = SimContext(clock=clock, began=clock.seconds)
            try:
                handler_module.handle(record, context, received_at=clock.seconds)
            except handler_module.RetryLaterError:
                continue
            queue.done(str(held.number))  # the event source mapping deletes what succeeded
        most = max(most, queue.in_flight(watched))
        clock.seconds += 0.5
    return most


@dataclasses.dataclass
class Harness:
    """Two accounts' webhooks (one endpoint failing until `failing_for`) behind the model
    queue, the real handler and sender, on a simulated clock."""

    clock: SimClock
    store: Store
    queue: FifoModel
    sending: Sender
    failing: Caller
    failing_id: str
    healthy: Caller
    healthy_id: str
    delivered: dict[str, list[tuple[str, int]]]
    attempted: list[str]
    events: dict[str, DeliveryMessage]

    def enqueue(self, messages: list[DeliveryMessage]) -> None:
        self.events.update((message.event_id, message) for message in messages)
        self.queue.send(messages)


@pytest.fixture
def harness(store: Store, monkeypatch: pytest.MonkeyPatch) -> Harness:
    clock = SimClock()
    timed = dataclasses.replace(store, clock=clock.now)
    policy = EndpointPolicy(allow_loopback=True)
    failing, healthy = (Caller(new_id("acct"), new_id("user")) for _ in "ab")
    failing_id = create_webhook(timed, failing, NewWebhook(url="http://127.0.0.1:9/f"), policy).id
    healthy_id = create_webhook(timed, healthy, NewWebhook(url="http://127.0.0.1:9/h"), policy).id
    delivered: dict[str, list[tuple[str, int]]] = defaultdict(list)
    attempted: list[str] = []
    events: dict[str, DeliveryMessage] = {}

    def endpoint(url: str, body: bytes, headers: dict[str, str], _: Any) -> Outcome:
        clock.seconds += 0.05
        sent = events[headers["webhook-id"]]
        attempted.append(str(sent.incident_id))
        if url.endswith("/f") and clock.seconds < FAILING_FOR:
            return Outcome(503, None, 50)
        delivered[sent.webhook_id].append((str(sent.incident_id), int(sent.seq or 0)))
        return Outcome(204, None, 50)

    sending = Sender(timed, policy, poster=endpoint, rng=random.Random(3))
    queue = FifoModel(clock)
    monkeypatch.setattr(handler_module, "sender", lambda: sending)
    monkeypatch.setattr(handler_module, "delivery_queue", lambda: queue)
    monkeypatch.setattr(handler_module, "store", lambda: timed)
    monkeypatch.setattr(handler_module, "clock", clock.monotonic)
    return Harness(clock, timed, queue, sending, failing, failing_id, healthy, healthy_id,
                   delivered, attempted, events)  # fmt: skip


@pytest.mark.parametrize("with_circuit", [True, False], ids=["circuit", "no circuit"])
def test_a_failing_endpoint_holds_a_constant_number_in_flight_and_loses_nothing(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, with_circuit: bool
) -> None:
    if not with_circuit:
        monkeypatch.setattr("incidents.events_out.sender.parks", lambda *_: False)
    h = harness
    incidents = [new_id("inc") for _ in range(INCIDENTS)]
    for seq in (1, 2):
        h.enqueue([delivery(h.failing, h.failing_id, i, seq) for i in incidents])
    h.enqueue([delivery(h.healthy, h.healthy_id, new_id("inc"), 1) for _ in range(50)])
    most = run(h.queue, h.clock, 12 * 3600, h.failing_id)

    print(f"circuit={with_circuit}: at most {most} of the failing endpoint's messages in flight")
    assert len(h.delivered[h.healthy_id]) == 50, "the other account's deliveries flowed"
    if not with_circuit:
        assert most >= INCIDENTS / 2, "the model shows the cost the circuit removes"
        return
    assert most <= 2, most
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
    most = run(h.queue, h.clock, 600, h.failing_id)
    probes = list(dict.fromkeys(h.attempted))
    assert most <= 1
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
    queue: Any = h.queue  # the model, where the code takes SQS
    circuit.drain(h.store, queue, job)
    assert [json.loads(held.body)["kind"] for held in h.queue.held] == ["drain"], "none sent"
    circuit.drain(h.store, queue, job.model_copy(update={"page": 2}))
    hook = load_webhook(h.store, h.failing.account_id, h.failing_id)
    assert hook is not None
    assert hook.parked == 0


def test_a_test_delivery_is_never_parked_and_its_success_closes_the_circuit(
    harness: Harness,
) -> None:
    h = harness
    h.enqueue([delivery(h.failing, h.failing_id, new_id("inc"), 1) for _ in range(3)])
    run(h.queue, h.clock, 60, h.failing_id)  # failing: one probes, two are parked
    h.clock.seconds = FAILING_FOR  # the endpoint is fixed
    test = delivery(h.failing, h.failing_id, new_id("inc"), 1).model_copy(
        update={"type": "webhook.test", "incident_id": None, "seq": None}
    )
    h.enqueue([test])
    run(h.queue, h.clock, FAILING_FOR + 60, h.failing_id)
    assert ("None", 0) in h.delivered[h.failing_id], "the test delivery went out at once"
    assert len(h.delivered[h.failing_id]) == 4, "and the parked ones followed it"


def test_after_a_probe_given_up_the_next_failing_delivery_probes(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing parked when the probe is given up: the next delivery to fail takes over, so
    the ones after it are parked again rather than each waiting in flight."""
    monkeypatch.setattr(harness.sending, "delays", (5, 5))
    h = harness
    h.enqueue([delivery(h.failing, h.failing_id, new_id("inc"), 1)])
    run(h.queue, h.clock, 120, h.failing_id)
    given_up = load_webhook(h.store, h.failing.account_id, h.failing_id)
    assert given_up is not None
    assert (given_up.failing_since is not None, given_up.probe) == (True, None)
    h.enqueue([delivery(h.failing, h.failing_id, new_id("inc"), 1) for _ in range(5)])
    most = run(h.queue, h.clock, h.clock.seconds + 3, h.failing_id)  # before any retry
    assert most <= 1
    taken_over = load_webhook(h.store, h.failing.account_id, h.failing_id)
    assert taken_over is not None
    assert taken_over.probe is not None
    assert len(set(h.attempted)) == 2, "the given-up incident, then the one now probing"
    most = run(h.queue, h.clock, 600, h.failing_id)
    assert most <= 1
    assert len(set(h.attempted)) == 6, "each parked one probed in turn, none lost"
