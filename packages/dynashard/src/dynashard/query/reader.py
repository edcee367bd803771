"""One Query request against one stream, with retries and cost accounting."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from dynashard.limits.retry import RetryPolicy
from dynashard.query.capacity import item_size, read_units_of
from dynashard.query.page import PageStats
from dynashard.query.sort_range import SortKeyRange
from dynashard.query.streams import Item, Stream

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


@dataclass(frozen=True)
class StreamRead:
    """Result of reading a stream once: items inside the range, where to go on, and the cost."""

    items: list[Item]
    last_evaluated_key: Item | None
    resume_position: str | None
    """Sort key to resume after; None when the range has been read to its end."""
    items_read: int
    read_units: float
    """By DynamoDB's rules (`capacity`)."""
    consumed_units: float | None
    """As the engine reported them, each request at least DynamoDB's minimum unit (DynamoDB
    Local reports 0 for a Query that reads nothing; DynamoDB bills it); None when a response
    had no ``ConsumedCapacity``."""
    requests: int
    attempts: int
    largest_item: int = 0
    """Bytes of the largest item the read returned (sized once, for its read units)."""

    def record(self, stats: PageStats) -> None:
        """Add this read's cost to `stats`."""
        stats.requests += self.requests
        stats.items_read += self.items_read
        stats.modelled_read_units += self.read_units
        if self.consumed_units is None:
            stats.every_request_reported = False
        else:
            stats.consumed_read_units += self.consumed_units
        stats.throttle_retries += self.attempts - self.requests


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
    """Query `stream` within `sort_range`; items outside it (boundary items) are dropped.

    A range with an exclusive end is queried with DynamoDB's inclusive ``BETWEEN``, so the
    boundary item itself may come back. At the start (a cursor position) the ``Limit`` gets
    one more for it, so the page needs no second request (it may then hold one item more
    than `limit`); if it still used up the whole ``Limit``, the read goes on from it with
    ``ExclusiveStartKey`` so that every read makes progress. At the far end, nothing of the
    range follows it: the read is over. An empty (inverted) range sends no request.
    """
    raw_items: list[Item] = []
    items_read = requests = attempts = 0
    read_units = 0.0
    largest = 0
    consumed: float | None = 0.0
    if sort_range.is_empty():  # an inverted range: nothing to read, and no Query to send
        return StreamRead(
            items=[],
            last_evaluated_key=None,
            resume_position=None,
            items_read=0,
            read_units=0.0,
            consumed_units=0.0,
            requests=0,
            attempts=0,
        )
    if limit is not None and start_key is None and sort_range.reads_start_boundary(descending):
        limit += 1  # room for the excluded boundary item, instead of a second request
    while True:
        request = stream.query_request(sort_range, descending, limit, start_key)
        output, tries = retry.call(index, partial(client.query, **request))
        response: dict[str, Any] = dict(output)
        page: list[Item] = response.get("Items", [])
        raw_items += page
        items_read += int(response.get("ScannedCount", len(page)))
        sizes = [item_size(item) for item in page]
        largest = max([largest, *sizes])
        read_units += read_units_of(sum(sizes), stream.consistent_read)
        reported = response.get("ConsumedCapacity", {}).get("CapacityUnits")
        if consumed is not None and reported is not None:
            consumed += max(reported, read_units_of(0, stream.consistent_read))
        else:
            consumed = None
        requests += 1
        attempts += tries
        start_key = response.get("LastEvaluatedKey")
        resume = stream.sort_value(start_key) if start_key else None
        if resume is None or sort_range.contains(resume):
            break
        if sort_range.past_end(resume, descending):
            start_key = resume = None
            break
    return StreamRead(
        items=[item for item in raw_items if sort_range.contains(stream.sort_value(item))],
        last_evaluated_key=start_key,
        resume_position=resume,
        items_read=items_read,
        read_units=read_units,
        consumed_units=consumed,
        requests=requests,
        attempts=attempts,
        largest_item=largest,
    )
