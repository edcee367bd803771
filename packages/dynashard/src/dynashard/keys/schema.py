"""A plain description of a single table's keys, shared by CDK, tests and the local runtime.

Keeping it free of CDK and boto3 types lets the Lambda layer ship it, the CDK stack
translate it into a ``TableV2`` and the test fixtures into a ``CreateTable`` call, so the
three never drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class IndexSchema:
    """A global secondary index with string keys, projecting every attribute."""

    name: str
    partition_key: str
    sort_key: str


@dataclass(frozen=True)
class TableSchema:
    """Key attributes (all strings), GSIs, the TTL attribute and the stream of one on-demand
    table."""

    partition_key: str
    sort_key: str
    indexes: tuple[IndexSchema, ...] = field(default=())
    ttl_attribute: str | None = None
    stream_view: str | None = None
    """``StreamViewType`` of the table's stream (``NEW_IMAGE``, ...); None: no stream."""

    def index(self, name: str) -> IndexSchema:
        """The index called `name`; a KeyError names the ones that exist."""
        for index in self.indexes:
            if index.name == name:
                return index
        raise KeyError(f"no index {name!r}; indexes: {[i.name for i in self.indexes]}")

    def key_attributes(self) -> list[str]:
        """Every key attribute of the table and its indexes, without repeats."""
        names = [self.partition_key, self.sort_key]
        for index in self.indexes:
            names += [index.partition_key, index.sort_key]
        return list(dict.fromkeys(names))

    def create_table_request(self, table_name: str) -> dict[str, Any]:
        """Arguments of boto3 ``create_table`` for an on-demand table with this schema."""
        request: dict[str, Any] = {
            "TableName": table_name,
            "BillingMode": "PAY_PER_REQUEST",
            "AttributeDefinitions": [
                {"AttributeName": name, "AttributeType": "S"} for name in self.key_attributes()
            ],
            "KeySchema": _key_schema(self.partition_key, self.sort_key),
        }
        if self.indexes:
            request["GlobalSecondaryIndexes"] = [
                {
                    "IndexName": index.name,
                    "KeySchema": _key_schema(index.partition_key, index.sort_key),
                    "Projection": {"ProjectionType": "ALL"},
                }
                for index in self.indexes
            ]
        if self.stream_view:
            request["StreamSpecification"] = {
                "StreamEnabled": True,
                "StreamViewType": self.stream_view,
            }
        return request


def _key_schema(partition_key: str, sort_key: str) -> list[dict[str, str]]:
    return [
        {"AttributeName": partition_key, "KeyType": "HASH"},
        {"AttributeName": sort_key, "KeyType": "RANGE"},
    ]
