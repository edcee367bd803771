"""The retry schedule under a strict model of SQS (issue 37, points 3 and 8), on DynamoDB
Local, through the real sender handler over 100 hours of simulated time.

The model enforces what moto does not: a message may be hidden at most 12 hours from its
receive in all (``ChangeMessageVisibility`` past it is SQS's ``InvalidParameterValue``:
"Total VisibilityTimeout for the message is beyond the limit [43200 seconds]"), a message
not answered comes back after the queue's visibility timeout, and receives are counted.
The endpoint fails every attempt, each taking 9.5 s. Before, the sender asked for 43,200 s
after an attempt that took time (refused, so the message came back after 360 s and the
delivery was given up long before 72 hours) and numbered attempts by receives."""

from __future__ import annotations

import dataclasses
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from incidents.events_out.delivery_messages import (
    RECEIVES_BEFORE_DEAD_LETTER,
    SENDER_TIMEOUT_SECONDS,
    DeliveryMessage,
)
from incidents.events_out.endpoints import EndpointPolicy, Outcome
from incidents.events_out.sender import RETRY_DELAYS, Sender
from incidents.events_out.webhook_models import NewWebhook
from incidents.events_out.webhooks import create_webhook
from incidents.keys import deliveries_partition
from incidents.models import EventType
from incidents.store import Caller, Store, new_id
from lambdas import sender as handler_module
from local.api_events import LocalLambdaContext

pytestmark = pytest.mark.integration
LIMIT = 43_200
QUEUE_VISIBILITY = 360
ATTEMPT_SECONDS = 9.5


class SimClock:
    def __init__(self) -> None:
        self.seconds = 0.0
        self.start = datetime(2026, 11, 25, tzinfo=UTC)

    def now(self) -> datetime:
        return self.start + timedelta(seconds=self.seconds)

    def monotonic(self) -> float:
        return self.seconds


class VisibilityLimitError(Exception):
    """SQS's InvalidParameterValue for a total visibility beyond 12 hours."""


class StrictQueue:
    """One FIFO message as SQS keeps it: hidden from a receive, within 12 hours in all."""

    def __init__(self, clock: SimClock) -> None:
        self.clock = clock
        self.visible_at, self.received_at, self.receives = 0.0, 0.0, 0
        self.deleted = False
        self.hides: list[float] = []
        self.sent: list[Any] = []

    def receive(self) -> None:
        self.clock.seconds = max(self.clock.seconds, self.visible_at)
        self.received_at, self.receives = self.clock.seconds, self.receives + 1
        self.visible_at = self.clock.seconds + QUEUE_VISIBILITY

    def retry_in(self, _: str, seconds: int) -> None:
        total = self.clock.seconds - self.received_at + seconds
        if total > LIMIT:
            raise VisibilityLimitError(f"total visibility {total:.0f} s is beyond {LIMIT}")
        self.hides.append(seconds)
        self.visible_at = self.clock.seconds + seconds

    def done(self, _: str) -> None:
        self.deleted = True

    def release(self, _: list[str]) -> None:
        self.visible_at = self.clock.seconds

    def send(self, messages: list[Any]) -> None:
        """Other messages (a drain of the endpoint's parked deliveries): kept, not run."""
        self.sent += messages


@dataclasses.dataclass
class SimContext(LocalLambdaContext):
    """A Lambda context whose remaining time follows the simulated clock."""

    clock: SimClock = dataclasses.field(default_factory=SimClock)
    began: float = 0.0

    def get_remaining_time_in_millis(self) -> int:
        return int((SENDER_TIMEOUT_SECONDS - (self.clock.seconds - self.began)) * 1000)


def record_of(message: DeliveryMessage, receives: int) -> dict[str, Any]:
    return {
        "messageId": "m1", "receiptHandle": f"h{receives}", "body": message.model_dump_json(),
        "attributes": {"MessageGroupId": message.group(),
                       "ApproximateReceiveCount": str(receives)},
        "messageAttributes": {}, "md5OfBody": "", "eventSource": "aws:sqs",
        "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:q.fifo", "awsRegion": "us-east-1",
    }  # fmt: skip


def test_sixteen_attempts_over_72_hours_within_sqs_limits(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = SimClock()
    timed = dataclasses.replace(store, clock=clock.now)
    caller = Caller(new_id("acct"), new_id("user"))
    policy = EndpointPolicy(allow_loopback=True)
    hook = create_webhook(timed, caller, NewWebhook(url="http://127.0.0.1:9/h"), policy).id
    attempts_at: list[float] = []

    def failing(*_: Any) -> Outcome:
        attempts_at.append(clock.seconds)
        clock.seconds += ATTEMPT_SECONDS
        return Outcome(500, None, int(ATTEMPT_SECONDS * 1000))

    queue = StrictQueue(clock)
    sending = Sender(timed, policy, poster=failing, rng=random.Random(7))
    monkeypatch.setattr(handler_module, "sender", lambda: sending)
    monkeypatch.setattr(handler_module, "delivery_queue", lambda: queue)
    monkeypatch.setattr(handler_module, "clock", clock.monotonic)
    message = DeliveryMessage(
        account_id=caller.account_id, webhook_id=hook, event_id=new_id("evt"),
        type=EventType.NOTE_ADDED, incident_id=new_id("inc"), seq=2,
        happened_at=clock.now().isoformat().replace("+00:00", "Z"), body="{}",
    )  # fmt: skip
    while not queue.deleted and clock.seconds < 100 * 3600:
        queue.receive()
        event = {"Records": [record_of(message, queue.receives)]}
        handler_module.handler(event, SimContext(clock=clock, began=clock.seconds))
    hours = (attempts_at[-1] - attempts_at[0]) / 3600
    logged = timed.query_partition(deliveries_partition(caller.account_id, hook))
    numbers = sorted(int(item["attempt"]["N"]) for item in logged)
    print(f"{len(attempts_at)} attempts over {hours:.1f} h; {queue.receives} receives; hides "
          f"{[round(h) for h in queue.hides]}")  # fmt: skip
    assert queue.deleted, "given up after its last attempt, and deleted"
    assert len(attempts_at) == len(RETRY_DELAYS) + 1 == 16
    assert numbers == list(range(1, 17)), "attempts numbered by the project, each once"
    assert hours >= 72, hours
    assert queue.receives <= RECEIVES_BEFORE_DEAD_LETTER
    assert max(queue.hides) <= LIMIT
