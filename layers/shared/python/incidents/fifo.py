"""Sending to an SQS FIFO queue in order: ``SendMessageBatch``, 10 entries a request, and
the entries SQS refuses sent again with those after them (FIFO deduplication drops what had
arrived), so a message group's messages keep their order."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient
    from mypy_boto3_sqs.type_defs import SendMessageBatchRequestEntryTypeDef

BATCH = 10
"""Entries a ``SendMessageBatch`` takes."""
SEND_ATTEMPTS = 3


def fifo_entry(
    n: int, body: str, group: str, deduplication: str
) -> SendMessageBatchRequestEntryTypeDef:
    """One entry of a batch (`n`: its place in the batch)."""
    return {
        "Id": str(n),
        "MessageBody": body,
        "MessageGroupId": group,
        "MessageDeduplicationId": deduplication,
    }


def send_in_order(
    sqs: SQSClient, url: str, entries: Sequence[SendMessageBatchRequestEntryTypeDef]
) -> None:
    """Send `entries` (at most `BATCH`, ``Id`` their place); an error is raised if some are
    still refused after `SEND_ATTEMPTS`."""
    pending = list(entries)
    for attempt in range(SEND_ATTEMPTS):
        failed = sqs.send_message_batch(QueueUrl=url, Entries=pending).get("Failed", [])
        if not failed:
            return
        # In order: resend from the first refused entry, so a group's messages keep theirs.
        first = min(int(entry["Id"]) for entry in failed)
        pending = [entry for entry in pending if int(entry["Id"]) >= first]
        time.sleep(0.05 * 2**attempt)
    raise RuntimeError(f"SQS refused {len(pending)} messages: {json.dumps(failed)[:300]}")
