"""`dynashard.aio.AsyncFanOutEngine` behind `FanOutEngine`'s blocking ``page``, so the
fan-out properties run unchanged on both engines: an event loop on a thread of its own,
with an aiobotocore client entered on it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Iterator, Sequence
from contextlib import AsyncExitStack
from typing import Any, TypeVar

from dynashard import CursorCodec, FanOutQuery, Page, PartitionStream
from dynashard.aio import AsyncFanOutEngine
from dynashard.query import Item
from local.engines.clients import async_local_client

T = TypeVar("T")


class BlockingAsyncEngine:
    """The async engine on its own loop thread; ``page`` blocks until the page is read."""

    def __init__(self, endpoint: str, codec: CursorCodec, max_concurrency: int = 16) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._stack = AsyncExitStack()
        self._engine = self._run(self._open(endpoint, codec, max_concurrency))

    async def _open(
        self, endpoint: str, codec: CursorCodec, max_concurrency: int
    ) -> AsyncFanOutEngine:
        client = await self._stack.enter_async_context(
            async_local_client(endpoint, max_pool_connections=max_concurrency)
        )
        return AsyncFanOutEngine(client, codec, max_concurrency=max_concurrency)

    def _run(self, work: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(work, self._loop).result()

    def page(self, query: FanOutQuery) -> Page:
        """One page of `query`, read by the async engine."""
        return self._run(self._engine.page(query))

    def read_all(self, streams: Sequence[PartitionStream], page_size: int = 1000) -> Iterator[Item]:
        """Every item of every stream, read by the async engine (collected, then handed out)."""

        async def collect() -> list[Item]:
            return [item async for item in self._engine.read_all(streams, page_size)]

        return iter(self._run(collect()))

    def close(self) -> None:
        """Close the client, then stop the loop and its thread."""
        self._run(self._stack.aclose())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()
