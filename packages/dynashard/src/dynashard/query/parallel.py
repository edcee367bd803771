"""The ``parallel`` strategy: read every stream to its end, concurrently, for exports and ETL.

Items are yielded as pages arrive, in no particular order; at most ``max_workers`` streams
are read at once. Closing the generator early stops the workers after their current page:
none waits on a consumer that has gone.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Generator, Sequence
from concurrent.futures import Executor, Future
from contextvars import copy_context
from typing import TYPE_CHECKING

from dynashard.item import Item
from dynashard.query.page import PageStats
from dynashard.query.reader import Read, StreamRead, read_stream
from dynashard.query.streams import PartitionStream
from dynashard.throttling.retry import RetryPolicy

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


def read_all(
    client: DynamoDBClient,
    executor: Executor,
    retry: RetryPolicy,
    streams: Sequence[PartitionStream],
    page_size: int = 1000,
    *,
    stats: PageStats | None = None,
) -> Generator[Item, None, None]:
    """Every item of every stream, yielded as each DynamoDB page arrives.

    Each worker puts its pages, then an end marker (with its error, if any), into one
    bounded queue from its own thread; the consumer only ever takes from it. (A done
    callback registered on an already finished future runs on the registering thread: put
    into a full queue from the consumer, it would wait for itself.)
    """
    arrivals: queue.Queue[StreamRead | _End] = queue.Queue(maxsize=64)
    stop = threading.Event()

    def drain(index: int, stream: PartitionStream) -> None:
        error: BaseException | None = None
        try:
            start_key: Item | None = None
            while not stop.is_set():
                read = read_stream(
                    client,
                    retry,
                    Read(index, stream, stream.sort_range, False, page_size, start_key),
                )
                _put(arrivals, read, stop)
                start_key = read.last_evaluated_key
                if start_key is None:
                    return
        except BaseException as failure:  # handed to the consumer, raised there
            error = failure
        finally:
            _put(arrivals, _End(error), stop)

    futures: list[Future[None]] = [  # in the caller's context, as `ordered` reads
        executor.submit(copy_context().run, drain, i, s) for i, s in enumerate(streams)
    ]
    try:
        pending = len(futures)
        while pending:
            arrival = arrivals.get()
            if isinstance(arrival, _End):
                pending -= 1
                if arrival.error is not None:
                    raise arrival.error  # a failed stream fails the whole read, at once
            else:
                if stats is not None:  # counted here, on the one consuming thread
                    arrival.record(stats)
                yield from arrival.items
    finally:
        stop.set()


class _End:
    """A worker's last word: done, or the error that ended it."""

    def __init__(self, error: BaseException | None) -> None:
        self.error = error


def _put(
    arrivals: queue.Queue[StreamRead | _End], value: StreamRead | _End, stop: threading.Event
) -> None:
    """Put unless the consumer has gone (it stops taking once `stop` is set)."""
    while not stop.is_set():
        try:
            arrivals.put(value, timeout=0.05)
        except queue.Full:
            continue
        return
