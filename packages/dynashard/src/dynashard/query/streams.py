"""A partition stream: one DynamoDB Query (a partition of the table or of an index, in a
sort-key range)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dynashard.errors import InvalidKeyError
from dynashard.item import Item
from dynashard.keys.keys import split_sharded_key
from dynashard.query.sort_range import SortKeyRange

_PK_NAME, _SK_NAME, _PK_VALUE, _VALUE_PREFIX = "#dspk", "#dssk", ":dspk", ":ds"


@dataclass(frozen=True)
class PartitionStream:
    """One partition to read. Streams of one fan-out share a sort-key attribute and order."""

    table_name: str
    partition_key: str
    partition_value: str
    sort_key: str
    sort_range: SortKeyRange = field(default_factory=SortKeyRange)
    index_name: str | None = None
    consistent_read: bool = False
    filter_expression: str | None = None
    expression_names: Mapping[str, str] = field(default_factory=dict)
    expression_values: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    projection: str | None = None

    def __post_init__(self) -> None:
        if self.consistent_read and self.index_name:
            raise ValueError("global secondary indexes only support eventually consistent reads")

    def fingerprint(self) -> str:
        """What identifies the stream's query, for binding cursors to it: every field, since
        each changes what the stream returns (a filter's attribute names included)."""
        return repr(
            (
                self.table_name,
                self.index_name,
                self.partition_key,
                self.partition_value,
                self.sort_key,
                self.sort_range,
                self.consistent_read,
                self.filter_expression,
                sorted(self.expression_names.items()),
                sorted(self.expression_values.items(), key=lambda kv: kv[0]),
                self.projection,
            )
        )

    def sort_value(self, item: Item) -> str:
        """The item's sort key (a string attribute, required by the merge)."""
        try:
            value: str = item[self.sort_key]["S"]
        except KeyError:
            raise ValueError(f"item has no string sort key {self.sort_key!r}") from None
        return value

    def query_request(
        self,
        sort_range: SortKeyRange,
        descending: bool,
        limit: int | None,
        exclusive_start_key: Item | None = None,
    ) -> dict[str, Any]:
        """Keyword arguments of ``client.query`` reading `sort_range` of this stream."""
        condition, values = sort_range.key_condition(_SK_NAME, _VALUE_PREFIX)
        key_condition = f"{_PK_NAME} = {_PK_VALUE}"
        names = {_PK_NAME: self.partition_key, **self.expression_names}
        if condition:
            key_condition += f" AND {condition}"
            names[_SK_NAME] = self.sort_key
        request: dict[str, Any] = {
            "TableName": self.table_name,
            "KeyConditionExpression": key_condition,
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": {
                _PK_VALUE: {"S": self.partition_value},
                **{name: {"S": value} for name, value in values.items()},
                **self.expression_values,
            },
            "ScanIndexForward": not descending,
            "ConsistentRead": self.consistent_read,
            "ReturnConsumedCapacity": "TOTAL",
        }
        optional = {
            "IndexName": self.index_name,
            "Limit": limit,
            "ExclusiveStartKey": exclusive_start_key,
            "FilterExpression": self.filter_expression,
            "ProjectionExpression": self.projection,
        }
        request.update({key: value for key, value in optional.items() if value is not None})
        return request


def streams_digest(streams: Sequence[PartitionStream]) -> str:
    """What identifies a stream list: state that names streams by index fits only it."""
    text = "\n".join(stream.fingerprint() for stream in streams)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


FAMILY_BYTES = 8


def streams_family(streams: Sequence[PartitionStream]) -> bytes:
    """What a cursor is made for: the table, index, key attributes and partition base
    (``base`` of ``base#3``) of every stream. A shard count that grows or halves keeps it;
    another list of partitions changes it, and its cursors are refused, not read in part."""
    names = sorted(
        {
            repr(
                (s.table_name, s.index_name, s.partition_key, _base(s.partition_value), s.sort_key)
            )
            for s in streams
        }
    )
    return hashlib.sha256("\n".join(names).encode()).digest()[:FAMILY_BYTES]


def _base(partition_value: str) -> str:
    try:
        return split_sharded_key(partition_value)[0]
    except InvalidKeyError:  # a partition that is not sharded is its own base
        return partition_value
