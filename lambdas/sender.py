"""The delivery queue's consumer: each message is one attempt to one webhook (or a page of
a replay, or of a failing endpoint's parked deliveries: `incidents.events_out.circuit`).
A batch's message groups (webhook and incident) run side by side, each in order, so a slow
or failing endpoint holds up only its own groups; within a group the first failure stops
the group (Powertools' FIFO batch processor) and its retry waits in the queue for as long
as the schedule says (the message's visibility timeout).

An attempt starts only while the invocation has the time for a whole one left (its 10 s
deadline and `MARGIN_SECONDS` to log it and answer): the messages it cannot try go back to
the queue untried at once, so a batch of slow endpoints never runs past the function's
timeout (which would redeliver the whole batch after the visibility timeout)."""

from __future__ import annotations

import contextvars
import functools
import math
import os
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from typing import Any

import boto3
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import (
    SqsFifoPartialProcessor,
    process_partial_response,
)
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext
from botocore.config import Config

from incidents.contacts.models import Channel
from incidents.events_out.circuit import drain
from incidents.events_out.delivery_messages import (
    CodeJob,
    DrainJob,
    NotificationJob,
    ReplayJob,
    parse_message,
)
from incidents.events_out.endpoints import TIMEOUT_SECONDS
from incidents.events_out.replay import run_replay_page
from incidents.events_out.sender import Attempted, Sender
from incidents.notifications.channels import (
    Carrier,
    Carriers,
    EndUserMessaging,
    SesEmail,
    SlackWebhook,
)
from incidents.notifications.codes import send_code
from incidents.notifications.delivery import Outcome, deliver
from incidents.notifications.links import Links
from incidents.notifications.spend import SpendCap
from lambdas.runtime import (
    client_settings,
    cursor_secret,
    delivery_queue,
    endpoint_policy,
    logger,
    metrics,
    store,
    store_without_cursors,
    tracer,
)
from lambdas.settings import (
    PAGE_EMAIL_CONFIGURATION_SET,
    PAGE_EMAIL_SENDER,
    PAGE_ORIGINATION_IDENTITY,
    PAGE_SMS_CONFIGURATION_SET,
    PUBLIC_API_URL,
    spend_caps,
)

MAX_PARALLEL_GROUPS = 10
VISIBILITY_LIMIT_SECONDS = 43_200
"""SQS: a message may be kept hidden at most 12 hours from its receive, in all."""
HOP_MARGIN_SECONDS = 60
"""Kept below that limit: the receive happened before the invocation started."""
clock = time.monotonic
"""Seconds for the visibility arithmetic (the schedule's simulation drives its own)."""
MARGIN_SECONDS = 5.0
"""Beyond an attempt's deadline: logging it, the queue calls, the batch's answer."""


class RetryLaterError(Exception):
    """The attempt failed; the message comes back when its next attempt is due."""


class NotTriedError(Exception):
    """No time left in this invocation for a whole attempt: the message is back, untried."""


@functools.cache
def sender() -> Sender:
    """The container's sender."""
    return Sender(store(), endpoint_policy())


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    """One batch: its groups side by side, each in order; the failures of all groups."""
    received_at = clock()  # the batch was received just before the invocation
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in event["Records"]:
        groups[record["attributes"].get("MessageGroupId", "")].append(record)
    with ThreadPoolExecutor(min(len(groups), MAX_PARALLEL_GROUPS) or 1) as pool:
        # Each group in a copy of this context (the logger's keys, the tracer's segment).
        running = [
            pool.submit(contextvars.copy_context().run, _group, records, context, received_at)
            for records in groups.values()
        ]
        answers = [future.result() for future in running]
    return {"batchItemFailures": [f for answer in answers for f in answer["batchItemFailures"]]}


def _group(
    records: list[dict[str, Any]], context: LambdaContext, received_at: float
) -> PartialItemFailureResponse:
    processor = SqsFifoPartialProcessor()
    processor.raise_on_entire_batch_failure = False  # other groups went on; retry this one
    received = functools.partial(handle, received_at=received_at)
    answer = process_partial_response(
        event={"Records": records}, record_handler=received, processor=processor, context=context
    )
    _release_after_first_failure(records, answer)
    return answer


def _release_after_first_failure(
    records: list[dict[str, Any]], answer: PartialItemFailureResponse
) -> None:
    """The messages of a group after its failed one were not tried: back in the queue now
    (behind the failed one, which waits for its retry), not after the queue's timeout."""
    failed = {failure["itemIdentifier"] for failure in answer["batchItemFailures"]}
    untried = [r["receiptHandle"] for r in records if r["messageId"] in failed][1:]
    if untried:
        delivery_queue().release(untried)


def handle(
    record: SQSRecord, lambda_context: LambdaContext | None = None, received_at: float = 0.0
) -> None:
    """One message: a delivery attempt, or a page of a replay (Powertools passes the
    invocation's context, whose remaining time decides whether an attempt may start;
    `received_at`: when the batch was received, monotonic seconds)."""
    if lambda_context is not None and not _time_for_an_attempt(lambda_context):
        delivery_queue().release([record.receipt_handle])
        raise NotTriedError("too little of the invocation left for a whole attempt")
    message = parse_message(record.body)
    if isinstance(message, NotificationJob):
        outcome = deliver(store(), carriers(), message, page_links())
        _settle(record, outcome, received_at, "Notifications")
        return
    if isinstance(message, CodeJob):
        _settle(record, send_code(store(), carriers(), message), received_at, "Codes")
        return
    if isinstance(message, ReplayJob):
        run_replay_page(store(), delivery_queue(), message)
        return
    if isinstance(message, DrainJob):
        drain(store(), delivery_queue(), message)
        return
    result = sender().deliver(message)
    report(result)
    if result.drain is not None:
        delivery_queue().send([result.drain])
    if result.retry_in is None:
        # Done with it now, not when the whole batch is: its group's next event goes out
        # at once even while another group of this batch waits on a slow endpoint (the
        # event source mapping's own delete of it later is a no-op).
        delivery_queue().done(record.receipt_handle)
        return
    hidden = hide_for(result.retry_in, received_at, clock())
    delivery_queue().retry_in(record.receipt_handle, hidden)
    raise RetryLaterError(f"next attempt in {result.retry_in} s; back in {hidden} s")


def _settle(record: SQSRecord, outcome: Outcome, received_at: float, counted: str) -> None:
    """A message to a person after one try: counted (``NotificationsSent``, ``CodesFailed``…)
    if it settled, deleted unless it is tried again; its retry waits in the queue, as a
    delivery's does."""
    if outcome.status is not None:
        name = f"{counted}{outcome.status.value.title()}"
        metrics.add_metric(name=name, unit=MetricUnit.Count, value=1)
    if outcome.retry_in is None:
        delivery_queue().done(record.receipt_handle)
        return
    delivery_queue().retry_in(
        record.receipt_handle, hide_for(outcome.retry_in, received_at, clock())
    )
    raise RetryLaterError(f"next attempt in {outcome.retry_in} s")


def page_links() -> Links | None:
    """The stage's page links, made with its secret as it is now (none without
    ``PUBLIC_API_URL``: the messages carry no link)."""
    url = os.environ.get(PUBLIC_API_URL)
    return Links.of(url, cursor_secret()) if url else None


@functools.cache
def carriers() -> Carriers:
    """The stage's providers: email through SES v2 from ``PAGE_EMAIL_SENDER``, SMS and calls
    through End User Messaging from ``PAGE_ORIGINATION_IDENTITY`` (each if set), Slack's
    incoming webhooks under the webhooks' address policy. The AWS clients make no retries
    of their own: a retry is the queue's, so a lost answer is not sent twice by the SDK."""
    found: dict[Channel, Carrier] = {Channel.SLACK: SlackWebhook(endpoint_policy())}
    once = client_settings().merge(Config(retries={"total_max_attempts": 1}))
    sender_address = os.environ.get(PAGE_EMAIL_SENDER)
    if sender_address:
        ses = boto3.client("sesv2", config=once)
        email_set = os.environ.get(PAGE_EMAIL_CONFIGURATION_SET) or None
        found[Channel.EMAIL] = SesEmail(ses, sender_address, email_set)
    number = os.environ.get(PAGE_ORIGINATION_IDENTITY)
    if number:
        phone = boto3.client("pinpoint-sms-voice-v2", config=once)
        phone_set = os.environ.get(PAGE_SMS_CONFIGURATION_SET) or None
        for name, cap in spend_caps(os.environ).items():
            channel = Channel(name)
            budget = SpendCap(store_without_cursors(), channel, Decimal(cap))
            found[channel] = EndUserMessaging(phone, channel, number, budget, phone_set)
    return found


def hide_for(wait: int, received_at: float, now: float) -> int:
    """Seconds to hide a message for a `wait`, within what SQS allows: 12 hours from its
    receive (`received_at`, the invocation's start, and `now`: monotonic seconds) in all,
    less `HOP_MARGIN_SECONDS`. A longer wait comes back early and is hidden again (its due
    time is in the table), neither counted as an attempt."""
    allowed = VISIBILITY_LIMIT_SECONDS - math.ceil(now - received_at) - HOP_MARGIN_SECONDS
    return max(0, min(wait, allowed))


def _time_for_an_attempt(context: LambdaContext) -> bool:
    needed = (TIMEOUT_SECONDS + MARGIN_SECONDS) * 1000
    return context.get_remaining_time_in_millis() >= needed


def report(result: Attempted) -> None:
    """Deliveries as metrics: succeeded, retried, given up, endpoints disabled, latency."""
    delivery = result.delivery
    if delivery is None:
        return
    metrics.add_metric(
        name=f"Deliveries{delivery.status.value.title()}", unit=MetricUnit.Count, value=1
    )
    metrics.add_metric(
        name="DeliveryMilliseconds", unit=MetricUnit.Milliseconds, value=delivery.duration_ms
    )
    if result.latency_ms is not None:
        metrics.add_metric(
            name="DeliveryLatency", unit=MetricUnit.Milliseconds, value=result.latency_ms
        )
    if result.disabled:
        metrics.add_metric(name="WebhooksDisabled", unit=MetricUnit.Count, value=1)
