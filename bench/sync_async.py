"""The fan-out engine on threads against its asyncio twin (`dynashard.aio`), page for page.

Reproduce: ``make bench`` (or ``PYTHONPATH=layers/shared/python:packages/dynashard/src:.
python -m bench.sync_async``). On one DynamoDB Local, for 1, 16 and 64 shards of one list
(`ITEMS` items, newest first), both engines walk the first `PAGES` pages of `LIMIT` items
from the same cursors: `FanOutEngine` with a pool of 16 threads and a botocore client,
`AsyncFanOutEngine` with at most 16 Queries in flight on an aiobotocore client. Per page:
wall latency (median and p90) and the process's CPU time (all threads; DynamoDB Local runs in
its own JVM and is not counted). Each engine walks once to warm up, then `ROUNDS` times,
alternating, so neither gets the warmer server; the ratio is async / threads.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, replace
from functools import partial
from typing import TYPE_CHECKING

from bench.support.report import recording_tables, save
from dynashard import (
    CursorCodec,
    FanOutEngine,
    FanOutQuery,
    Page,
    PartitionStream,
    TableSchema,
    calculated_shard,
    shard_keys,
    sharded_key,
)
from dynashard.aio import AsyncFanOutEngine
from local.engines.clients import async_local_client, create_table, local_client
from local.engines.embedded_dynamodb import DYNAMODB_LOCAL, local_engine

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

SHARDS = (1, 16, 64)
ITEMS = 2_000
PAGES = 20
LIMIT = 25
ROUNDS = 3
CONCURRENCY = 16
TABLE = "bench-sync-async"
CODEC = CursorCodec(b"bench-sync-async-secret-32-bytes")


@dataclass
class Walk:
    """Seconds of wall time and of CPU time per page, and Queries, over the walks."""

    wall: list[float]
    cpu: list[float]
    requests: int = 0

    def add(self, wall: float, cpu: float, page: Page) -> None:
        self.wall.append(wall)
        self.cpu.append(cpu)
        self.requests += page.stats.requests


def write_list(client: DynamoDBClient, shards: int) -> list[PartitionStream]:
    """`ITEMS` items of one list over `shards` partition keys; the list's streams."""
    base = f"list#{shards}"
    batch = []
    for n in range(ITEMS):
        sort_key = f"{n:06d}"
        pk = sharded_key(base, calculated_shard(base, sort_key, shards), shards)
        batch.append({"PutRequest": {"Item": {"PK": {"S": pk}, "SK": {"S": sort_key}}}})
        if len(batch) == 25 or n == ITEMS - 1:
            pending = {TABLE: batch}
            while pending:
                answer = client.batch_write_item(RequestItems=pending)  # type: ignore[arg-type]
                pending = answer.get("UnprocessedItems") or {}  # type: ignore[assignment]
            batch = []
    return [PartitionStream(TABLE, "PK", key, "SK") for key in shard_keys(base, shards)]


def walk_threads(engine: FanOutEngine, query: FanOutQuery, into: Walk) -> None:
    cursor = None
    for _ in range(PAGES):
        wall, cpu = time.perf_counter(), time.process_time()
        page = engine.page(replace(query, cursor=cursor))
        into.add(time.perf_counter() - wall, time.process_time() - cpu, page)
        cursor = page.next_cursor


async def walk_async(engine: AsyncFanOutEngine, query: FanOutQuery, into: Walk) -> None:
    cursor = None
    for _ in range(PAGES):
        wall, cpu = time.perf_counter(), time.process_time()
        page = await engine.page(replace(query, cursor=cursor))
        into.add(time.perf_counter() - wall, time.process_time() - cpu, page)
        cursor = page.next_cursor


@dataclass(frozen=True)
class Row:
    """One engine's figures at one width, per page."""

    shards: int
    engine: str
    p50_ms: float
    p90_ms: float
    cpu_ms: float
    requests: float

    @classmethod
    def of(cls, shards: int, engine: str, walk: Walk) -> Row:
        pages = len(walk.wall)
        return cls(
            shards,
            engine,
            statistics.median(walk.wall) * 1000,
            statistics.quantiles(walk.wall, n=10)[-1] * 1000,
            sum(walk.cpu) / pages * 1000,
            walk.requests / pages,
        )


def measure(endpoint: str) -> list[Row]:
    """Both engines over every width; a row per width and engine."""
    client = local_client(endpoint, max_pool_connections=CONCURRENCY)
    create_table(client, TableSchema("PK", "SK"), TABLE)
    with FanOutEngine(client, CODEC, max_workers=CONCURRENCY) as threads:
        return asyncio.run(measure_widths(endpoint, client, threads))


async def measure_widths(endpoint: str, client: DynamoDBClient, threads: FanOutEngine) -> list[Row]:
    async with async_local_client(endpoint, CONCURRENCY) as async_client:
        awaited = AsyncFanOutEngine(async_client, CODEC, max_concurrency=CONCURRENCY)
        rows = []
        for shards in SHARDS:
            streams = write_list(client, shards)
            query = FanOutQuery(streams=streams, binding="bench", limit=LIMIT, descending=True)
            walks = await compare(
                partial(walk_threads, threads, query), partial(walk_async, awaited, query)
            )
            rows += [Row.of(shards, name, walk) for name, walk in walks.items()]
        return rows


async def compare(
    threads: Callable[[Walk], None], awaited: Callable[[Walk], Awaitable[None]]
) -> dict[str, Walk]:
    """A warm-up walk of each, then `ROUNDS` walks of each, alternating."""
    threads(Walk([], []))
    await awaited(Walk([], []))
    walks = {"threads": Walk([], []), "asyncio": Walk([], [])}
    for _ in range(ROUNDS):
        threads(walks["threads"])
        await awaited(walks["asyncio"])
    return walks


def main() -> None:
    """Measure on a fresh DynamoDB Local; print the table with ratios; save the JSON."""
    with local_engine(DYNAMODB_LOCAL) as engine:
        rows = measure(engine.endpoint)
    print(
        f"a page of {LIMIT} over one list of {ITEMS:,} items on {engine.description}: threads "
        f"(FanOutEngine, {CONCURRENCY} workers) vs asyncio (AsyncFanOutEngine, "
        f"{CONCURRENCY} in flight); {PAGES} pages x {ROUNDS} walks each\n"
    )
    print(
        "| shards | engine | Queries / page | latency p50 (ms) | p90 (ms) | CPU / page (ms) "
        "| p50 vs threads | CPU vs threads |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    threads = {r.shards: r for r in rows if r.engine == "threads"}
    for r in rows:
        base = threads[r.shards]
        print(
            f"| {r.shards} | {r.engine} | {r.requests:.1f} | {r.p50_ms:.1f} | {r.p90_ms:.1f} |"
            f" {r.cpu_ms:.1f} | {r.p50_ms / base.p50_ms:.2f}x | {r.cpu_ms / base.cpu_ms:.2f}x |"
        )
    print(f"\nwritten to {save('sync_async', {'rows': [asdict(r) for r in rows]})}")


if __name__ == "__main__":
    with recording_tables():
        main()
