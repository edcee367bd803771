"""DynamoDB read-cost model: item sizes and per-request rounding."""

from __future__ import annotations

from typing import Any

import pytest

from dynashard.query import item_size, query_read_units


def test_item_size_counts_names_and_values() -> None:
    item: dict[str, dict[str, Any]] = {
        "PK": {"S": "acct#1"},  # 2 + 6
        "Title": {"S": "dé"},  # 5 + 3 (é is two UTF-8 bytes)
        "Open": {"BOOL": True},  # 4 + 1
        "Gone": {"NULL": True},  # 4 + 1
        "Blob": {"B": b"\x00\x01"},  # 4 + 2
    }
    assert item_size(item) == 8 + 8 + 5 + 5 + 6


@pytest.mark.parametrize(
    ("number", "size"), [("0", 2), ("7", 2), ("12", 2), ("123", 3), ("1.5e10", 2), ("-12345", 4)]
)
def test_number_size_is_about_one_byte_per_two_digits(number: str, size: int) -> None:
    assert item_size({"": {"N": number}}) == size


def test_nested_documents() -> None:
    value = {"M": {"a": {"S": "xy"}, "b": {"L": [{"N": "1"}, {"S": "z"}]}}}
    # map: 3 + (1 + 1 + 2) + (1 + 1 + list); list: 3 + (1 + 2) + (1 + 1)
    assert item_size({"m": value}) == 1 + 3 + 4 + 2 + (3 + 3 + 2)


def test_query_rounds_the_sum_once_per_request() -> None:
    item = {"D": {"S": "x" * 1023}}  # 1 KiB each
    assert query_read_units([item] * 4, consistent=True) == 1
    assert query_read_units([item] * 5, consistent=True) == 2
    assert query_read_units([item] * 5, consistent=False) == 1
    assert query_read_units([], consistent=False) == 0.5


def test_unknown_type_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown DynamoDB attribute type"):
        item_size({"x": {"Z": 1}})
