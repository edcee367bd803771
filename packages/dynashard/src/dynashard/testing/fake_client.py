"""An in-process stand-in for DynamoDB's Query, for deterministic fan-out benchmarks.

It applies the rules that shape a fan-out's cost: key conditions on the sort key, both
directions, ``ExclusiveStartKey``, ``Limit`` (a ``LastEvaluatedKey`` whenever a page stops
at the limit or at 1 MB, even if nothing follows, as DynamoDB does) and the 1 MB cap.
It understands the key conditions `dynashard.PartitionStream` writes, nothing more.
"""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from botocore.config import Config

from dynashard.query import item_size

MAX_RESPONSE_BYTES = 1024 * 1024
_CONDITION = re.compile(
    r"^#dspk = :dspk(?: AND (?:begins_with\(#dssk, :dslo\)|#dssk (?P<op>=|<=|<|>=|>) "
    r"(?::dslo|:dshi)|#dssk BETWEEN :dslo AND :dshi))?$"
)


class _Meta:
    config = Config(max_pool_connections=1024)


class FakeQueryClient:
    """Partitions of items sorted by ``SK``; only ``query`` is implemented."""

    meta = _Meta()

    def __init__(self, title_bytes: int = 120) -> None:
        self._title = "x" * title_bytes
        """Every item's payload: its size sets the RCU a read of it costs."""
        self._keys: dict[str, list[str]] = defaultdict(list)
        self._items: dict[str, list[dict[str, Any]]] = defaultdict(list)

    def load(self, partition: str, sort_keys: list[str]) -> None:
        """Store items with these sort keys in `partition`."""
        for key in sorted(sort_keys):
            self._keys[partition].append(key)
            self._items[partition].append(
                {"PK": {"S": partition}, "SK": {"S": key}, "Title": {"S": self._title}}
            )

    def query(self, **request: Any) -> dict[str, Any]:
        """DynamoDB Query semantics for the subset described in the module docstring."""
        expression = request["KeyConditionExpression"]
        match = _CONDITION.match(expression)
        if not match:
            raise ValueError(f"unsupported key condition {expression!r}")
        values = {k: v["S"] for k, v in request["ExpressionAttributeValues"].items()}
        partition = values[":dspk"]
        keys, items = self._keys[partition], self._items[partition]
        low, high = self._slice(keys, expression, match.group("op"), values)
        forward = request.get("ScanIndexForward", True)
        start = request.get("ExclusiveStartKey")
        if start:
            position = bisect.bisect_left(keys, start["SK"]["S"])
            low, high = (max(low, position + 1), high) if forward else (low, min(high, position))
        order = range(low, high) if forward else range(high - 1, low - 1, -1)
        limit = request.get("Limit")
        out: list[dict[str, Any]] = []
        size = 0
        for index in order:
            out.append(items[index])
            size += item_size(items[index])
            if len(out) == limit or size >= MAX_RESPONSE_BYTES:
                last = out[-1]
                return {
                    "Items": out,
                    "Count": len(out),
                    "ScannedCount": len(out),
                    "LastEvaluatedKey": {"PK": last["PK"], "SK": last["SK"]},
                }
        return {"Items": out, "Count": len(out), "ScannedCount": len(out)}

    @staticmethod
    def _slice(
        keys: list[str], expression: str, op: str | None, values: dict[str, str]
    ) -> tuple[int, int]:
        if "begins_with" in expression:
            prefix = values[":dslo"]
            low = bisect.bisect_left(keys, prefix)
            high = low
            while high < len(keys) and keys[high].startswith(prefix):
                high += 1
            return low, high
        if "BETWEEN" in expression:
            return bisect.bisect_left(keys, values[":dslo"]), bisect.bisect_right(
                keys, values[":dshi"]
            )
        bounds: dict[str | None, Callable[[str], tuple[int, int]]] = {
            None: lambda _v: (0, len(keys)),
            "=": lambda v: (bisect.bisect_left(keys, v), bisect.bisect_right(keys, v)),
            ">": lambda v: (bisect.bisect_right(keys, v), len(keys)),
            ">=": lambda v: (bisect.bisect_left(keys, v), len(keys)),
            "<": lambda v: (0, bisect.bisect_left(keys, v)),
            "<=": lambda v: (0, bisect.bisect_right(keys, v)),
        }
        value = values.get(":dslo", values.get(":dshi", ""))
        return bounds[op](value)
