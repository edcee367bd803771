"""`Table`: the entry point. Given the client, the name and the key schema once, it makes
every other object (streams, engines, shard counts, rate limits, counters, movers,
transactions), as boto3's ``dynamodb.Table(name)`` does for its own operations."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from dynashard.handle import TableHandle
from dynashard.limits import RateLimits, Sequence, ShardedCounter
from dynashard.limits.sequence import SEQUENCE_SORT_KEY
from dynashard.query import CursorCodec, FanOutEngine, PartitionStream, SortKeyRange
from dynashard.resharding import (
    GrowthHook,
    GrowthPolicy,
    ShardCounts,
    ShardMover,
    Transaction,
    log_growth,
    transact_growing,
)
from dynashard.throttling import RetryPolicy

if TYPE_CHECKING:
    from types_aiobotocore_dynamodb import DynamoDBClient as AsyncDynamoDBClient

    from dynashard.aio import AsyncFanOutEngine

L = TypeVar("L")
T = TypeVar("T")


class Table(TableHandle):
    """A DynamoDB table as dynashard reaches it: ``Table(client, name, schema)``."""

    def streams(
        self,
        partition_values: Iterable[str],
        sort_range: SortKeyRange | None = None,
        *,
        index: str | None = None,
        consistent_read: bool = False,
        filter_expression: str | None = None,
        expression_names: Mapping[str, str] | None = None,
        expression_values: Mapping[str, Mapping[str, Any]] | None = None,
        projection: str | None = None,
    ) -> list[PartitionStream]:
        """One stream per partition value (``shard_keys(base, count)``, say), of the table
        or of `index`, its key attributes from the schema."""
        keys = self.schema.index(index) if index else self.schema
        return [
            PartitionStream(
                self.name,
                keys.partition_key,
                value,
                keys.sort_key,
                sort_range or SortKeyRange(),
                index_name=index,
                consistent_read=consistent_read,
                filter_expression=filter_expression,
                expression_names=expression_names or {},
                expression_values=expression_values or {},
                projection=projection,
            )
            for value in partition_values
        ]

    def engine(
        self, cursor_codec: CursorCodec, max_workers: int = 16, retry: RetryPolicy | None = None
    ) -> FanOutEngine:
        """The fan-out engine on this table's client (its pool at least `max_workers`)."""
        return FanOutEngine(self.client, cursor_codec, max_workers, retry)

    def async_engine(
        self,
        client: AsyncDynamoDBClient,
        cursor_codec: CursorCodec,
        max_concurrency: int = 16,
        retry: RetryPolicy | None = None,
    ) -> AsyncFanOutEngine:
        """The asyncio engine (the ``async`` extra) on `client`, an aiobotocore client of the
        same table: an event loop's client cannot be made here, once, for every loop."""
        from dynashard.aio import AsyncFanOutEngine  # noqa: PLC0415 (the optional extra)

        return AsyncFanOutEngine(client, cursor_codec, max_concurrency, retry)

    def counts(
        self, policy: GrowthPolicy | None = None, *, on_growth: GrowthHook = log_growth
    ) -> ShardCounts:
        """The table's shard counts, grown on throttling under `policy`."""
        return ShardCounts(self, policy=policy, on_growth=on_growth)

    def rate_limits(self) -> RateLimits:
        """Rate limits kept in this table."""
        return RateLimits(self)

    def counter(self, shards: int = 8) -> ShardedCounter:
        """Counters in this table, each spread over `shards` items."""
        return ShardedCounter(self, shards)

    def sequence(self, sort_key: str = SEQUENCE_SORT_KEY) -> Sequence:
        """Sequences in this table (items with `sort_key`): numbers taken in order, by writers
        that never conflict."""
        return Sequence(self, sort_key)

    def mover(self, counts: ShardCounts, **options: Any) -> ShardMover:
        """The mover of this table's halvings; `options` are `ShardMover`'s fields."""
        return ShardMover(counts, self, **options)

    def transact(self, build: Callable[[], Transaction[L, T]], *, growths: int = 3) -> T:
        """`transact_growing` on this table's client: a throttled transaction grows the keys
        it names and is built again, at most `growths` times."""
        return transact_growing(self.client, build, growths=growths)
