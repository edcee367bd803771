"""The stream's failed batches, published again: the publisher's event source mapping gives a
batch up after its retries and sends where it was to the stream-failures queue; this reads
its records back from the stream (kept 24 hours) and publishes them in order, skipping what
already went out. A batch it cannot publish stays in the queue for its retries, then goes
to the dead-letter queue, whose alarm asks for a replay from the timeline (docs "Events
and webhooks": when a part dies).
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from incidents.events_out.failed_batches import batch_records, failed_batch
from lambdas.publisher import publish_batch
from lambdas.runtime import logger, metrics, streams, tracer


class RepublishFailedError(Exception):
    """A record of the batch failed again: the message is retried from the queue."""


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    """Failed batches, one message each; those not recovered are reported failed."""

    def recover(record: SQSRecord) -> None:
        batch = failed_batch(record.body)
        records = batch_records(streams(), batch)
        failures = publish_batch({"Records": records}, context)["batchItemFailures"]
        if failures:
            raise RepublishFailedError(
                f"batch {batch.first}-{batch.last}: publishing failed from record "
                f"{failures[0]['itemIdentifier']}"
            )
        logger.info(
            "failed stream batch published again",
            extra={"shard": batch.shard_id, "first": batch.first, "records": len(records)},
        )
        metrics.add_metric(name="StreamBatchesRecovered", unit=MetricUnit.Count, value=1)

    processor = BatchProcessor(event_type=EventType.SQS)
    processor.raise_on_entire_batch_failure = False
    return process_partial_response(
        event=event, record_handler=recover, processor=processor, context=context
    )
