"""Steps (`dynashard.query.steps`) driven by an event loop instead of a thread."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Generator
from typing import TYPE_CHECKING, TypeVar

from botocore.exceptions import ClientError

from dynashard.query.reader import Answer, Query, Read, StreamRead, raise_if_missing
from dynashard.throttling.retry import RetryPolicy, stream_gives_up

if TYPE_CHECKING:
    from types_aiobotocore_dynamodb import DynamoDBClient

Y = TypeVar("Y")
S = TypeVar("S")
R = TypeVar("R")
Sleep = Callable[[float], Awaitable[None]]


async def drive(steps: Generator[Y, S, R], answer: Callable[[Y], Awaitable[S]]) -> R:
    """Run `steps` to its end, awaiting `answer` for each thing it yields; its result."""
    try:
        need = next(steps)
        while True:
            need = steps.send(await answer(need))
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


async def read_stream(
    client: DynamoDBClient,
    retry: RetryPolicy,
    read: Read,
    *,
    limit: asyncio.Semaphore,
    sleep: Sleep = asyncio.sleep,
) -> StreamRead:
    """Run `read` on `client`, each Query retried under `retry` (backing off with `sleep`)
    while holding one of `limit`'s slots, so a page never has more Queries in flight."""
    give_up = stream_gives_up(read.index, retry.max_attempts)

    async def answer(request: Query) -> Answer:
        for attempt in range(retry.max_attempts):
            try:
                async with limit:
                    output = await client.query(**request)
                return dict(output), attempt + 1
            except ClientError as error:
                raise_if_missing(error, request)
                retry.check_retry(error, attempt, give_up)
                await sleep(retry.delay(attempt))
        raise AssertionError("unreachable: max_attempts must be >= 1")

    return await drive(read.steps(), answer)
