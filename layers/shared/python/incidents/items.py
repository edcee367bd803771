"""Models to DynamoDB items and back, through boto3's TypeSerializer / TypeDeserializer.

An item is the model's fields, a ``Type`` tag, and the key attributes the key schema
gives it; reading drops every key attribute so none can leak into a response.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from pydantic import BaseModel

from dynashard.query import Item, item_size
from incidents.errors import DetailsTooLargeError
from incidents.models import IncidentSummary, Participation
from incidents.table import TABLE_SCHEMA

M = TypeVar("M", bound=BaseModel)

KEY_ATTRIBUTES = frozenset({*TABLE_SCHEMA.key_attributes(), "Type", TABLE_SCHEMA.ttl_attribute})
MAX_DETAILS_BYTES = 350 * 1024
"""Details are stored as one JSON string; DynamoDB's item limit is 400 KB in all."""
MAX_ITEM_BYTES = 400 * 1024
MAX_TRANSACTION_BYTES = 4 * 1024 * 1024

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()


def serialize(values: dict[str, Any]) -> Item:
    """Plain values to DynamoDB attribute values (None values are left out)."""
    return {
        name: _serializer.serialize(value) for name, value in values.items() if value is not None
    }


def deserialize(item: Item) -> dict[str, Any]:
    """DynamoDB attribute values to plain values."""
    return {name: _deserializer.deserialize(value) for name, value in item.items()}


def to_item(model: BaseModel, item_type: str, keys: dict[str, str]) -> Item:
    """`model` as an item with `keys` (``{"PK": ..., "SK": ..., ...}``) and a ``Type`` tag."""
    return serialize({**model.model_dump(mode="json"), "Type": item_type, **keys})


def from_item(model: type[M], item: Item) -> M:
    """The model stored in `item`, its key attributes dropped."""
    values = deserialize(item)
    return model.model_validate({k: v for k, v in values.items() if k not in KEY_ATTRIBUTES})


def from_item_fields(model: type[M], item: Item) -> M:
    """Every field of `model` from `item`, an absent one as None (items leave None values
    out, and a response shows them as null)."""
    return model_from_values(model, deserialize(item))


def model_from_values(model: type[M], values: dict[str, Any]) -> M:
    """`from_item_fields` of an item already deserialized."""
    return model.model_validate({name: values.get(name) for name in model.model_fields})


def participation_to_item(participation: Participation, keys: dict[str, str]) -> Item:
    """A participation: the summary's fields flattened beside the participant's."""
    summary = participation.incident.model_dump(mode="json")
    values = {
        **{f"incident_{name}": value for name, value in summary.items()},
        "participant_id": participation.participant_id,
        "roles": {role.value for role in participation.roles},
        "Type": "participation",
        **keys,
    }
    return serialize(values)


def participation_from_item(item: Item) -> Participation:
    """The participation stored in `item`."""
    values = deserialize(item)
    summary = {
        name.removeprefix("incident_"): value
        for name, value in values.items()
        if name.startswith("incident_")
    }
    return Participation(
        participant_id=values["participant_id"],
        roles=sorted(values["roles"]),
        incident=IncidentSummary.model_validate(summary),
    )


def details_body(details: dict[str, Any]) -> str:
    """`details` as the JSON string stored, refused above `MAX_DETAILS_BYTES`."""
    body = json.dumps(details, separators=(",", ":"), ensure_ascii=False)
    size = len(body.encode())
    if size > MAX_DETAILS_BYTES:
        raise DetailsTooLargeError(
            f"details are {size:,} bytes as JSON; at most {MAX_DETAILS_BYTES:,} are allowed"
        )
    return body


def check_item_sizes(operations: list[Item]) -> None:
    """Refuse a transaction whose Puts DynamoDB would refuse (an item over 400 KB, or over
    4 MB in all), sized by DynamoDB's own rules, before anything is written."""
    sizes = [item_size(op["Put"]["Item"]) for op in operations if "Put" in op]
    if any(size > MAX_ITEM_BYTES for size in sizes) or sum(sizes) > MAX_TRANSACTION_BYTES:
        raise DetailsTooLargeError(
            f"the incident's items would be {max(sizes):,} bytes (largest) and {sum(sizes):,} "
            f"in all as stored; DynamoDB takes {MAX_ITEM_BYTES:,} an item and "
            f"{MAX_TRANSACTION_BYTES:,} a transaction"
        )
