"""Providers' receipts from EventBridge, one event an invocation: SES's events of the pages'
configuration set and End User Messaging's delivery events, each recorded on its message
(`incidents.notifications.receipts`), counted by what came of it."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from incidents.notifications.receipts import receipt_of, record_receipt
from lambdas.runtime import logger, metrics, store_without_cursors, tracer


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> None:
    """One receipt: recorded (``ReceiptsRecorded``), for no message of ours or one settled
    already (``ReceiptsUnmatched``), or saying nothing final (``ReceiptsIgnored``). The
    table's errors are raised: EventBridge tries again, then the dead-letter queue."""
    receipt = receipt_of(event)
    if receipt is None:
        metrics.add_metric(name="ReceiptsIgnored", unit=MetricUnit.Count, value=1)
        return
    recorded = record_receipt(store_without_cursors(), receipt)
    name = "ReceiptsRecorded" if recorded else "ReceiptsUnmatched"
    metrics.add_metric(name=name, unit=MetricUnit.Count, value=1)
