"""`dynashard.aio`: the same pages as the threaded engine, cursors that cross between them,
retries that await, and exports that stop when their reader does."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from dynashard import CursorCodec, FanOutEngine, FanOutQuery, Page, PartitionStream, Strategy
from dynashard.aio import AsyncFanOutEngine, client_config
from dynashard.errors import StreamFailedError
from dynashard.testing import FakeQueryClient
from dynashard.throttling import RetryPolicy

CODEC = CursorCodec(b"a" * 32)
NOW = 1_800_000_000.0
"""Both engines' clock: a cursor carries when it was made, so equal cursors need one time."""
STREAM_COUNT = 12


class AsyncFake:
    """`FakeQueryClient` behind an awaitable ``query``, throttling its first `throttled` calls."""

    def __init__(self, fake: FakeQueryClient, throttled: int = 0) -> None:
        self.meta = fake.meta
        self._fake = fake
        self.throttled = throttled
        self.calls = 0

    async def query(self, **request: Any) -> dict[str, Any]:
        self.calls += 1
        call = self.calls
        await asyncio.sleep(0)  # hand the loop to the wave's other reads
        if call <= self.throttled:
            error = {"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "x"}}
            raise ClientError(error, "Query")  # type: ignore[arg-type]
        return self._fake.query(**request)


@pytest.fixture(scope="module")
def data() -> FakeQueryClient:
    fake = FakeQueryClient(title_bytes=40)
    for shard in range(STREAM_COUNT):
        step = STREAM_COUNT - shard % 3
        fake.load(f"p#{shard}", [f"{n:05d}.{shard:02d}" for n in range(shard, 600, step)])
    return fake


def query(**options: Any) -> FanOutQuery:
    streams = [PartitionStream("tbl", "PK", f"p#{n}", "SK") for n in range(STREAM_COUNT)]
    return FanOutQuery(streams=streams, binding="t", **options)


def threaded_walk(fake: FakeQueryClient, first: FanOutQuery) -> list[Page]:
    with FanOutEngine(fake, CODEC, max_workers=4, clock=lambda: NOW) as engine:  # type: ignore[arg-type]
        return walk(engine.page, first)


def async_walk(fake: FakeQueryClient, first: FanOutQuery) -> list[Page]:
    async def run() -> list[Page]:
        engine = AsyncFanOutEngine(AsyncFake(fake), CODEC, max_concurrency=4, clock=lambda: NOW)  # type: ignore[arg-type]
        pages, cursor = [], first.cursor
        while True:
            page = await engine.page(replace(first, cursor=cursor))
            pages.append(page)
            if page.next_cursor is None:
                return pages
            cursor = page.next_cursor

    return asyncio.run(run())


def walk(page_of: Any, first: FanOutQuery) -> list[Page]:
    pages, cursor = [], first.cursor
    while True:
        page = page_of(replace(first, cursor=cursor))
        pages.append(page)
        if page.next_cursor is None:
            return pages
        cursor = page.next_cursor


def keys(pages: list[Page]) -> list[list[str]]:
    return [[item["SK"]["S"] for item in page.items] for page in pages]


@pytest.mark.parametrize("strategy", [Strategy.ORDERED, Strategy.ROUND_ROBIN])
@pytest.mark.parametrize("limit", [1, 7, 50])
def test_both_engines_read_the_same_pages_at_the_same_cost(
    data: FakeQueryClient, strategy: Strategy, limit: int
) -> None:
    first = query(limit=limit, strategy=strategy, descending=limit == 7)
    threaded, awaited = threaded_walk(data, first), async_walk(data, first)

    assert keys(awaited) == keys(threaded)
    cost = [(p.stats.requests, p.stats.round_trips, p.stats.items_read) for p in threaded]
    assert [(p.stats.requests, p.stats.round_trips, p.stats.items_read) for p in awaited] == cost
    assert [p.next_cursor for p in awaited] == [p.next_cursor for p in threaded]


@pytest.mark.parametrize("strategy", [Strategy.ORDERED, Strategy.ROUND_ROBIN])
def test_a_cursor_from_either_engine_continues_on_the_other(
    data: FakeQueryClient, strategy: Strategy
) -> None:
    whole = keys(threaded_walk(data, query(limit=9, strategy=strategy)))
    with FanOutEngine(data, CODEC, max_workers=4) as engine:  # type: ignore[arg-type]
        started = engine.page(query(limit=9, strategy=strategy))
    went_on = async_walk(data, query(limit=9, strategy=strategy, cursor=started.next_cursor))
    back = threaded_walk(data, query(limit=9, strategy=strategy, cursor=went_on[0].next_cursor))

    assert [keys([started])[0], keys(went_on)[0], *keys(back)] == whole


def test_throttled_reads_are_retried_after_an_awaited_back_off(data: FakeQueryClient) -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    async def run() -> Page:
        engine = AsyncFanOutEngine(
            AsyncFake(data, throttled=2),  # type: ignore[arg-type]
            CODEC,
            max_concurrency=4,
            retry=RetryPolicy(max_attempts=3),
            sleep=sleep,
        )
        return await engine.page(query(limit=5))

    page = asyncio.run(run())

    assert len(page.items) == 5
    assert len(slept) == 2
    assert page.stats.throttle_retries == 2


def test_a_stream_throttled_past_its_attempts_fails_the_page(data: FakeQueryClient) -> None:
    async def nap(_: float) -> None:
        return None

    async def run() -> Page:
        fake = AsyncFake(data, throttled=10**6)
        engine = AsyncFanOutEngine(
            fake,  # type: ignore[arg-type]
            CODEC,
            retry=RetryPolicy(max_attempts=2),
            sleep=nap,
        )
        return await engine.page(query(limit=5))

    with pytest.raises(StreamFailedError, match="still throttled after 2 attempts"):
        asyncio.run(run())


def test_the_export_reads_every_item_once_and_stops_with_its_reader(
    data: FakeQueryClient,
) -> None:
    streams = query().streams
    expected = sorted(
        sk for page in threaded_walk(data, query(limit=1000)) for sk in keys([page])[0]
    )

    async def run() -> tuple[list[str], list[str], int]:
        fake = AsyncFake(data)
        engine = AsyncFanOutEngine(fake, CODEC, max_concurrency=3)  # type: ignore[arg-type]
        every = [item["SK"]["S"] async for item in engine.read_all(streams, page_size=16)]
        calls = fake.calls
        few: list[str] = []
        reader = engine.read_all(streams, page_size=16)
        async for item in reader:
            few.append(item["SK"]["S"])
            if len(few) == 3:
                break
        await reader.aclose()
        await asyncio.sleep(0.01)  # a reader still running would query on meanwhile
        return every, few, fake.calls - calls

    every, few, later_calls = asyncio.run(run())

    assert sorted(every) == expected
    assert len(few) == 3
    assert later_calls < STREAM_COUNT, "closing the export cancelled its readers"


def test_a_pool_smaller_than_the_concurrency_is_refused() -> None:
    class Small:
        class meta:  # noqa: N801 - the shape of a client's ``meta``
            config = Config(max_pool_connections=2)

    with pytest.raises(ValueError, match=r"client_config\(8\)"):
        AsyncFanOutEngine(Small(), CODEC, max_concurrency=8)  # type: ignore[arg-type]


def test_the_client_config_sizes_the_pool() -> None:
    assert client_config(24).max_pool_connections == 24  # type: ignore[attr-defined]
