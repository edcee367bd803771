"""Test data for fan-out queries: items spread over streams, and the list they should page as."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dynashard import PartitionStream, SortKeyRange

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

SECRET = b"test-cursor-secret-0123456789abcdef"


@dataclass(frozen=True)
class Entity:
    """One logical item (identity + sort key) and the streams holding a copy of it."""

    identity: str
    sort_key: str
    streams: tuple[int, ...]


def identity_of(item: dict[str, dict[str, str]]) -> str:
    """Identity attribute written by `write_entities`."""
    return item["Ident"]["S"]


def make_streams(
    table_name: str, prefix: str, count: int, sort_range: SortKeyRange | None = None
) -> list[PartitionStream]:
    """`count` streams over the table's ``PK`` partitions ``<prefix>#<n>``."""
    return [
        PartitionStream(
            table_name=table_name,
            partition_key="PK",
            partition_value=f"{prefix}#{n}",
            sort_key="SK",
            sort_range=sort_range or SortKeyRange(),
        )
        for n in range(count)
    ]


def write_entities(
    client: DynamoDBClient, table_name: str, prefix: str, entities: Sequence[Entity]
) -> None:
    """Write one copy of each entity into each of its streams, 25 per batch."""
    requests = [
        {
            "PutRequest": {
                "Item": {
                    "PK": {"S": f"{prefix}#{stream}"},
                    "SK": {"S": entity.sort_key},
                    "Ident": {"S": entity.identity},
                    "Copy": {"N": str(stream)},
                }
            }
        }
        for entity in entities
        for stream in entity.streams
    ]
    for start in range(0, len(requests), 25):
        batch = {table_name: requests[start : start + 25]}
        while batch:
            response = client.batch_write_item(RequestItems=batch)  # type: ignore[arg-type]
            batch = response.get("UnprocessedItems") or {}  # type: ignore[assignment]


def expected_order(
    entities: Sequence[Entity], sort_range: SortKeyRange, descending: bool
) -> list[str]:
    """Identities in the order an exact, deduplicated merge must return them."""
    chosen = [e for e in entities if sort_range.contains(e.sort_key)]
    chosen.sort(key=lambda e: e.sort_key, reverse=descending)
    return [e.identity for e in chosen]


def new_prefix() -> str:
    """A partition prefix no other test uses."""
    return f"t{uuid.uuid4().hex[:10]}"
