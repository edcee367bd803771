"""One item's ``UpdateItem`` assembled from parts owned by different modules: each part
brings its ``SET`` clauses and a condition on what it read, and the conditions are ANDed,
so the item moves only if no part's view of it changed."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from dynashard.query import Item
from incidents.table import item_key


@dataclass(frozen=True)
class UpdatePart:
    """``SET`` clauses, a condition, and the names and values they use."""

    clauses: tuple[str, ...] = ()
    condition: str = ""
    names: dict[str, str] = field(default_factory=dict)
    values: Item = field(default_factory=dict)


def update_request(
    table_name: str, key: tuple[str, str], parts: Iterable[UpdatePart]
) -> dict[str, Any]:
    """The ``UpdateItem`` request (or a transaction's ``Update``) of `parts` at `key`."""
    clauses: list[str] = []
    conditions: list[str] = []
    names: dict[str, str] = {}
    values: dict[str, Any] = {}
    for part in parts:
        clauses += part.clauses
        conditions += filter(None, [part.condition])
        names |= part.names
        values |= part.values
    request: dict[str, Any] = {
        "TableName": table_name,
        "Key": item_key(key[0], key[1]),
        "UpdateExpression": "SET " + ", ".join(clauses),
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": values,
    }
    if conditions:
        request["ConditionExpression"] = " AND ".join(conditions)
    return request
