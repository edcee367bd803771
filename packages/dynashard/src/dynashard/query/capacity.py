"""DynamoDB's read-cost rules, computed locally (local servers report constants).

Item size: attribute-name bytes plus value bytes (UTF-8 strings, ~1 byte per two
significant digits + 1 for numbers, 1 for booleans and nulls, 3 + 1 per element plus
nested sizes for lists and maps). A Query is charged for the sum of the sizes of the items
it *read*, rounded up to 4 KB once per request; eventually consistent reads cost half.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal
from typing import Any

READ_UNIT_BYTES = 4096


def _number_size(text: str) -> int:
    digits = Decimal(text).normalize().as_tuple().digits
    significant = len(digits) if any(digits) else 1
    return math.ceil(significant / 2) + 1


def _map_size(payload: Mapping[str, Any]) -> int:
    return 3 + sum(1 + len(k.encode()) + _value_size(v) for k, v in payload.items())


_SIZES: dict[str, Callable[[Any], int]] = {
    "S": lambda payload: len(payload.encode()),
    "N": _number_size,
    "B": len,
    "BOOL": lambda _payload: 1,
    "NULL": lambda _payload: 1,
    "SS": lambda payload: sum(len(s.encode()) for s in payload),
    "NS": lambda payload: sum(_number_size(n) for n in payload),
    "BS": lambda payload: sum(len(b) for b in payload),
    "L": lambda payload: 3 + sum(1 + _value_size(v) for v in payload),
    "M": _map_size,
}


def _value_size(value: Mapping[str, Any]) -> int:
    ((kind, payload),) = value.items()
    try:
        size = _SIZES[kind]
    except KeyError:
        raise ValueError(f"unknown DynamoDB attribute type {kind!r}") from None
    return size(payload)


def item_size(item: Mapping[str, Mapping[str, Any]]) -> int:
    """Bytes DynamoDB bills for a low-level item (``{"name": {"S": "..."}}``)."""
    return sum(len(name.encode()) + _value_size(value) for name, value in item.items())


def query_read_units(items: Iterable[Mapping[str, Mapping[str, Any]]], consistent: bool) -> float:
    """RCUs of one Query request that read `items` (at least one unit, as DynamoDB bills)."""
    return read_units_of(sum(item_size(item) for item in items), consistent)


def read_units_of(total_bytes: int, consistent: bool) -> float:
    """RCUs of one Query request that read `total_bytes` of items."""
    units = max(1, math.ceil(total_bytes / READ_UNIT_BYTES))
    return units if consistent else units / 2
