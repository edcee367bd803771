"""What goes through the delivery queue (SQS FIFO), and how it is sent there.

A delivery's message group is its webhook and incident: SQS hands out a group's messages one
at a time in the order they were sent, and holds the rest while one is in flight or waiting
for its retry, so an incident's events reach a webhook in order while every other group
(another incident, another webhook) goes on (decision 008). The deduplication id is the
webhook and the event (and the replay, for a replay), so the publisher's retries enqueue an
event once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, Field, TypeAdapter

from incidents.events_out.webhook_models import DeliveryType
from incidents.fifo import BATCH, fifo_entry, send_in_order

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

SENDER_TIMEOUT_SECONDS = 60
"""The sender function's timeout: a batch's attempts stop taking messages while less than
one attempt and a margin is left (`lambdas.sender`), so an invocation never runs past it."""
SENDER_MAX_CONCURRENCY = 20
"""Sender invocations the queue's mapping runs at once (its ``MaximumConcurrency``; ``make
dev`` runs as many): slow endpoints hold at most this many, never the account's whole
concurrency pool, and a slow endpoint's own deliveries at most `endpoint_slots.SLOTS`."""
QUEUE_RETENTION_SECONDS = 14 * 24 * 3600
"""SQS's longest: a message waits out the whole retry schedule (under 90 hours) with room."""
RECEIVES_BEFORE_DEAD_LETTER = 100
"""Receives are not attempts (the project counts those, `incidents.events_out.attempts`): a
message is received for each of its 16 attempts, once more for each 12-hour wait (SQS hides
it at most 12 hours from a receive, the attempt's time counted, so it comes back early and
is hidden again), and as often again while it waits behind a failing message of its group
(received with it, released untried): at most about 50. Only a message the sender cannot
handle at all (it crashes on it) reaches the dead-letter queue; a delivery given up is
logged and deleted."""


class DeliveryMessage(BaseModel):
    """One event for one webhook."""

    kind: Literal["delivery"] = "delivery"
    account_id: str
    webhook_id: str
    event_id: str
    type: DeliveryType
    incident_id: str | None
    seq: int | None
    schedule_id: str | None = None
    """A handoff's schedule (it has no incident)."""
    happened_at: str
    """When the event happened (change-to-delivery latency is measured from it)."""
    body: str
    replay_id: str | None = None
    drained: bool = False
    """Sent back from the webhook's parked deliveries (`circuit`): not parked again for the
    earlier ones still waiting (it is one of them), only if the circuit opens again."""

    def group(self) -> str:
        """The FIFO message group: the webhook and the incident, or the schedule of a
        handoff (a test event: its own, so a test never waits behind an earlier one still
        failing)."""
        subject = self.incident_id or self.schedule_id or "test#" + self.event_id
        return f"{self.webhook_id}#{subject}"

    def deduplication(self) -> str:
        """The same event for the same webhook is enqueued once (per replay, and once more
        when it comes back from parking: SQS would drop it as a repeat within 5 minutes)."""
        again = "drained" if self.drained else "live"
        return f"{self.webhook_id}#{self.event_id}#{self.replay_id or again}"


class ReplayJob(BaseModel):
    """A replay's next page: the account's events from `since` on, for one webhook."""

    kind: Literal["replay"] = "replay"
    account_id: str
    user_id: str
    webhook_id: str
    replay_id: str
    since: str
    cursor: str | None = None
    page: int = 1

    def group(self) -> str:
        """A replay's pages run one after the other."""
        return f"{self.webhook_id}#replay"

    def deduplication(self) -> str:
        """One message a page of one replay."""
        return f"{self.replay_id}#{self.page}"


class DrainJob(BaseModel):
    """A webhook's parked deliveries to move on (`circuit`): back to the queue a page at a
    time once its endpoint answers, or one of them as the next probe."""

    kind: Literal["drain"] = "drain"
    account_id: str
    webhook_id: str
    started: str
    """When this drain was asked for (two asks within SQS's 5-minute deduplication are one)."""
    page: int = 1

    def group(self) -> str:
        """A webhook's drain pages run one after the other."""
        return f"{self.webhook_id}#drain"

    def deduplication(self) -> str:
        """One message a page of one drain."""
        return f"{self.webhook_id}#drain#{self.started}#{self.page}"


class ToContactMethod(BaseModel):
    """A message to one contact method: its messages go one after the other, in order (a
    person reads them in the order they were decided, and a slow provider holds only its
    own); the same one is enqueued once (its record retried enqueues it again)."""

    account_id: str
    contact_method_id: str

    def group(self) -> str:
        """The method's FIFO message group."""
        return f"{self.contact_method_id}#notify"

    def deduplication(self) -> str:
        """`_identity`, hashed (SQS takes 128 characters at most)."""
        return hashlib.sha256(self._identity().encode()).hexdigest()

    def _identity(self) -> str:
        raise NotImplementedError


class NotificationJob(ToContactMethod):
    """One notification of a page to send (`incidents.notifications.delivery`)."""

    kind: Literal["notification"] = "notification"
    incident_id: str
    notification: str
    """The notification's sort key in the incident's partition."""

    def _identity(self) -> str:
        return f"{self.incident_id}#{self.notification}"


class CodeJob(ToContactMethod):
    """A contact method's verification code to send (`incidents.notifications.codes`)."""

    kind: Literal["code"] = "code"
    user_id: str
    expires_at: str
    """Which code: a newer one takes the message's place, and this job then sends nothing."""

    def _identity(self) -> str:
        return f"{self.contact_method_id}#{self.expires_at}"


Message = DeliveryMessage | ReplayJob | DrainJob | NotificationJob | CodeJob
QueueMessage = Annotated[Message, Field(discriminator="kind")]
_messages: TypeAdapter[Message] = TypeAdapter(QueueMessage)


def parse_message(body: str) -> Message:
    """A queue message's body as the message it carries."""
    return _messages.validate_json(body)


@dataclass(frozen=True)
class DeliveryQueue:
    """The delivery queue: its client and URL."""

    sqs: SQSClient
    url: str

    def send(self, messages: Sequence[Message]) -> None:
        """Enqueue `messages` in order (``SendMessageBatch``, 10 a request); entries SQS
        refuses are sent again (with those after them: FIFO deduplication drops what had
        arrived), and an error is raised if some still fail."""
        for start in range(0, len(messages), BATCH):
            chunk = messages[start : start + BATCH]
            entries = [
                fifo_entry(n, message.model_dump_json(), message.group(), message.deduplication())
                for n, message in enumerate(chunk)
            ]
            send_in_order(self.sqs, self.url, entries)

    def done(self, receipt: str) -> None:
        """Delete a message now: its group's next message is free to go."""
        self.sqs.delete_message(QueueUrl=self.url, ReceiptHandle=receipt)

    def retry_in(self, receipt: str, seconds: int) -> None:
        """Keep a message (and so its group) back for `seconds`: its next attempt."""
        self.sqs.change_message_visibility(
            QueueUrl=self.url, ReceiptHandle=receipt, VisibilityTimeout=seconds
        )

    def release(self, receipts: Sequence[str]) -> None:
        """Messages received and not tried: visible again at once (up to 10)."""
        self.sqs.change_message_visibility_batch(
            QueueUrl=self.url,
            Entries=[
                {"Id": str(n), "ReceiptHandle": receipt, "VisibilityTimeout": 0}
                for n, receipt in enumerate(receipts)
            ],
        )
