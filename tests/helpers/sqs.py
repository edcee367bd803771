"""SQS messages as Lambda's event source hands them to a handler."""

from __future__ import annotations

import json
from typing import Any


def fifo_record(n: int, body: dict[str, Any], group: str) -> dict[str, Any]:
    """The `n`-th record of a FIFO batch (message ``m<n>``, receipt ``h<n>``) carrying
    `body` in message group `group`, received once."""
    return {
        "messageId": f"m{n}", "receiptHandle": f"h{n}", "body": json.dumps(body),
        "attributes": {"MessageGroupId": group, "ApproximateReceiveCount": "1"},
        "messageAttributes": {}, "md5OfBody": "", "eventSource": "aws:sqs",
        "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:q.fifo", "awsRegion": "us-east-1",
    }  # fmt: skip
