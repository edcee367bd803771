"""The ``parallel`` strategy: read every stream to its end, concurrently, for exports and ETL.

Items are yielded as pages arrive, in no particular order; at most ``max_workers`` streams
are read at once. Closing the generator early stops the workers after their current page.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import Executor, Future
from typing import TYPE_CHECKING

from dynashard.reader import read_stream
from dynashard.retry import RetryPolicy
from dynashard.streams import Item, Stream

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


def read_all(
    client: DynamoDBClient,
    executor: Executor,
    retry: RetryPolicy,
    streams: Sequence[Stream],
    page_size: int = 1000,
) -> Iterator[Item]:
    """Every item of every stream, yielded as each DynamoDB page arrives."""
    arrivals: queue.Queue[list[Item] | Future[None]] = queue.Queue(maxsize=64)
    stop = threading.Event()

    def drain(index: int, stream: Stream) -> None:
        start_key: Item | None = None
        while not stop.is_set():
            read = read_stream(
                client,
                retry,
                index,
                stream,
                sort_range=stream.sort_range,
                descending=False,
                limit=page_size,
                start_key=start_key,
            )
            arrivals.put(read.items)
            start_key = read.last_evaluated_key
            if start_key is None:
                return

    futures: list[Future[None]] = [executor.submit(drain, i, s) for i, s in enumerate(streams)]
    for future in futures:
        future.add_done_callback(arrivals.put)
    try:
        pending = len(futures)
        while pending:
            arrival = arrivals.get()
            if isinstance(arrival, Future):
                arrival.result()  # a failed stream fails the whole read, at once
                pending -= 1
            else:
                yield from arrival
    finally:
        stop.set()
        while any(not f.done() for f in futures):
            try:
                arrivals.get(timeout=0.05)
            except queue.Empty:
                continue
