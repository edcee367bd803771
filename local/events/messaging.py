"""The delivery queue, the event bus, the pages' email sender and phone number of ``make dev``
and the suites, on moto's server (DynamoDB Local serves none of them) and the End User
Messaging stand-in in front of it, set up as the CDK stack sets up the stage's."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

import boto3

from incidents.events_out.delivery_messages import (
    QUEUE_RETENTION_SECONDS,
    RECEIVES_BEFORE_DEAD_LETTER,
)
from incidents.timers.firing_queue import (
    RECEIVES_BEFORE_DEAD_LETTER as TIMER_RECEIVES_BEFORE_DEAD_LETTER,
)
from lambdas.settings import (
    DELIVERY_QUEUE_URL,
    EVENT_BUS_NAME,
    PAGE_EMAIL_SENDER,
    PAGE_ORIGINATION_IDENTITY,
    TIMER_QUEUE_URL,
    WEBHOOK_ALLOW_LOOPBACK,
)
from local.engines.sms_voice import LOCAL_IDENTITY

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

LOCAL_VISIBILITY_SECONDS = 30
"""A batch the sender never answered comes back after this (the cloud: 6 function
timeouts, as Lambda asks of a queue it consumes)."""
REGION = "us-east-1"
PAGE_SENDER = "pages@incidents.example"
"""What ``make dev`` emails pages from, an identity of moto's SES v2 (which keeps every
message it is sent, delivering none)."""


@dataclass(frozen=True)
class Messaging:
    """Where the local queue and bus are."""

    endpoint: str
    queue_url: str
    dead_letter_url: str
    bus_name: str
    timer_queue_url: str

    def environment(self) -> dict[str, str]:
        """What the handlers need to reach them (boto3 reads ``AWS_ENDPOINT_URL_<SERVICE>``),
        and webhooks to this machine allowed (make dev's receivers) unless the environment
        already says ``WEBHOOK_ALLOW_LOOPBACK=0``."""
        return {
            "AWS_ENDPOINT_URL_SQS": self.endpoint,
            "AWS_ENDPOINT_URL_EVENTBRIDGE": self.endpoint,
            "AWS_ENDPOINT_URL_SESV2": self.endpoint,
            "AWS_ENDPOINT_URL_PINPOINT_SMS_VOICE_V2": self.endpoint,  # the stand-in in front
            PAGE_EMAIL_SENDER: PAGE_SENDER,
            PAGE_ORIGINATION_IDENTITY: LOCAL_IDENTITY,
            DELIVERY_QUEUE_URL: self.queue_url,
            EVENT_BUS_NAME: self.bus_name,
            TIMER_QUEUE_URL: self.timer_queue_url,
            WEBHOOK_ALLOW_LOOPBACK: os.environ.get(WEBHOOK_ALLOW_LOOPBACK) or "1",
        }


def create_messaging(
    endpoint: str, name: str = "incidents-local", visibility: int = LOCAL_VISIBILITY_SECONDS
) -> Messaging:
    """The FIFO delivery queue and the timers' firing queue, each with its dead-letter
    queue, and the event bus (`visibility`: seconds before a message received and not
    answered comes back)."""
    sqs = boto3.client("sqs", endpoint_url=endpoint, region_name=REGION)
    queue, dead = _fifo_queue(sqs, f"{name}-deliveries", visibility, RECEIVES_BEFORE_DEAD_LETTER)
    timers, _ = _fifo_queue(sqs, f"{name}-timers", visibility, TIMER_RECEIVES_BEFORE_DEAD_LETTER)
    events = boto3.client("events", endpoint_url=endpoint, region_name=REGION)
    events.create_event_bus(Name=name)
    ses = boto3.client("sesv2", endpoint_url=endpoint, region_name=REGION)
    ses.create_email_identity(EmailIdentity=PAGE_SENDER)
    return Messaging(endpoint, queue, dead, name, timers)


def _fifo_queue(sqs: SQSClient, name: str, visibility: int, receives: int) -> tuple[str, str]:
    """A FIFO queue and its dead-letter queue (their URLs), as the stage's."""
    dead = sqs.create_queue(
        QueueName=f"{name}-dlq.fifo",
        Attributes={"FifoQueue": "true", "MessageRetentionPeriod": str(QUEUE_RETENTION_SECONDS)},
    )["QueueUrl"]
    dead_arn = sqs.get_queue_attributes(QueueUrl=dead, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    redrive = json.dumps({"deadLetterTargetArn": dead_arn, "maxReceiveCount": str(receives)})
    queue = sqs.create_queue(
        QueueName=f"{name}.fifo",
        Attributes={
            "FifoQueue": "true",
            "VisibilityTimeout": str(visibility),
            "MessageRetentionPeriod": str(QUEUE_RETENTION_SECONDS),
            "RedrivePolicy": redrive,
        },
    )["QueueUrl"]
    return queue, dead
