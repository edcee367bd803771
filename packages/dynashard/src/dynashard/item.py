"""Items as DynamoDB's low-level API spells them, and the hook that turns them into Python.

Every module of dynashard reads and writes the low-level form (``{"PK": {"S": "a#1"}}``),
which is what a Query returns and what cursors are built from. Users of boto3's resource
layer (``boto3.resource("dynamodb")``) work with plain values instead: `python_item` is
that conversion, and `Page.deserialized` takes it or any other ``ItemDeserializer``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from boto3.dynamodb.types import TypeDeserializer

Item = dict[str, Any]
"""A low-level DynamoDB item, e.g. ``{"PK": {"S": "a#1"}}``."""

T = TypeVar("T")
ItemDeserializer = Callable[[Item], T]
"""Turns one low-level item into what the caller works with (a dict, a model, ...)."""

_DESERIALIZER = TypeDeserializer()


def python_item(item: Item) -> dict[str, Any]:
    """`item` as boto3's resource layer returns it: ``{"PK": "a#1", "n": Decimal("3")}``."""
    return {name: _DESERIALIZER.deserialize(value) for name, value in item.items()}
