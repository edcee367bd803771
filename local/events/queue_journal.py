"""The local queues kept on disk, as SQS keeps them: moto holds its queues in memory, so a
``kill -9`` of ``make dev`` lost every delivery queued and not yet made (the stream's
checkpoint had moved past them). With ``DYNAMODB_DATA_DIR`` the moto server writes its
queues' messages here after every SQS request that changed them, before answering it (a
message SQS acknowledged is on disk), and the next ``make dev`` sends them again in order.

A restored message starts a fresh receive count and comes at once: as after its
visibility timeout, at least once (the project counts attempts itself, in the table).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from moto.sqs.models import sqs_backends

from local.events.event_pipeline import LOCAL_ACCOUNT
from local.events.messaging import REGION

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient
    from mypy_boto3_sqs.type_defs import SendMessageBatchRequestEntryTypeDef

BATCH = 10


@dataclass
class QueueJournal:
    """Every local queue's messages, in order, in one JSON file."""

    path: Path
    _last: str = field(default="", init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _restored: bool = field(default=False, init=False)

    def save(self) -> None:
        """Write the queues' messages if they changed since the last write (atomically);
        nothing before `restore` (the queues being created are still empty)."""
        with self._lock:
            if not self._restored:
                return
            text = json.dumps(_held())
            if text == self._last:
                return
            written = self.path.with_suffix(".tmp")
            written.write_text(text)
            written.replace(self.path)
            self._last = text

    def restore(self, sqs: SQSClient) -> int:
        """Send the journal's messages again to the queues of the same names, then keep
        the journal from now on; how many were sent."""
        saved: dict[str, list[dict[str, str]]] = (
            json.loads(self.path.read_text()) if self.path.exists() else {}
        )
        with self._lock:
            self._restored = True
        for name, messages in saved.items():
            url = sqs.get_queue_url(QueueName=name)["QueueUrl"]
            for start in range(0, len(messages), BATCH):
                entries = [_entry(n, m) for n, m in enumerate(messages[start : start + BATCH])]
                failed = sqs.send_message_batch(QueueUrl=url, Entries=entries).get("Failed")
                if failed:
                    raise RuntimeError(f"{name}: the journal's messages refused: {failed}")
        self.save()
        return sum(len(messages) for messages in saved.values())


def _held() -> dict[str, list[dict[str, str]]]:
    """Each queue's messages as sent, oldest first."""
    queues = sqs_backends[LOCAL_ACCOUNT][REGION].queues
    return {
        name: [_saved(message) for message in queue._messages]
        for name, queue in sorted(queues.items())
        if queue._messages
    }


def _saved(message: Any) -> dict[str, str]:
    kept = {"body": message.body}
    if message.group_id is not None:
        kept["group"] = message.group_id
    if message.deduplication_id is not None:
        kept["deduplication"] = message.deduplication_id
    return kept


def _entry(number: int, message: dict[str, str]) -> SendMessageBatchRequestEntryTypeDef:
    entry: SendMessageBatchRequestEntryTypeDef = {"Id": str(number), "MessageBody": message["body"]}
    if "group" in message:
        entry["MessageGroupId"] = message["group"]
    if "deduplication" in message:
        entry["MessageDeduplicationId"] = message["deduplication"]
    return entry
