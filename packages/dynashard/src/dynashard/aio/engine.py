"""`AsyncFanOutEngine`: the fan-out engine's pages and exports on an asyncio event loop.

The same pages as `dynashard.FanOutEngine` (`dynashard.query.fanout.page_steps`: the merge,
the cursor, the costs), with each wave's reads awaited together instead of run on threads;
cursors of either engine continue on the other. The client is an aiobotocore DynamoDB client
(``pip install dynashard[async]``), its pool at least `max_concurrency` connections.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Callable, Sequence
from typing import TYPE_CHECKING

from dynashard.aio.parallel import read_all
from dynashard.aio.steps import Sleep, drive, read_stream
from dynashard.item import Item
from dynashard.query.cursor import CursorCodec
from dynashard.query.fanout import FanOutQuery, page_steps
from dynashard.query.page import Page, PageStats
from dynashard.query.reader import Read, StreamRead
from dynashard.query.streams import PartitionStream
from dynashard.throttling.retry import RetryPolicy

if TYPE_CHECKING:
    from types_aiobotocore_dynamodb import DynamoDBClient


class AsyncFanOutEngine:
    """Runs fan-out queries on an aiobotocore client, at most `max_concurrency` Queries at once.

    An engine lives on one event loop (its client's, and its concurrency bound's)."""

    def __init__(
        self,
        client: DynamoDBClient,
        cursor_codec: CursorCodec,
        max_concurrency: int = 16,
        retry: RetryPolicy | None = None,
        *,
        clock: Callable[[], float] = time.time,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        pool: int | None = getattr(client.meta.config, "max_pool_connections", None)
        if pool is not None and pool < max_concurrency:
            raise ValueError(
                f"the client's connection pool ({pool}) is smaller than max_concurrency "
                f"({max_concurrency}); create the client with "
                f"dynashard.aio.client_config({max_concurrency})"
            )
        self._client = client
        self._codec = cursor_codec
        self._retry = retry or RetryPolicy()
        self._clock = clock
        self._sleep = sleep
        self._limit = asyncio.Semaphore(max_concurrency)

    async def page(self, query: FanOutQuery) -> Page:
        """One page of `query`; raises `InvalidCursorError` for a cursor it did not issue."""
        return await drive(page_steps(query, self._codec, self._clock), self._wave)

    async def _wave(self, reads: list[Read]) -> list[StreamRead]:
        """A wave's reads, awaited together; one that fails cancels the others."""
        tasks = [asyncio.ensure_future(self._read(read)) for read in reads]
        try:
            return list(await asyncio.gather(*tasks))
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise

    async def _read(self, read: Read) -> StreamRead:
        return await read_stream(
            self._client, self._retry, read, limit=self._limit, sleep=self._sleep
        )

    def read_all(
        self,
        streams: Sequence[PartitionStream],
        page_size: int = 1000,
        stats: PageStats | None = None,
    ) -> AsyncGenerator[Item, None]:
        """Every item of every stream, concurrently, unordered (the ``parallel`` strategy);
        what the reads cost is added to `stats` as they arrive."""
        return read_all(self._read, streams, page_size, stats)
