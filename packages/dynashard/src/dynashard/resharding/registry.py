"""Registries in one partition each, so a scheduled process finds keys without a scan: the
halvings still moving (`dynashard.resharding.moves`) and the keys counted above one shard
(`dynashard.resharding.counted`). An entry's sort key names the metadata key it is about."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

from dynashard.handle import TableHandle
from dynashard.item import Item
from dynashard.keys.keys import SEPARATOR
from dynashard.keys.schema import TableSchema
from dynashard.resharding.shard_meta import ShardMetaKey

if TYPE_CHECKING:
    pass

_serializer, _deserializer = TypeSerializer(), TypeDeserializer()


def entry_key(schema: TableSchema, registry: str, key: ShardMetaKey) -> Item:
    """The primary key of `key`'s entry in `registry` (a partition)."""
    return {
        schema.partition_key: {"S": registry},
        schema.sort_key: {"S": f"{key.partition}{SEPARATOR}{key.base}"},
    }


def entry(schema: TableSchema, registry: str, key: ShardMetaKey, **values: Any) -> Item:
    """`key`'s entry in `registry`, with `values` beside where its metadata lives."""
    values = {"MetaPartition": key.partition, "Base": key.base, **values}
    fields = {name: _serializer.serialize(value) for name, value in values.items()}
    return entry_key(schema, registry, key) | fields


def entries(table: TableHandle, registry: str) -> list[tuple[ShardMetaKey, dict[str, Any]]]:
    """Every entry of `registry` (strongly consistent): its key and its values."""
    found: list[tuple[ShardMetaKey, dict[str, Any]]] = []
    request: dict[str, Any] = {
        "TableName": table.name,
        "KeyConditionExpression": "#pk = :pk",
        "ExpressionAttributeNames": {"#pk": table.schema.partition_key},
        "ExpressionAttributeValues": {":pk": {"S": registry}},
        "ConsistentRead": True,
    }
    while True:
        response = table.client.query(**request)
        for item in response.get("Items", []):
            values = {name: _deserializer.deserialize(value) for name, value in item.items()}
            key = ShardMetaKey(str(values["MetaPartition"]), str(values["Base"]))
            found.append((key, values))
        if "LastEvaluatedKey" not in response:
            return found
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]
