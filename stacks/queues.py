"""Queues: encrypted, refusing plain HTTP, kept 14 days."""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from incidents.events_out.delivery_messages import QUEUE_RETENTION_SECONDS

RETENTION = Duration.seconds(QUEUE_RETENTION_SECONDS)


def encrypted_queue(
    scope: Construct,
    name: str,
    *,
    fifo: bool,
    removal: RemovalPolicy,
    consumer: tuple[Duration, sqs.IQueue, int] | None = None,
    high_throughput: bool = False,
) -> sqs.Queue:
    """An encrypted queue that refuses plain HTTP, kept 14 days, removed (or retained: a
    queue holds deliveries not yet made) as the stage's other stateful resources are. With
    a `consumer` (its function's timeout, a dead-letter queue and the receives before it):
    a visibility of 6 timeouts, as Lambda asks of a queue it consumes, and that redrive.
    `high_throughput`: a FIFO queue's quotas per message group, not per queue (its
    deduplication per group too)."""
    visibility_timeout, dead_letter_queue = None, None
    if consumer is not None:
        timeout, dead_letters, receives = consumer
        visibility_timeout = Duration.seconds(6 * timeout.to_seconds())
        dead_letter_queue = sqs.DeadLetterQueue(max_receive_count=receives, queue=dead_letters)
    return sqs.Queue(
        scope,
        name,
        fifo=fifo or None,
        retention_period=RETENTION,
        encryption=sqs.QueueEncryption.SQS_MANAGED,
        enforce_ssl=True,
        visibility_timeout=visibility_timeout,
        dead_letter_queue=dead_letter_queue,
        removal_policy=removal,
        deduplication_scope=sqs.DeduplicationScope.MESSAGE_GROUP if high_throughput else None,
        fifo_throughput_limit=(
            sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID if high_throughput else None
        ),
    )
