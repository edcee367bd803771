"""The retry schedule on the local SQS held to SQS's limits (issue 37, points 3 and 8), on
DynamoDB Local, through the real sender handler over 100 hours of simulated time.

moto's SQS here (`local.events.strict_sqs`) refuses what SQS refuses: a message may be hidden at
most 12 hours from its receive in all (``ChangeMessageVisibility`` past it is SQS's
``InvalidParameterValue``: "Total VisibilityTimeout for the message is beyond the limit
[43200 seconds]"), a message not answered comes back after the queue's visibility timeout,
and receives are counted. The endpoint fails every attempt, each taking 9.5 s. Before, the
sender asked for 43,200 s after an attempt that took time (refused, so the message came
back after 360 s and the delivery was given up long before 72 hours) and numbered
attempts by receives."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from incidents.events_out.delivery_messages import (
    RECEIVES_BEFORE_DEAD_LETTER,
    DeliveryMessage,
    DeliveryQueue,
)
from incidents.events_out.endpoints import EndpointPolicy, Outcome
from incidents.events_out.sender import RETRY_DELAYS, Sender
from incidents.events_out.webhook_models import NewWebhook
from incidents.events_out.webhooks import create_webhook
from incidents.keys import deliveries_partition
from incidents.models import EventType
from incidents.store import Caller, Store, new_id
from lambdas import sender as handler_module
from local.events.sender_simulation import SimClock, SimulatedQueue, invoking, run, simulated_queue
from local.events.strict_sqs import VISIBILITY_LIMIT_SECONDS

pytestmark = pytest.mark.integration
ATTEMPT_SECONDS = 9.5


@dataclasses.dataclass(frozen=True)
class HidesRecorded(DeliveryQueue):
    """The delivery queue, keeping every hide the sender asks for and those SQS refused."""

    hides: list[int] = dataclasses.field(default_factory=list)
    refused: list[str] = dataclasses.field(default_factory=list)

    def retry_in(self, receipt: str, seconds: int) -> None:
        self.hides.append(seconds)
        try:
            super().retry_in(receipt, seconds)
        except ClientError as error:
            self.refused.append(str(error))
            raise


@pytest.fixture
def clock() -> SimClock:
    return SimClock()


@pytest.fixture
def queue(clock: SimClock) -> Iterator[SimulatedQueue]:
    with simulated_queue(clock) as simulated:
        yield simulated


def test_sixteen_attempts_over_72_hours_within_sqs_limits(
    store: Store, clock: SimClock, queue: SimulatedQueue, monkeypatch: pytest.MonkeyPatch
) -> None:
    timed = dataclasses.replace(store, clock=clock.now)
    caller = Caller(new_id("acct"), new_id("user"))
    policy = EndpointPolicy(allow_loopback=True)
    hook = create_webhook(timed, caller, NewWebhook(url="http://127.0.0.1:9/h"), policy).id
    attempts_at: list[float] = []

    def failing(*_: Any) -> Outcome:
        attempts_at.append(clock.seconds)
        clock.seconds += ATTEMPT_SECONDS
        return Outcome(500, None, int(ATTEMPT_SECONDS * 1000))

    recording = HidesRecorded(queue.queue.sqs, queue.queue.url)
    hides = recording.hides
    sending = Sender(timed, policy, poster=failing, rng=random.Random(7))
    monkeypatch.setattr(handler_module, "sender", lambda: sending)
    monkeypatch.setattr(handler_module, "store", lambda: timed)
    monkeypatch.setattr(handler_module, "delivery_queue", lambda: recording)
    monkeypatch.setattr(handler_module, "clock", clock.monotonic)
    message = DeliveryMessage(
        account_id=caller.account_id, webhook_id=hook, event_id=new_id("evt"),
        type=EventType.NOTE_ADDED, incident_id=new_id("inc"), seq=2,
        happened_at=clock.now().isoformat().replace("+00:00", "Z"), body="{}",
    )  # fmt: skip
    queue.queue.send([message])
    run(queue, invoking(handler_module.handler), until=100 * 3600)

    held = queue.held()
    receives = [m.approximate_receive_count for m in held._messages]
    hours = (attempts_at[-1] - attempts_at[0]) / 3600
    logged = timed.query_partition(deliveries_partition(caller.account_id, hook))
    numbers = sorted(int(item["attempt"]["N"]) for item in logged)
    print(f"{len(attempts_at)} attempts over {hours:.1f} h; hides {hides}")
    assert not held._messages, "given up after its last attempt, and deleted"
    assert receives == [], "not dead-lettered"
    assert len(attempts_at) == len(RETRY_DELAYS) + 1 == 16
    assert numbers == list(range(1, 17)), "attempts numbered by the project, each once"
    assert hours >= 72, hours
    assert recording.refused == [], "SQS accepted every hide"
    assert max(hides) <= VISIBILITY_LIMIT_SECONDS
    assert len(hides) < RECEIVES_BEFORE_DEAD_LETTER, "every hide accepted: one a receive"
