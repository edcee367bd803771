"""Transactions over sharded keys that grow the throttled keys' counts and try again.

A cancelled ``TransactWriteItems`` says, per operation, why: DynamoDB gives one
``CancellationReasons`` entry per item, in order. Each operation here carries a label of
the caller's and the shard counts its key was derived from, so a throttle names its keys
(no index arithmetic in the caller) and growing them needs nothing but the operation. The
transaction is built again after a growth, so every key is derived from the counts as
they are now; a cancelled transaction wrote nothing, so the retry neither loses nor
duplicates a write.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from botocore.exceptions import ClientError

from dynashard.errors import DynashardError, WriteThrottledError
from dynashard.resharding.shard_counts import ShardCounts
from dynashard.resharding.shard_meta import ShardMetaKey
from dynashard.throttling.codes import cancellation_codes, error_code

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

L = TypeVar("L")
T = TypeVar("T")

DEFAULT_GROWTHS = 3
"""Times one call grows throttled keys and tries again before the throttle is the caller's."""


@dataclass(frozen=True)
class ShardedKey:
    """A shard count an operation's key was derived from: what grows when it throttles."""

    counts: ShardCounts
    key: ShardMetaKey

    def grow(self) -> bool:
        """Double the count (within its policy's cooldown and maximum); True if it grew."""
        seen = self.counts.get(self.key)
        return self.counts.grow(self.key, seen).shard_count != seen.shard_count


@dataclass(frozen=True)
class Operation(Generic[L]):
    """One ``TransactItems`` entry, the caller's label for it (handed back in errors), and
    the sharded keys it writes under (none for a fixed key such as a counter)."""

    request: dict[str, Any]
    label: L
    sharded: tuple[ShardedKey, ...] = ()


@dataclass(frozen=True)
class Transaction(Generic[L, T]):
    """The operations of one attempt, and what the call returns if they commit."""

    operations: Sequence[Operation[L]]
    result: T


@dataclass(frozen=True)
class Cancellation(Generic[L]):
    """An operation that cancelled a transaction, and DynamoDB's code for why."""

    label: L
    code: str


class TransactionCancelledError(DynashardError, Generic[L]):
    """A transaction cancelled for a reason growing cannot help (a failed condition, a
    conflicting transaction); `cancellations` are the operations DynamoDB blamed, in order."""

    def __init__(self, cancellations: Sequence[Cancellation[L]], message: str) -> None:
        super().__init__(f"transaction cancelled: {message}")
        self.cancellations = tuple(cancellations)

    def first(self, code: str) -> Cancellation[L] | None:
        """The first operation cancelled with `code` (``ConditionalCheckFailed``, ...)."""
        return next((item for item in self.cancellations if item.code == code), None)


class TransactionThrottledError(WriteThrottledError, Generic[L]):
    """Operations still throttled with their keys grown as far as their policies allow."""

    def __init__(self, labels: Sequence[L], keys: Sequence[ShardMetaKey]) -> None:
        names = ", ".join(sorted({key.base for key in keys})) or "no sharded key"
        super().__init__("ThrottlingError", f"transaction throttled on {names}")
        self.labels = tuple(labels)
        self.keys = tuple(keys)


def transact_growing(
    client: DynamoDBClient,
    build: Callable[[], Transaction[L, T]],
    *,
    growths: int = DEFAULT_GROWTHS,
) -> T:
    """Build the transaction, write it, and return its result once it commits.

    A transaction throttled on sharded keys grows each of them and is built and written
    again, at most `growths` times; `TransactionThrottledError` when none of its keys could
    grow or after the last growth, `TransactionCancelledError` for any other cancellation
    (a failed condition wins over a throttle: retrying cannot pass it). Other errors pass
    through unchanged.
    """
    growth = 0
    while True:
        transaction = build()
        operations = transaction.operations
        try:
            client.transact_write_items(
                TransactItems=[operation.request for operation in operations]  # type: ignore[misc]
            )
            return transaction.result
        except ClientError as error:
            if error_code(error) != "TransactionCanceledException":
                raise
            codes = _reason_codes(error, len(operations))
            cancellations = [
                Cancellation(operation.label, code)
                for operation, code in zip(operations, codes, strict=True)
                if code != "None"
            ]
            blamed = sorted({code for code in codes if code not in ("None", "ThrottlingError")})
            if blamed or "ThrottlingError" not in codes:
                message = ", ".join(blamed) or "no reason given"
                raise TransactionCancelledError(cancellations, message) from error
            throttled = [op for op, code in zip(operations, codes, strict=True) if code != "None"]
            keys = _distinct_keys(throttled)
            if growth == growths or not _grow_each(keys):
                raise TransactionThrottledError(
                    [operation.label for operation in throttled], [each.key for each in keys]
                ) from error
            growth += 1


def _reason_codes(error: ClientError, count: int) -> list[str]:
    """`count` codes, one per operation (``"None"`` where DynamoDB gave none)."""
    codes = cancellation_codes(error)[:count]
    return codes + ["None"] * (count - len(codes))


def _grow_each(keys: Sequence[ShardedKey]) -> bool:
    """Grow every key (not only up to the first that grows); True if any grew."""
    grown = [sharded.grow() for sharded in keys]
    return any(grown)


def _distinct_keys(operations: Sequence[Operation[L]]) -> list[ShardedKey]:
    """The distinct sharded keys `operations` write under, in operation order."""
    keys: dict[tuple[int, ShardMetaKey], ShardedKey] = {}
    for operation in operations:
        for sharded in operation.sharded:
            keys.setdefault((id(sharded.counts), sharded.key), sharded)
    return list(keys.values())
