"""One table as dynashard reaches it, given once to everything that reads or writes it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from dynashard.keys.schema import TableSchema

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


@dataclass(frozen=True)
class Table:
    """A DynamoDB client, the table's name and its key schema: what every stateful class
    (`ShardCounts`, `ShardMover`, `RateLimits`, `ShardedCounter`) and the registries'
    functions take instead of the three apart."""

    client: DynamoDBClient
    name: str
    schema: TableSchema
