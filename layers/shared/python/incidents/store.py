"""What every service needs: the caller, the table, the fan-out engine and shard counts.

Services take a `Store` and a `Caller`; the Lambda handlers build one `Store` per
container (clients and caches are reused across invocations) and the caller per request
from the authorizer's claims.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeVar

from botocore.exceptions import ClientError
from ksuid import Ksuid

from dynashard import CursorCodec, FanOutEngine, GrowthPolicy, ShardCounts, Table
from dynashard.limits import ShardedCounter
from dynashard.query import Item
from dynashard.resharding import (
    GrowthHook,
    Operation,
    ShardedKey,
    Transaction,
    TransactionCancelledError,
    TransactionThrottledError,
    log_growth,
    transact_growing,
)
from dynashard.throttling import error_code
from incidents.account_limits import AccountLimits
from incidents.errors import DomainError, ThrottledError, VersionConflictError
from incidents.keys import ShardConfig
from incidents.models import parse_timestamp, utc_now
from incidents.table import PK, SK, TABLE_SCHEMA, item_key
from incidents.tenant_shards import TenantShards, build_tenant_shards

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

MAX_TRANSACTION_ITEMS = 100
DUE_POLICY = GrowthPolicy(default_count=16, max_count=256)
"""Shards of each minute of the due-time index: a busy minute's timers spread over 16
partitions from the start, and a throttled bucket doubles its count, up to 256."""
BATCH_GET_KEYS = 100
"""Keys one BatchGetItem takes at most."""
Failure = DomainError | None
"""A transaction operation's label: the error its failed condition raises (None: a
version conflict)."""
T = TypeVar("T")


def labelled(
    request: Item, failure: Failure = None, sharded: tuple[ShardedKey, ...] = ()
) -> Operation[Failure]:
    """A transaction operation with the error its failed condition raises and the sharded
    keys it writes under (what grows when it throttles)."""
    return Operation(request, failure, sharded)


def condition_failed(error: ClientError) -> bool:
    """Whether a single-item write failed its ConditionExpression."""
    return error_code(error) == "ConditionalCheckFailedException"


@dataclass(frozen=True)
class Caller:
    """Who is asking: taken only from the authorizer's claims, never from the request."""

    account_id: str
    user_id: str
    """A user, an integration (``intg_…``) acting for its alerts, or an API key (``key_…``)
    a machine calls with."""

    @property
    def takes_part(self) -> bool:
        """Whether what it creates lists it as a participant: a user does; an integration or
        an API key acts (it is the creator and the actor of its events) but takes no part."""
        return self.user_id.startswith("user_")


def new_id(prefix: str) -> str:
    """A time-ordered id with a type prefix: ``inc_``, ``team_``, ``user_``..."""
    return f"{prefix}_{Ksuid()}"


@dataclass
class Store:
    """The single table and the shared machinery the services use."""

    client: DynamoDBClient
    table_name: str
    table: Table
    """The client, the name and the schema as dynashard takes them: built once, shared by
    the counts, the counters and the mover."""
    engine: FanOutEngine
    counts: ShardCounts
    shards: TenantShards
    """Each account's counts of its summaries, state lists and events."""
    due: ShardCounts
    """The due-time index's count of shards a minute (`incidents.timers`)."""
    config: ShardConfig = field(default_factory=ShardConfig)
    clock: Callable[[], datetime] = utc_now
    event_retention_days: int | None = None
    """Days a timeline event is kept (through the table's TTL); None: for ever."""
    limits: AccountLimits = field(default_factory=AccountLimits)
    """What one account may hold at once (the stage's settings)."""

    def event_expiry(self, at: str) -> int | None:
        """When an event of instant `at` expires (its item's ``ExpiresAt``), if the stage
        keeps events for a number of days; None keeps it for ever."""
        if self.event_retention_days is None:
            return None
        written = parse_timestamp(at)
        return int((written + timedelta(days=self.event_retention_days)).timestamp())

    def counter(self, shards: int) -> ShardedCounter:
        """A counter on the table spread over `shards` items (a hot one's adds spread)."""
        return ShardedCounter(self.table, shards)

    def get(self, pk: str, sk: str, *, consistent: bool = True) -> Item | None:
        """One item by key, or None."""
        response = self.client.get_item(
            TableName=self.table_name,
            Key=item_key(pk, sk),
            ConsistentRead=consistent,
        )
        item: Item | None = response.get("Item")
        return item

    def batch_get(
        self, keys: Sequence[tuple[str, str]], *, projection: str | None = None
    ) -> list[Item]:
        """The items of `keys` that exist, in any order: 100 keys a BatchGetItem, each
        request's unprocessed keys asked again (`projection`: only those attributes)."""
        found: list[Item] = []
        for start in range(0, len(keys), BATCH_GET_KEYS):
            asked: dict[str, Any] = {
                "Keys": [item_key(*k) for k in keys[start : start + BATCH_GET_KEYS]]
            }
            if projection:
                asked["ProjectionExpression"] = projection
            pending: Any = {self.table_name: asked}
            while pending:
                response = self.client.batch_get_item(RequestItems=pending)
                found += response["Responses"][self.table_name]
                pending = response.get("UnprocessedKeys") or {}
        return found

    def query_partition(self, pk: str, *, prefix: str | None = None) -> list[Item]:
        """Every item of one table partition (strongly consistent), optionally by SK prefix."""
        condition = f"{PK} = :pk" + (f" AND begins_with({SK}, :prefix)" if prefix else "")
        values: dict[str, Any] = {":pk": {"S": pk}}
        if prefix:
            values[":prefix"] = {"S": prefix}
        pages = self.client.get_paginator("query").paginate(
            TableName=self.table_name,
            KeyConditionExpression=condition,
            ExpressionAttributeValues=values,
            ConsistentRead=True,
        )
        return [item for page in pages for item in page.get("Items", [])]

    def put_operation(self, item: Item, *, new: bool = False) -> Item:
        """A transaction's Put of `item`; `new` makes it fail if the key exists."""
        put: dict[str, Any] = {"TableName": self.table_name, "Item": item}
        if new:
            put["ConditionExpression"] = f"attribute_not_exists({PK})"
        return {"Put": put}

    def delete_operation(self, pk: str, sk: str) -> Item:
        """A transaction's Delete of the item ``(pk, sk)``, failing if there is none."""
        return {
            "Delete": {
                "TableName": self.table_name,
                "Key": item_key(pk, sk),
                "ConditionExpression": f"attribute_exists({PK})",
            }
        }

    def counter_update(
        self,
        pk: str,
        sk: str,
        counter: tuple[str, int],
        *,
        counted: int,
        condition: str = "",
        values: Mapping[str, int] | None = None,
    ) -> Item:
        """A transaction's Update moving `counter` (attribute name, change) of the existing
        item ``(pk, sk)``; an item written before the counter existed starts from `counted`.
        `condition` is ANDed to the item's existence, the counter named ``#n`` in it and
        `values` its numbers."""
        name, change = counter
        numbers = {":counted": counted, ":change": change, **(values or {})}
        return {
            "Update": {
                "TableName": self.table_name,
                "Key": item_key(pk, sk),
                "UpdateExpression": "SET #n = if_not_exists(#n, :counted) + :change",
                "ConditionExpression": f"attribute_exists({PK})" + condition,
                "ExpressionAttributeNames": {"#n": name},
                "ExpressionAttributeValues": {k: {"N": str(v)} for k, v in numbers.items()},
            }
        }

    def exists_check(self, pk: str, sk: str) -> Item:
        """A transaction's ConditionCheck that the item ``(pk, sk)`` exists."""
        return {
            "ConditionCheck": {
                "TableName": self.table_name,
                "Key": item_key(pk, sk),
                "ConditionExpression": f"attribute_exists({PK})",
            }
        }

    def transact(self, operations: Sequence[Item], failures: Sequence[Failure]) -> None:
        """Run one ``TransactWriteItems``; a failed condition raises that operation's error.

        `failures[i]` is raised when operation i's condition failed (None: a version
        conflict); see `transact_growing`, which this is with no sharded keys.
        """
        fixed = Transaction(
            [
                labelled(operation, failures[index] if index < len(failures) else None)
                for index, operation in enumerate(operations)
            ],
            None,
        )
        self.transact_growing(lambda: fixed)

    def transact_growing(self, build: Callable[[], Transaction[Failure, T]]) -> T:
        """Run the transaction `build` makes, growing its throttled sharded keys and
        building it again (`dynashard.resharding.transact_growing`); returns its result.

        Each operation's label is the error its failed condition raises (None: a version
        conflict); throttling that growth cannot relieve becomes `ThrottledError`, a
        conflicting transaction a `VersionConflictError` the client can retry.
        """
        try:
            return transact_growing(self.client, build)
        except TransactionCancelledError as error:
            failed = error.first("ConditionalCheckFailed")
            if failed is not None:
                raise (
                    failed.label or VersionConflictError("the incident changed meanwhile; retry")
                ) from None
            codes = ", ".join(item.code for item in error.cancellations)
            raise VersionConflictError(f"a concurrent change won ({codes}); retry") from None
        except TransactionThrottledError:
            raise ThrottledError("the table is busy; retry with back-off") from None


def build_store(
    client: DynamoDBClient,
    table_name: str,
    cursor_secret: bytes,
    *,
    config: ShardConfig | None = None,
    participant_policy: GrowthPolicy | None = None,
    on_growth: GrowthHook = log_growth,
    max_workers: int = 16,
    event_retention_days: int | None = None,
    limits: AccountLimits | None = None,
    shard_clock: Callable[[], float] = time.time,
) -> Store:
    """A `Store` on `client`, whose connection pool must hold `max_workers` connections;
    `shard_clock` is what the shard maps' caches and the cursors read the time from."""
    config = config or ShardConfig()
    codec = CursorCodec(cursor_secret)
    table = Table(client, table_name, TABLE_SCHEMA)
    return Store(
        client=client,
        table_name=table_name,
        table=table,
        engine=FanOutEngine(client, codec, max_workers=max_workers, clock=shard_clock),
        counts=ShardCounts(
            table,
            policy=participant_policy,
            on_growth=on_growth,
            clock=shard_clock,
        ),
        due=ShardCounts(
            table,
            policy=DUE_POLICY,
            on_growth=on_growth,
            clock=shard_clock,
        ),
        shards=build_tenant_shards(table, config, on_growth=on_growth, clock=shard_clock),
        config=config,
        event_retention_days=event_retention_days,
        limits=limits or AccountLimits(),
    )
