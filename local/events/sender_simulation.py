"""Hours of webhook deliveries in seconds: the real sender handler on moto's SQS (held to
SQS's limits by `local.events.strict_sqs`), with the queue's clock, the table's clock and the
invocation's remaining time all on one simulated clock. The retry schedule's and the
endpoint circuit's tests and the isolation bench run on it."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any
from unittest.mock import patch

import boto3
from moto.sqs import models as sqs_models
from moto.sqs.models import Queue, sqs_backends

from incidents.events_out.delivery_messages import SENDER_TIMEOUT_SECONDS, DeliveryQueue
from incidents.events_out.sender import Health, Sender
from local.api.proxy_events import LocalLambdaContext
from local.engines.moto_server import moto_server
from local.events.event_pipeline import LOCAL_ACCOUNT, sqs_record
from local.events.messaging import REGION, create_messaging
from local.events.strict_sqs import in_flight

QUEUE_VISIBILITY = 6 * SENDER_TIMEOUT_SECONDS
"""The stage's queue: a batch never answered comes back after 6 function timeouts."""
START = datetime(2026, 11, 25, tzinfo=UTC)


class SimClock:
    """Simulated seconds since `START`."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def now(self) -> datetime:
        """The instant, for the table's records."""
        return START + timedelta(seconds=self.seconds)

    def monotonic(self) -> float:
        """Seconds, for the sender's visibility arithmetic."""
        return self.seconds

    def millis(self) -> float:
        """The instant in epoch milliseconds, moto's SQS clock."""
        return START.timestamp() * 1000 + self.seconds * 1000


@dataclasses.dataclass
class SimContext(LocalLambdaContext):
    """A sender invocation's context whose remaining time follows the simulated clock."""

    clock: SimClock = dataclasses.field(default_factory=SimClock)
    began: float = 0.0
    timeout_seconds: float = SENDER_TIMEOUT_SECONDS

    def get_remaining_time_in_millis(self) -> int:
        """Milliseconds left of the invocation, in simulated time."""
        return max(0, int((self.timeout_seconds - (self.clock.seconds - self.began)) * 1000))


@dataclasses.dataclass
class SimulatedQueue:
    """The delivery queue on moto, received from as the event source mapping does."""

    clock: SimClock
    queue: DeliveryQueue

    def held(self) -> Queue:
        """moto's own queue object (in this process), to look inside."""
        name = self.queue.url.rsplit("/", 1)[-1]
        return sqs_backends[LOCAL_ACCOUNT][REGION].queues[name]

    def receive(self, most: int = 10) -> list[dict[str, Any]]:
        """One receive, as records the way the mapping hands them to the sender."""
        messages = self.queue.sqs.receive_message(
            QueueUrl=self.queue.url, MaxNumberOfMessages=most,
            MessageSystemAttributeNames=["All"], WaitTimeSeconds=0,
        ).get("Messages", [])  # fmt: skip
        return [sqs_record(dict(message), self.queue.url) for message in messages]

    def delete(self, records: list[dict[str, Any]]) -> None:
        """What the mapping does with the records a batch did not report failed."""
        for record in records:
            self.queue.done(record["receiptHandle"])

    def in_flight(self, group_prefix: str = "") -> int:
        """Messages received and hidden, of the groups starting with `group_prefix`."""
        return in_flight(self.held(), group_prefix)

    def wait(self) -> bool:
        """Move the clock to the next instant a hidden message shows again; False when no
        message is hidden (nothing will change by waiting)."""
        now = self.clock.millis()
        upcoming = [m.visible_at for m in self.held()._messages if m.visible_at >= now]
        if not upcoming:
            return False
        self.clock.seconds += (min(upcoming) - now) / 1000 + 0.001
        return True


@contextmanager
def simulated_queue(clock: SimClock) -> Iterator[SimulatedQueue]:
    """A delivery queue set up as the stage's, on moto in this process, its clock `clock`
    (named afresh: moto's backend lives as long as the process)."""
    name = f"simulated-{uuid.uuid4().hex[:12]}"
    saved = (sqs_models.unix_time_millis, sqs_models.unix_time)  # type: ignore[attr-defined]
    sqs_models.unix_time_millis = lambda *_: clock.millis()  # type: ignore[attr-defined]
    sqs_models.unix_time = lambda *_: clock.millis() / 1000  # type: ignore[attr-defined]
    try:
        with moto_server() as endpoint:
            messaging = create_messaging(endpoint, name, visibility=QUEUE_VISIBILITY)
            sqs = boto3.client(
                "sqs", endpoint_url=endpoint, region_name=REGION,
                aws_access_key_id="local", aws_secret_access_key="local",
            )  # fmt: skip
            yield SimulatedQueue(clock, DeliveryQueue(sqs, messaging.queue_url))
    finally:
        sqs_models.unix_time_millis, sqs_models.unix_time = saved  # type: ignore[attr-defined]


Handle = Callable[[list[dict[str, Any]], SimContext], set[str]]
"""A sender invocation on a batch: the message ids it reports failed."""


def run(
    queue: SimulatedQueue, invoke: Handle, until: float, watched: str = "", step: float = 0.5
) -> int:
    """Receive and invoke until nothing is left or the clock passes `until` (simulated
    seconds); the most messages of the groups starting with `watched` in flight at once."""
    clock, most = queue.clock, 0
    while clock.seconds < until:
        batch = queue.receive()
        if not batch:
            if not queue.wait():
                break
            continue
        failed = invoke(batch, SimContext(clock=clock, began=clock.seconds))
        queue.delete([r for r in batch if r["messageId"] not in failed])
        most = max(most, queue.in_flight(watched))
        clock.seconds += step
    return most


@contextmanager
def without_circuit() -> Iterator[None]:
    """The sender with no endpoint circuit (what it removes, measured): every failing
    delivery waits for its retry in flight, none is parked."""
    health = Sender._health

    def probing(sender: Sender, *args: Any) -> Health:
        verdict = health(sender, *args)
        return Health.PROBING if verdict is Health.BEHIND_PROBE else verdict

    with (
        patch("incidents.events_out.sender.parks", lambda *_: False),
        patch.object(Sender, "_health", probing),
    ):
        yield


def invoking(handler: Callable[[dict[str, Any], Any], Any]) -> Handle:
    """A sender invocation through `handler` (the real one: groups side by side)."""

    def invoke(batch: list[dict[str, Any]], context: SimContext) -> set[str]:
        answer = handler({"Records": batch}, context)
        return {failure["itemIdentifier"] for failure in answer["batchItemFailures"]}

    return invoke
