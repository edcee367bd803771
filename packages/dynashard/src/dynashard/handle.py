"""The three things every stateful part of dynashard needs of a table, held together.

`TableHandle` sits below the subpackages (they take it); `dynashard.Table` extends it
with the factories users call, above them, so neither imports the other in a cycle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from dynashard.keys.schema import TableSchema

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


@dataclass(frozen=True)
class TableHandle:
    """A DynamoDB client, the table's name and its key schema, given once."""

    client: DynamoDBClient
    name: str
    schema: TableSchema
