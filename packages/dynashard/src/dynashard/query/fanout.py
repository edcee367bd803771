"""Fan-out queries: many streams read as one list, with a strategy, a page size and a cursor.

``FanOutEngine.page`` serves ``ordered`` (exact global order, the default) and
``round_robin`` (fair, unordered) pages with signed cursors; ``FanOutEngine.read_all``
is the ``parallel`` strategy for exports. One boto3 client is shared by all threads
(clients are thread-safe); its connection pool must be at least as large as the pool
of worker threads, which `client_config` arranges.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from botocore.config import Config

from dynashard.errors import InvalidCursorError
from dynashard.item import Item
from dynashard.query.budget import PageBudget
from dynashard.query.cursor import CursorCodec
from dynashard.query.ordered.merge import Identity
from dynashard.query.ordered.pages import ordered_page
from dynashard.query.ordered.state import OrderedState
from dynashard.query.page import Page, PageStats
from dynashard.query.parallel import read_all
from dynashard.query.reader import Read, StreamRead, Waves, read_stream
from dynashard.query.round_robin import RoundRobinState, round_robin_page
from dynashard.query.steps import drive
from dynashard.query.streams import (
    FAMILY_BYTES,
    PartitionStream,
    streams_digest,
    streams_family,
)
from dynashard.throttling.retry import RetryPolicy

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

MAX_PAGE_SIZE = 1000
LEGACY_CURSOR_VERSION = 3
"""0.1.0's cursors, whose state does not start with `streams_family`."""


class Strategy(StrEnum):
    """How streams are combined into pages."""

    ORDERED = "ordered"
    ROUND_ROBIN = "round_robin"
    PARALLEL = "parallel"


def client_config(max_workers: int) -> Config:
    """botocore config for a fan-out client: a pool as large as the worker pool."""
    return Config(max_pool_connections=max_workers, retries={"mode": "standard"})


@dataclass(frozen=True)
class FanOutQuery:
    """The streams of one list, how to combine them, and where the caller is in it.

    `binding` names the caller and every parameter of the list (account, user, route,
    filters): a cursor only works with the binding it was issued for. `identity` returns
    an item's identity for deduplication (None: no two streams may share a sort key).
    """

    streams: Sequence[PartitionStream]
    binding: str
    limit: int = 25
    descending: bool = False
    strategy: Strategy = Strategy.ORDERED
    identity: Identity | None = field(default=None, compare=False)
    cursor: str | None = None
    budget: PageBudget = field(default_factory=PageBudget, compare=False)
    """What the page may spend (ordered pages); unlimited by default."""
    writes_ahead: bool = False
    """New items land after the cursor (an oldest-first list of growing streams): the
    cursor's ended-stream marks and end-of-list plan are not trusted (ordered pages)."""
    items_moving: bool = False
    """Items may move between the streams (a halving's mover runs: `ShardMeta.moving_from`):
    what a cursor learned of each stream is not trusted, only its last key (ordered pages;
    pass an `identity`, since an item and its copy can both be read)."""
    streams_may_change: bool = False
    """The list's set of streams may differ between its pages (a list over whatever a
    caller belongs to when each page is read): a cursor is tied to the list by its binding
    alone, not refused for naming another set of streams."""

    def __post_init__(self) -> None:
        if not self.streams:
            raise ValueError("a fan-out query needs at least one stream")
        if not 1 <= self.limit <= MAX_PAGE_SIZE:
            raise ValueError(f"limit must be from 1 to {MAX_PAGE_SIZE}, got {self.limit}")
        if len({s.sort_key for s in self.streams}) != 1:
            raise ValueError("all streams of a fan-out must share one sort-key attribute")

    def cursor_binding(self) -> str:
        """The caller's binding plus what the engine adds: strategy and direction."""
        parts = [self.binding, self.strategy.value, "desc" if self.descending else "asc"]
        if self.strategy is Strategy.ROUND_ROBIN:
            # Round-robin positions are per stream, so they only fit this exact stream list.
            parts.append(streams_digest(self.streams))
        return "\x1f".join(parts)


def page_steps(
    query: FanOutQuery, codec: CursorCodec, clock: Callable[[], float] = time.time
) -> Waves[Page]:
    """One page of `query` as waves of reads (`Waves`): the whole page but its I/O, which
    `FanOutEngine` runs on threads and `dynashard.aio` on an event loop. Raises
    `InvalidCursorError` for a cursor `codec` did not issue for this query."""
    started = time.perf_counter()
    stats = PageStats(streams=len(query.streams))
    binding = query.cursor_binding()
    family = streams_family(query.streams)
    state = (
        None
        if query.cursor is None
        else _resumed(codec, query.cursor, binding, b"" if query.streams_may_change else family)
    )
    if query.strategy is Strategy.ORDERED:
        items, has_more, next_state = yield from _ordered_steps(query, state, stats, clock())
    elif query.strategy is Strategy.ROUND_ROBIN:
        resume = RoundRobinState.loads(state, len(query.streams)) if state else RoundRobinState()
        items, after = yield from round_robin_page(
            query.streams,
            limit=query.limit,
            descending=query.descending,
            state=resume,
            stats=stats,
        )
        has_more, next_state = after is not None, after.dumps() if after else None
    else:
        raise ValueError("the parallel strategy has no pages: use read_all")
    stats.items_returned = len(items)
    cursor = codec.encode(family + next_state, binding) if next_state else None
    stats.elapsed_ms = (time.perf_counter() - started) * 1000
    return Page(items, cursor, has_more, stats)


def _resumed(codec: CursorCodec, cursor: str, binding: str, family: bytes) -> bytes:
    """The state `cursor` carries for these streams; `InvalidCursorError` when it was made
    for another set of them (0.1.0's cursors named none: they resume as they did)."""
    version, state = codec.decode_versioned(cursor, binding)
    if version == LEGACY_CURSOR_VERSION:
        return state
    if family and state[:FAMILY_BYTES] != family:
        raise InvalidCursorError(
            "the cursor was made for another set of streams (other partitions, table, index "
            "or key attributes): start the list again without it"
        )
    return state[FAMILY_BYTES:]


def _ordered_steps(
    query: FanOutQuery, state: bytes | None, stats: PageStats, now: float
) -> Waves[tuple[list[Item], bool, bytes | None]]:
    """Items, has_more and the next state of an ordered page (see `ordered_state`)."""
    digest = streams_digest(query.streams)
    previous = OrderedState.loads(state) if state else None
    resume = previous.usable(digest, now, len(query.streams)) if previous else None
    if resume is not None and query.items_moving:
        resume = resume.last_key_only()
    merged = yield from ordered_page(
        query.streams,
        limit=query.limit,
        descending=query.descending,
        identity=query.identity,
        stats=stats,
        resume=resume,
        budget=query.budget,
        writes_ahead=query.writes_ahead,
    )
    if not merged.has_more or merged.last_key is None:
        return merged.items, merged.has_more, None
    made_at = previous.made_at if merged.inherited and previous else int(now)
    following = OrderedState(
        merged.last_key,
        merged.plan,
        digest,
        made_at,
        merged.span,
        merged.quiet,
        merged.final,
        merged.known,
    )
    return merged.items, True, following.dumps()


class FanOutEngine:
    """Runs fan-out queries on a shared client and a bounded thread pool."""

    def __init__(
        self,
        client: DynamoDBClient,
        cursor_codec: CursorCodec,
        max_workers: int = 16,
        retry: RetryPolicy | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        pool: int | None = getattr(client.meta.config, "max_pool_connections", None)
        if pool is not None and pool < max_workers:
            raise ValueError(
                f"the client's connection pool ({pool}) is smaller than max_workers "
                f"({max_workers}); create the client with dynashard.client_config({max_workers})"
            )
        self._client = client
        self._clock = clock
        self._codec = cursor_codec
        self._retry = retry or RetryPolicy()
        self._executor = ThreadPoolExecutor(max_workers, thread_name_prefix="fanout")

    def close(self, *, wait: bool = True) -> None:
        """Stop the worker threads: queued reads are cancelled; with `wait`, the running
        ones are waited for (a server stopping on Ctrl-C does not wait)."""
        self._executor.shutdown(wait=wait, cancel_futures=True)

    def __enter__(self) -> FanOutEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def page(self, query: FanOutQuery) -> Page:
        """One page of `query`; raises `InvalidCursorError` for a cursor it did not issue."""
        return drive(page_steps(query, self._codec, self._clock), self._wave)

    def _wave(self, reads: list[Read]) -> list[StreamRead]:
        """A wave's reads on the pool, each in the caller's context (its logging and
        tracing keys); a lone read on the calling thread."""
        if len(reads) == 1:
            return [read_stream(self._client, self._retry, reads[0])]
        futures = [
            self._executor.submit(copy_context().run, read_stream, self._client, self._retry, read)
            for read in reads
        ]
        return [future.result() for future in futures]

    def read_all(
        self,
        streams: Sequence[PartitionStream],
        page_size: int = 1000,
        stats: PageStats | None = None,
    ) -> Generator[Item, None, None]:
        """Every item of every stream, concurrently, unordered (the ``parallel`` strategy);
        what the reads cost is added to `stats` as they arrive."""
        return read_all(self._client, self._executor, self._retry, streams, page_size, stats=stats)
