"""Stream batches the publisher's event source mapping gave up on, read back from the
stream. The mapping's on-failure destination receives only where a batch was (its shard and
first and last sequence numbers), not its records; the stream keeps them for 24 hours, so
within that window the batch can be read again and published (the publisher skips what
already went out: `incidents.events_out.publish_order`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from mypy_boto3_dynamodbstreams import DynamoDBStreamsClient

STREAM_RETENTION_HOURS = 24
EMPTY_PAGES = 3
"""Empty pages read in a row before a batch's last record counts as gone: a stream page can
be empty with records after it, a batch that failed minutes ago has all of its records."""


class BatchExpiredError(Exception):
    """The stream no longer holds the batch (older than 24 hours, or the stream is gone)."""


class StreamBatch(BaseModel):
    """Where a failed batch is in the stream (``DDBStreamBatchInfo`` of Lambda's
    on-failure record for a DynamoDB stream)."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore")

    stream_arn: str = Field(alias="streamArn")
    shard_id: str = Field(alias="shardId")
    first: str = Field(alias="startSequenceNumber")
    last: str = Field(alias="endSequenceNumber")
    size: int = Field(alias="batchSize")


class FailedBatch(BaseModel):
    """Lambda's on-failure record for a stream batch (the fields read here)."""

    model_config = ConfigDict(extra="ignore")

    batch: StreamBatch = Field(alias="DDBStreamBatchInfo")


def failed_batch(body: str) -> StreamBatch:
    """The batch an on-failure record names (pydantic's ValidationError if it names none)."""
    return FailedBatch.model_validate_json(body).batch


def batch_records(streams: DynamoDBStreamsClient, batch: StreamBatch) -> list[dict[str, Any]]:
    """The batch's records, from its first sequence number to its last, as the mapping
    hands them to a function (with ``eventSourceARN``)."""
    iterator: str | None = _iterator(streams, batch)
    records: list[dict[str, Any]] = []
    empty, last = 0, int(batch.last)
    while iterator and empty < EMPTY_PAGES:
        page = streams.get_records(ShardIterator=iterator)
        for record in page["Records"]:
            if int(record["dynamodb"]["SequenceNumber"]) > last:
                return records
            records.append({**record, "eventSourceARN": batch.stream_arn})
        empty = 0 if page["Records"] else empty + 1
        iterator = page.get("NextShardIterator")
    if not records:
        raise BatchExpiredError(f"the stream holds none of batch {batch.first}-{batch.last}")
    return records


def _iterator(streams: DynamoDBStreamsClient, batch: StreamBatch) -> str:
    try:
        return streams.get_shard_iterator(
            StreamArn=batch.stream_arn,
            ShardId=batch.shard_id,
            ShardIteratorType="AT_SEQUENCE_NUMBER",
            SequenceNumber=batch.first,
        )["ShardIterator"]
    except (
        streams.exceptions.TrimmedDataAccessException,
        streams.exceptions.ResourceNotFoundException,
    ) as error:
        raise BatchExpiredError(
            f"batch {batch.first}-{batch.last} of {batch.shard_id} is no longer in the stream "
            f"(it keeps records {STREAM_RETENTION_HOURS} hours): replay its window from the "
            "timeline"
        ) from error
