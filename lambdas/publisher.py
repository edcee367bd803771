"""The table stream's consumer: each new timeline event to the stage's EventBridge bus and
to the delivery queue of every webhook of its account that wants it; each new page's
notifications decided (by the incident's urgency), and each notification decided and each
new verification code to the delivery queue, to be sent.

Records are published one by one in the stream's order; after the first that fails, the
rest of the batch is reported failed without being tried, so the stream retries from that
record and an incident's events never overtake each other (Powertools' batch utility
reports the partial failure).
"""

from __future__ import annotations

import functools
import os
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit, single_metric
from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from incidents.events_out.delivery_messages import NotificationJob
from incidents.events_out.outbox import BatchReads, Publisher, from_stream
from incidents.insights.figures import Figure, Measure
from incidents.items import from_item
from incidents.notifications.codes import code_job, is_code_message
from incidents.notifications.decisions import (
    Notification,
    decide_notifications,
    is_notification_insert,
    is_page_insert,
)
from incidents.notifications.logged import is_settled_notification, log_notification, log_page
from lambdas.runtime import (
    delivery_queue,
    eventbridge,
    logger,
    metrics,
    store_without_cursors,
    tracer,
)
from lambdas.settings import EVENT_BUS_NAME


class EarlierRecordFailedError(Exception):
    """Not tried: a record before it in the batch failed (the stream retries from there)."""


@functools.cache
def publisher() -> Publisher:
    """The container's publisher."""
    return Publisher(
        store=store_without_cursors(),
        queue=delivery_queue(),
        events=eventbridge(),
        bus_name=os.environ[EVENT_BUS_NAME],
    )


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    """One stream batch; the answer names the first record that failed, if one did."""
    return publish_batch(event, context)


FIGURE_METRICS = {
    Measure.OPENED: ("IncidentsOpened", MetricUnit.Count),
    Measure.ACKNOWLEDGED: ("SecondsToFirstAck", MetricUnit.Seconds),
    Measure.RESOLVED: ("SecondsToResolve", MetricUnit.Seconds),
}
"""The insights' figures as CloudWatch metrics, by severity only (a team or account
dimension would make a metric per tenant: each is billed)."""


def report_figures(figures: list[Figure]) -> None:
    """Each figure as an EMF metric with the ``severity`` dimension (and ``service``, which
    Powertools adds from ``POWERTOOLS_SERVICE_NAME``)."""
    for figure in figures:
        if figure.measure not in FIGURE_METRICS:
            continue
        name, unit = FIGURE_METRICS[figure.measure]
        value = 1.0 if figure.seconds is None else figure.seconds
        with single_metric(
            name=name, unit=unit, value=value, namespace=metrics.namespace
        ) as metric:
            metric.add_dimension(name="severity", value=figure.severity.value)


def decide_or_log(page: dict[str, Any]) -> None:
    """A page's notifications decided, and the page on its incident's timeline (it was
    paged, whatever is decided); a page that can never be either (an item this code cannot
    read) is logged and counted, not retried: it would hold up every later record of its
    stream shard. Throttling and the table's errors are raised, and retried."""
    try:
        decide_notifications(store_without_cursors(), page)
    except (KeyError, ValueError):  # pydantic's ValidationError is a ValueError
        logger.exception("a page's notifications cannot be decided", extra={"page": page})
        metrics.add_metric(name="PagesUndecidable", unit=MetricUnit.Count, value=1)
    try:
        log_page(store_without_cursors(), page)
    except (KeyError, ValueError):
        logger.exception("a page cannot go on the timeline", extra={"page": page})
        metrics.add_metric(name="PagesUnlogged", unit=MetricUnit.Count, value=1)


def notification_job(image: dict[str, Any]) -> NotificationJob:
    """The delivery queue's message for a notification decided (its item's new image)."""
    notification = from_item(Notification, image)
    return NotificationJob(
        account_id=notification.account_id,
        incident_id=notification.incident_id,
        notification=notification.sort_key,
        contact_method_id=notification.contact_method_id,
    )


def publish_batch(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    """Each record of a stream batch in order, up to the first that fails (also how
    `lambdas.stream_recovery` publishes a batch read back from the stream)."""
    batch = BatchReads()
    failed = False

    def publish(record: DynamoDBRecord) -> None:
        nonlocal failed
        if failed:
            raise EarlierRecordFailedError
        try:
            image = record.raw_event.get("dynamodb", {}).get("NewImage", {})
            if is_page_insert(record.raw_event):
                decide_or_log(image)
                return
            if is_notification_insert(record.raw_event):
                delivery_queue().send([notification_job(image)])
                return
            if is_settled_notification(record.raw_event):
                log_notification(store_without_cursors(), image)
                return
            if is_code_message(record.raw_event):
                delivery_queue().send([code_job(image)])
                return
            item = from_stream(record.raw_event)
            if item is not None:
                report_figures(publisher().publish(item, batch))
                metrics.add_metric(name="EventsPublished", unit=MetricUnit.Count, value=1)
        except Exception:
            failed = True
            logger.exception(
                "publishing failed",
                extra={"sequence": record.dynamodb and record.dynamodb.sequence_number},
            )
            raise

    processor = BatchProcessor(event_type=EventType.DynamoDBStreams)
    processor.raise_on_entire_batch_failure = False  # the answer says what to retry
    return process_partial_response(
        event=event, record_handler=publish, processor=processor, context=context
    )
