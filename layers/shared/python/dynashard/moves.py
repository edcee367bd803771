"""The halvings whose items are still moving, kept in one partition of the table so a
scheduled mover finds them without a scan: `ShardCounts.shrink` registers a move in the
transaction that halves the count, and `ShardCounts.settle` removes it in the transaction
that ends it. Each registration says how to move (`MoveSpec`) and since when.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

from dynashard.keys import SEPARATOR
from dynashard.schema import IndexSchema, TableSchema
from dynashard.shard_meta import ShardMetaKey
from dynashard.streams import Item

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

MOVES_PARTITION = f"dynashard{SEPARATOR}moves"
_serializer, _deserializer = TypeSerializer(), TypeDeserializer()


@dataclass(frozen=True)
class MoveSpec:
    """How a key's items move: by copy (the table's key, conditioned on `version_attribute`)
    or by re-pointing an index's key (`index`); `hashed` is what their shard hashes."""

    version_attribute: str = "version"
    index: IndexSchema | None = None
    hashed: str | None = None

    def attributes(self) -> dict[str, Any]:
        index = self.index
        return {
            "VersionAttribute": self.version_attribute,
            **({"Index": [index.name, index.partition_key, index.sort_key]} if index else {}),
            **({"Hashed": self.hashed} if self.hashed else {}),
        }

    @classmethod
    def from_values(cls, values: dict[str, Any]) -> MoveSpec:
        index = values.get("Index")
        return cls(
            str(values.get("VersionAttribute", "version")),
            IndexSchema(*(str(part) for part in index)) if index else None,
            values.get("Hashed"),
        )


@dataclass(frozen=True)
class RegisteredMove:
    """A halving still moving: its key, how to move, since when (epoch milliseconds)."""

    key: ShardMetaKey
    spec: MoveSpec
    since: int

    def age_seconds(self, now: float) -> float:
        return max(0.0, now - self.since / 1000)


def registration_key(schema: TableSchema, key: ShardMetaKey) -> Item:
    """The primary key of `key`'s registration."""
    return {
        schema.partition_key: {"S": MOVES_PARTITION},
        schema.sort_key: {"S": f"{key.partition}{SEPARATOR}{key.base}"},
    }


def registration(schema: TableSchema, key: ShardMetaKey, spec: MoveSpec, since: int) -> Item:
    """The item that registers `key`'s move."""
    values = {"MetaPartition": key.partition, "Base": key.base, "Since": since}
    values |= spec.attributes()
    return registration_key(schema, key) | {k: _serializer.serialize(v) for k, v in values.items()}


def registered_moves(
    client: DynamoDBClient, table_name: str, schema: TableSchema
) -> list[RegisteredMove]:
    """Every move registered, oldest first."""
    moves: list[RegisteredMove] = []
    request: dict[str, Any] = {
        "TableName": table_name,
        "KeyConditionExpression": "#pk = :pk",
        "ExpressionAttributeNames": {"#pk": schema.partition_key},
        "ExpressionAttributeValues": {":pk": {"S": MOVES_PARTITION}},
        "ConsistentRead": True,
    }
    while True:
        response = client.query(**request)
        for item in response.get("Items", []):
            values = {name: _deserializer.deserialize(value) for name, value in item.items()}
            key = ShardMetaKey(str(values["MetaPartition"]), str(values["Base"]))
            moves.append(RegisteredMove(key, MoveSpec.from_values(values), int(values["Since"])))
        if "LastEvaluatedKey" not in response:
            return sorted(moves, key=lambda move: move.since)
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def unregister(
    client: DynamoDBClient, table_name: str, schema: TableSchema, key: ShardMetaKey
) -> None:
    """Remove `key`'s registration (a move that ended without a settle: a doubling back)."""
    client.delete_item(TableName=table_name, Key=registration_key(schema, key))
