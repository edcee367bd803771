"""One Query request against one stream, with retries and cost accounting."""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from botocore.exceptions import ClientError

from dynashard.errors import TableNotFoundError
from dynashard.item import Item
from dynashard.query.capacity import item_size, read_units_of
from dynashard.query.page import PageStats
from dynashard.query.sort_range import SortKeyRange
from dynashard.query.steps import drive
from dynashard.query.streams import PartitionStream
from dynashard.throttling.codes import error_code
from dynashard.throttling.retry import RetryPolicy

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

T = TypeVar("T")


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


Query = dict[str, Any]
"""One Query request's parameters."""
Answer = tuple[dict[str, Any], int]
"""A Query's response and the attempts it took (throttled attempts are retried)."""
ReadSteps = Generator[Query, Answer, StreamRead]
"""A read as steps: yields each Query, is sent its answer, returns the read (`steps`)."""
Waves = Generator[list["Read"], list[StreamRead], T]
"""A page as steps: yields each wave of reads (run concurrently), is sent their results in
order, and returns what the page comes to."""


@dataclass(frozen=True)
class Read:
    """One read of one stream: its range from where it stands, which way, and how many.

    `steps` holds the logic and does no I/O, so a thread pool (`read_stream`) and an event
    loop (`dynashard.aio`) run the very same reads."""

    index: int
    stream: PartitionStream
    sort_range: SortKeyRange
    descending: bool
    limit: int | None
    start_key: Item | None = None

    def steps(self) -> ReadSteps:
        """Query the stream within `sort_range`; items outside it (boundary items) are dropped.

        A range with an exclusive end is queried with DynamoDB's inclusive ``BETWEEN``, so
        the boundary item itself may come back. At the start (a cursor position) the
        ``Limit`` gets one more for it, so the page needs no second request (it may then
        hold one item more than `limit`); if it still used up the whole ``Limit``, the read
        goes on from it with ``ExclusiveStartKey`` so that every read makes progress. At the
        far end, nothing of the range follows it: the read is over. An empty (inverted)
        range sends no request.
        """
        stream, sort_range, limit, start_key = (
            self.stream,
            self.sort_range,
            self.limit,
            self.start_key,
        )
        if sort_range.is_empty():  # an inverted range: nothing to read, and no Query to send
            return _NOTHING
        if (
            limit is not None
            and start_key is None
            and sort_range.reads_start_boundary(self.descending)
        ):
            limit += 1  # room for the excluded boundary item, instead of a second request
        tally = _Tally(stream.consistent_read)
        while True:
            response, tries = yield stream.query_request(
                sort_range, self.descending, limit, start_key
            )
            tally.add(response, tries)
            start_key = response.get("LastEvaluatedKey")
            resume = stream.sort_value(start_key) if start_key else None
            if resume is None or sort_range.contains(resume):
                break
            if sort_range.past_end(resume, self.descending):
                start_key = resume = None
                break
        return tally.read(
            [item for item in tally.items if sort_range.contains(stream.sort_value(item))],
            start_key,
            resume,
        )


_NOTHING = StreamRead(
    items=[],
    last_evaluated_key=None,
    resume_position=None,
    items_read=0,
    read_units=0.0,
    consumed_units=0.0,
    requests=0,
    attempts=0,
)


class _Tally:
    """What a read's responses add up to: items, requests, attempts and units."""

    def __init__(self, consistent: bool) -> None:
        self.consistent = consistent
        self.items: list[Item] = []
        self.items_read = self.requests = self.attempts = self.largest = 0
        self.read_units = 0.0
        self.consumed: float | None = 0.0

    def add(self, response: dict[str, Any], tries: int) -> None:
        page: list[Item] = response.get("Items", [])
        self.items += page
        self.items_read += int(response.get("ScannedCount", len(page)))
        sizes = [item_size(item) for item in page]
        self.largest = max([self.largest, *sizes])
        self.read_units += read_units_of(sum(sizes), self.consistent)
        reported = response.get("ConsumedCapacity", {}).get("CapacityUnits")
        if self.consumed is not None and reported is not None:
            self.consumed += max(reported, read_units_of(0, self.consistent))
        else:
            self.consumed = None
        self.requests += 1
        self.attempts += tries

    def read(self, items: list[Item], start_key: Item | None, resume: str | None) -> StreamRead:
        return StreamRead(
            items=items,
            last_evaluated_key=start_key,
            resume_position=resume,
            items_read=self.items_read,
            read_units=self.read_units,
            consumed_units=self.consumed,
            requests=self.requests,
            attempts=self.attempts,
            largest_item=self.largest,
        )


def read_stream(client: DynamoDBClient, retry: RetryPolicy, read: Read) -> StreamRead:
    """Run `read` on `client`, each Query retried under `retry`, on the calling thread."""

    def answer(request: Query) -> Answer:
        try:
            output, tries = retry.call(read.index, partial(client.query, **request))
        except ClientError as error:
            raise_if_missing(error, request)
            raise
        return dict(output), tries

    return drive(read.steps(), answer)


def raise_if_missing(error: ClientError, request: Query) -> None:
    """Raise `TableNotFoundError` naming the table (or index) `request` read when `error`
    says it does not exist: DynamoDB's message names neither. (Both engines call it.)"""
    message = str(error.response.get("Error", {}).get("Message", ""))
    index = request.get("IndexName")
    if error_code(error) == "ResourceNotFoundException":
        raise TableNotFoundError(request["TableName"]) from error
    if index and error_code(error) == "ValidationException" and "specified index" in message:
        raise TableNotFoundError(request["TableName"], index) from error
