"""One Query request against one stream, with retries and cost accounting."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dynashard.capacity import query_read_units
from dynashard.page import PageStats
from dynashard.retry import RetryPolicy
from dynashard.sort_range import SortKeyRange
from dynashard.streams import Item, Stream

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


@dataclass(frozen=True)
class StreamRead:
    """Result of one request: items inside the range, where to continue, and its cost."""

    items: list[Item]
    last_evaluated_key: Item | None
    resume_position: str | None
    items_read: int
    read_units: float
    attempts: int

    def record(self, stats: PageStats) -> None:
        """Add this request's cost to `stats`."""
        stats.requests += 1
        stats.items_read += self.items_read
        stats.read_units += self.read_units
        stats.throttle_retries += self.attempts - 1


def read_stream(
    client: DynamoDBClient,
    retry: RetryPolicy,
    index: int,
    stream: Stream,
    *,
    sort_range: SortKeyRange,
    descending: bool,
    limit: int | None,
    start_key: Item | None = None,
) -> StreamRead:
    """Query `stream` within `sort_range`; items outside it (boundary items) are dropped."""
    request = stream.query_request(sort_range, descending, limit, start_key)
    response: dict[str, Any]
    response, attempts = retry.call(index, lambda: dict(client.query(**request)))
    raw_items: list[Item] = response.get("Items", [])
    last_key: Item | None = response.get("LastEvaluatedKey")
    return StreamRead(
        items=[item for item in raw_items if sort_range.contains(stream.sort_value(item))],
        last_evaluated_key=last_key,
        resume_position=stream.sort_value(last_key) if last_key else None,
        items_read=int(response.get("ScannedCount", len(raw_items))),
        read_units=query_read_units(raw_items, stream.consistent_read),
        attempts=attempts,
    )
