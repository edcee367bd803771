"""The ``parallel`` strategy on an event loop: every stream read to its end, concurrently.

Items are yielded as pages arrive, in no particular order, through one bounded queue; a
stream that fails fails the whole read at once, and closing the generator early cancels
the readers.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence

from dynashard.item import Item
from dynashard.query.page import PageStats
from dynashard.query.reader import Read, StreamRead
from dynashard.query.streams import PartitionStream

ReadOne = Callable[[Read], Awaitable[StreamRead]]


async def read_all(
    read: ReadOne,
    streams: Sequence[PartitionStream],
    page_size: int = 1000,
    stats: PageStats | None = None,
) -> AsyncGenerator[Item, None]:
    """Every item of every stream, yielded as each DynamoDB page arrives (`read` runs one
    page of one stream, within the engine's bound on Queries in flight)."""
    arrivals: asyncio.Queue[StreamRead | BaseException | None] = asyncio.Queue(maxsize=64)

    async def drain(index: int, stream: PartitionStream) -> None:
        try:
            start_key: Item | None = None
            while True:
                page = await read(
                    Read(index, stream, stream.sort_range, False, page_size, start_key)
                )
                await arrivals.put(page)
                start_key = page.last_evaluated_key
                if start_key is None:
                    break
        except Exception as error:  # handed to the consumer, raised there
            await arrivals.put(error)
            return
        await arrivals.put(None)

    tasks = [asyncio.ensure_future(drain(i, s)) for i, s in enumerate(streams)]
    try:
        pending = len(tasks)
        while pending:
            arrival = await arrivals.get()
            if arrival is None:
                pending -= 1
            elif isinstance(arrival, BaseException):
                raise arrival  # a failed stream fails the whole read, at once
            else:
                if stats is not None:
                    arrival.record(stats)
                for item in arrival.items:
                    yield item
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
