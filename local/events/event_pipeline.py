"""Events out, locally: what Lambda's event source mappings do in the cloud, around the same
publisher and sender handlers (`lambdas.publisher`, `lambdas.sender`).

`StreamPoller` reads DynamoDB Local's stream of the table (its Streams API), keeps the
records the cloud mapping's filter keeps (inserted timeline events), hands them to the
publisher in batches and, as Lambda does with partial batch failures, resumes from the first
record the handler reports failed (a bounded number of times, then logs it and goes on, as
the mapping's on-failure destination would). `QueuePoller` receives the delivery queue (a
FIFO queue on moto's SQS), hands batches to the sender, and deletes what it did not report
failed; a failure stays in the queue until its visibility timeout (the retry schedule) ends.

``python -m local.events.event_pipeline`` runs both until SIGTERM (``make dev`` starts it and
restarts it if it dies), from the environment ``make dev`` gives the handlers. With
``EVENT_PIPELINE_CHECKPOINT`` (a file) the stream poller keeps each shard's last processed
record there and a restart resumes after it, as the cloud mapping resumes from its
checkpoint: what was committed while the pipeline was down still goes out (a shard it has
not seen is read from its start then; only a first start begins at the stream's end).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import boto3

from incidents.events_out.delivery_messages import SENDER_MAX_CONCURRENCY, SENDER_TIMEOUT_SECONDS
from incidents.events_out.outbox import is_timeline_insert
from incidents.notifications.codes import is_code_message
from incidents.notifications.decisions import is_notification_write, is_page_insert
from local.api.call_log import RUNNING, CallFile, CallRecorder
from local.api.proxy_events import LocalLambdaContext
from local.engines.orphans import exit_with_parent

if TYPE_CHECKING:
    from mypy_boto3_dynamodbstreams import DynamoDBStreamsClient
    from mypy_boto3_sqs import SQSClient

Handler = Callable[[dict[str, Any], Any], Any]
logger = logging.getLogger("event_pipeline")
STREAM_BATCH = 100
PUBLISHED = (is_timeline_insert, is_page_insert, is_notification_write, is_code_message)
"""What the publisher is handed of the stream (the event source mapping's filters)."""
STREAM_RETRIES = 10
"""Tries of a failing stream batch before its first failed record is logged and skipped
(the cloud mapping: ``retryAttempts``, then the on-failure queue)."""
QUEUE_BATCH = 10
IDLE_SECONDS = 0.1
"""Pause of a poller that found nothing (what long polling hides in the cloud)."""
CHECKPOINT_FILE = "EVENT_PIPELINE_CHECKPOINT"
"""Where the stream poller keeps each shard's last processed sequence number."""
READY_FILE = "EVENT_PIPELINE_READY_FILE"
"""Where `main` says it has taken its place on the stream (make dev waits for it)."""
SENDERS = SENDER_MAX_CONCURRENCY
"""Sender batches at once, as the stage's mapping runs them (Lambda runs an invocation per
active message group, up to its ``MaximumConcurrency``): a batch waiting on a hanging
endpoint holds one of them."""
REGION = "us-east-1"
LOCAL_ACCOUNT = "123456789012"


@dataclass
class _Shard:
    shard_id: str
    iterator: str | None
    last_sequence: str | None = None
    failures: int = 0


@dataclass
class StreamPoller:
    """DynamoDB Local's stream of one table, into a stream handler, in order."""

    streams: DynamoDBStreamsClient
    stream_arn: str
    handler: Handler
    from_start: bool = False
    """Read the shards there now from their start (tests) or only what comes next."""
    checkpoint: Path | None = None
    """Each shard's last processed record, kept across restarts (`CHECKPOINT_FILE`)."""
    shards: dict[str, _Shard] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._saved: dict[str, str] = {}
        if self.checkpoint is not None and self.checkpoint.exists():
            self._saved = json.loads(self.checkpoint.read_text())
            self.from_start = True  # a shard that appeared while it was down: from its start

    def poll(self) -> int:
        """One pass over every shard; the number of records handed to the handler."""
        self._discover()
        return sum(self._read(shard) for shard in list(self.shards.values()))

    def _discover(self) -> None:
        description = self.streams.describe_stream(StreamArn=self.stream_arn)["StreamDescription"]
        known_before = bool(self.shards) or self.from_start
        for shard in description.get("Shards", []):
            shard_id = shard["ShardId"]
            if shard_id in self.shards:
                continue
            self.shards[shard_id] = _Shard(shard_id, self._start(shard_id, known_before))

    def _start(self, shard_id: str, known_before: bool) -> str:
        """Where a shard is read from: after its checkpoint, its start, or its end."""
        if shard_id in self._saved:
            return self._iterator(
                _Shard(shard_id, None), "AFTER_SEQUENCE_NUMBER", self._saved[shard_id]
            )
        return self.streams.get_shard_iterator(
            StreamArn=self.stream_arn,
            ShardId=shard_id,
            ShardIteratorType="TRIM_HORIZON" if known_before else "LATEST",
        )["ShardIterator"]

    def _read(self, shard: _Shard) -> int:
        if shard.iterator is None:
            return 0
        try:
            response = self.streams.get_records(ShardIterator=shard.iterator, Limit=STREAM_BATCH)
        except self.streams.exceptions.TrimmedDataAccessException:
            shard.iterator = self._resumed(shard)
            return 0
        records = [dict(r) for r in response.get("Records", []) if _after(r, shard.last_sequence)]
        kept = [r for r in records if any(wanted(r) for wanted in PUBLISHED)]
        failed_at = self._invoke(kept) if kept else None
        if failed_at is None:
            shard.iterator, shard.failures = response.get("NextShardIterator"), 0
            if records:
                self._processed(shard, str(response["Records"][-1]["dynamodb"]["SequenceNumber"]))
            return len(kept)
        shard.failures += 1
        if shard.failures > STREAM_RETRIES:
            logger.error("stream record %s given up after %d tries", failed_at, STREAM_RETRIES)
            shard.iterator = self._iterator(shard, "AFTER_SEQUENCE_NUMBER", failed_at)
            shard.failures = 0
            self._processed(shard, failed_at)
        else:
            shard.iterator = self._iterator(shard, "AT_SEQUENCE_NUMBER", failed_at)
            time.sleep(min(2.0, 0.05 * 2**shard.failures))
        return len(kept)

    def _resumed(self, shard: _Shard) -> str:
        """An iterator from the shard's oldest record, for one said to point past it
        (`_read` skips what was handled). DynamoDB Local says so of an iterator taken on an
        empty shard once another table is created; AWS, of records past their 24 hours
        (gone: the stream reads on from the oldest kept, as Lambda's mapping does)."""
        logger.warning("shard %s: its iterator points past its oldest record", shard.shard_id)
        return self.streams.get_shard_iterator(
            StreamArn=self.stream_arn, ShardId=shard.shard_id, ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]

    def _processed(self, shard: _Shard, sequence: str) -> None:
        """`sequence` and what came before it are done: the checkpoint moves (atomically)."""
        shard.last_sequence = self._saved[shard.shard_id] = sequence
        if self.checkpoint is not None:
            written = self.checkpoint.with_suffix(".tmp")
            written.write_text(json.dumps(self._saved))
            written.replace(self.checkpoint)

    def _invoke(self, records: list[dict[str, Any]]) -> str | None:
        """The handler on `records`; the first sequence number to retry from, if any."""
        event = {"Records": [{**r, "eventSourceARN": self.stream_arn} for r in records]}
        running = RUNNING.set("publisher")
        try:
            answer = self.handler(event, LocalLambdaContext())
        except Exception:
            logger.exception("publisher failed on a whole batch")
            return str(records[0]["dynamodb"]["SequenceNumber"])
        finally:
            RUNNING.reset(running)
        failures = [f["itemIdentifier"] for f in (answer or {}).get("batchItemFailures", [])]
        return min(failures, key=int) if failures else None

    def _iterator(self, shard: _Shard, kind: str, sequence: str) -> str:
        return self.streams.get_shard_iterator(
            StreamArn=self.stream_arn,
            ShardId=shard.shard_id,
            ShardIteratorType=kind,  # type: ignore[arg-type]
            SequenceNumber=sequence,
        )["ShardIterator"]


def _after(record: Mapping[str, Any], handled: str | None) -> bool:
    """Whether a shard's `record` comes after the last one `handled`."""
    return handled is None or int(record["dynamodb"]["SequenceNumber"]) > int(handled)


@dataclass
class QueuePoller:
    """A FIFO queue into an SQS handler with partial batch responses, up to `concurrency`
    batches at a time (Lambda runs more invocations while message groups are waiting)."""

    sqs: SQSClient
    queue_url: str
    handler: Handler
    concurrency: int = SENDERS
    name: str = "sender"
    """The function's name (what its calls are recorded as, and its logs say)."""
    timeout_seconds: int = SENDER_TIMEOUT_SECONDS
    _slots: threading.Semaphore = field(init=False)
    _pool: ThreadPoolExecutor = field(init=False)

    def __post_init__(self) -> None:
        self._slots = threading.Semaphore(self.concurrency)
        self._pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix=self.name)

    def poll(self) -> int:
        """One receive, its batch handed to a free invocation slot; the messages received."""
        self._slots.acquire()
        try:
            received = self._receive()
        except Exception:
            self._slots.release()
            raise
        if not received:
            self._slots.release()
            return 0
        self._pool.submit(self._invoke, received)
        return len(received)

    def drain(self) -> int:
        """Batches handed to the handler one after another, in this thread, until a receive
        finds nothing; the messages received (a test's synchronous run)."""
        received, total = self._receive(), 0
        while received:
            total += len(received)
            self._invoke(received, hold=False)
            received = self._receive()
        return total

    def _receive(self) -> list[Any]:
        return self.sqs.receive_message(
            QueueUrl=self.queue_url,
            MaxNumberOfMessages=QUEUE_BATCH,
            MessageSystemAttributeNames=["All"],
            WaitTimeSeconds=0,
        ).get("Messages", [])

    def _invoke(self, received: list[Any], *, hold: bool = True) -> None:
        running = RUNNING.set(self.name)
        try:
            self._answer([sqs_record(dict(message), self.queue_url) for message in received])
        except Exception:
            logger.exception("%s failed on a whole batch", self.name)
        finally:
            RUNNING.reset(running)
            if hold:  # a slot `poll` took
                self._slots.release()

    def _answer(self, records: list[dict[str, Any]]) -> None:
        """The handler on one batch; what it did not report failed is deleted."""
        context = LocalLambdaContext(timeout_seconds=self.timeout_seconds)
        answer = self.handler({"Records": records}, context)
        if context.overran():  # Lambda would have ended it: nothing it did is acknowledged
            logger.error("%s ran past its %d s timeout", self.name, self.timeout_seconds)
            return
        failed = {f["itemIdentifier"] for f in (answer or {}).get("batchItemFailures", [])}
        done: list[Any] = [
            {"Id": str(n), "ReceiptHandle": r["receiptHandle"]}
            for n, r in enumerate(records)
            if r["messageId"] not in failed
        ]
        if done:
            self.sqs.delete_message_batch(QueueUrl=self.queue_url, Entries=done)


def sqs_record(message: dict[str, Any], queue_url: str) -> dict[str, Any]:
    """A received message as the SQS event source mapping hands it to a function."""
    body = message["Body"]
    return {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": body,
        "attributes": message.get("Attributes", {}),
        "messageAttributes": {},
        "md5OfBody": hashlib.md5(body.encode(), usedforsecurity=False).hexdigest(),
        "eventSource": "aws:sqs",
        "eventSourceARN": f"arn:aws:sqs:{REGION}:{LOCAL_ACCOUNT}:" + queue_url.rsplit("/", 1)[-1],
        "awsRegion": REGION,
    }


def run_until(stop: threading.Event, poll: Callable[[], int], name: str) -> None:
    """Poll until `stop`, pausing when there was nothing; an error is logged, not fatal."""
    while not stop.is_set():
        try:
            busy = poll()
        except Exception:
            logger.exception("%s poller failed; going on", name)
            busy = 0
        if not busy:
            stop.wait(IDLE_SECONDS)


@contextmanager
def running(pollers: dict[str, Callable[[], int]]) -> Iterator[threading.Event]:
    """Each poller on its own thread until the block ends."""
    stop = threading.Event()
    threads = [
        threading.Thread(target=run_until, args=(stop, poll, name), name=name, daemon=True)
        for name, poll in pollers.items()
    ]
    for thread in threads:
        thread.start()
    try:
        yield stop
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=30)


def publisher_poller(
    dynamodb_endpoint: str, table_name: str, checkpoint: Path | None = None
) -> Callable[[], int]:
    """The table's stream into the real publisher handler (imported here: its module reads
    the environment), resuming after `checkpoint`'s positions if it holds any."""
    from lambdas import publisher  # noqa: PLC0415 - after the environment is set

    dynamodb = boto3.client("dynamodb", endpoint_url=dynamodb_endpoint, region_name=REGION)
    arn = dynamodb.describe_table(TableName=table_name)["Table"]["LatestStreamArn"]
    streams = boto3.client("dynamodbstreams", endpoint_url=dynamodb_endpoint, region_name=REGION)
    poller = StreamPoller(streams, arn, publisher.handler, checkpoint=checkpoint)
    poller.poll()  # the shards' positions taken now: every change from here on goes out
    return poller.poll


def sender_poller(queue_url: str, senders: int = SENDERS) -> Callable[[], int]:
    """The delivery queue into the real sender handler, up to `senders` batches at once."""
    from lambdas import sender  # noqa: PLC0415 - after the environment is set

    sqs = boto3.client("sqs", region_name=REGION)
    return QueuePoller(sqs, queue_url, sender.handler, senders).poll


def pipeline_pollers(
    dynamodb_endpoint: str, table_name: str, queue_url: str, senders: int = SENDERS
) -> dict[str, Callable[[], int]]:
    """Both pollers: the whole pipeline."""
    return {
        "stream": publisher_poller(dynamodb_endpoint, table_name),
        "queue": sender_poller(queue_url, senders),
    }


def record_calls(recorder: CallRecorder) -> None:
    """Every call of the handlers' clients (DynamoDB, the delivery queue, the bus): the
    least-privilege tests (``AWS_CALL_LOG``, in ``make dev``'s workers and here)."""
    runtime = importlib.import_module("lambdas.runtime")
    for client in (
        runtime.dynamodb(), runtime.delivery_queue().sqs, runtime.eventbridge(),
        runtime.firing_queue().sqs,
    ):  # fmt: skip
        recorder.attach(client)


def main() -> None:
    """Run the pipeline (or one half of it) from ``make dev``'s environment until SIGTERM
    or SIGINT."""
    parser = argparse.ArgumentParser(description="events out, locally")
    parser.add_argument("--only", choices=["publisher", "sender"], help="run one half")
    only = parser.parse_args().only
    exit_with_parent(signal.SIGTERM)
    logging.basicConfig(level=logging.WARNING, format="event pipeline: %(message)s")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    call_log = os.environ.get("AWS_CALL_LOG")
    if call_log:  # the least-privilege tests: which function called what
        record_calls(CallRecorder(os.environ["TABLE_NAME"], lambda: None, CallFile(Path(call_log))))
    pollers: dict[str, Callable[[], int]] = {}
    if only != "sender":
        saved = os.environ.get(CHECKPOINT_FILE)
        pollers["stream"] = publisher_poller(
            os.environ["DYNAMODB_ENDPOINT"],
            os.environ["TABLE_NAME"],
            Path(saved) if saved else None,
        )
    if only != "publisher":
        senders = int(os.environ.get("WEBHOOK_SENDERS", str(SENDERS)))
        pollers["queue"] = sender_poller(os.environ["DELIVERY_QUEUE_URL"], senders)
    with running(pollers):
        if os.environ.get(READY_FILE):
            Path(os.environ[READY_FILE]).touch()
        stop.wait()


if __name__ == "__main__":
    main()
