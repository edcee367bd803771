"""A keyed create either fails before anything is written or succeeds, and a retry with the
same key always answers with the incident that was written, never a second one: at the
size limit in every UTF-8 width, when the idempotency record cannot be saved, and when the
record is gone before the retry (on DynamoDB Local)."""

from __future__ import annotations

from typing import Any

import pytest
from aws_lambda_powertools.utilities.idempotency.persistence.dynamodb import (
    DynamoDBPersistenceLayer,
)

from incidents.items import MAX_DETAILS_BYTES
from incidents.store import Caller, new_id
from lambdas import runtime
from tests.helpers.api_harness import Api, Reply

WIDTHS = {"ascii": "a", "2-byte": "é", "3-byte": "€", "4-byte": "😀"}
ENVELOPE = len('{"notes":""}')


def details_of(size: int, char: str) -> dict[str, str]:
    """Details whose stored JSON (UTF-8, no escapes) is exactly `size` bytes."""
    room = size - ENVELOPE
    wide, rest = divmod(room, len(char.encode()))
    return {"notes": char * wide + "a" * rest}


@pytest.fixture
def alice() -> Caller:
    return Caller(new_id("acct"), new_id("user"))


def keyed(api: Api, who: Caller, key: str, **body: Any) -> Reply:
    return api.call(
        "create_incident", who, body={"title": "t", **body}, headers={"Idempotency-Key": key}
    )


def incidents_of(api: Api, who: Caller) -> list[str]:
    listed = api.call("my_incidents", who, query={"limit": ["100"]})
    assert listed.status == 200
    return [item["id"] for item in listed.body["items"]]


@pytest.mark.parametrize("width", WIDTHS)
def test_details_at_the_limit_create_once_in_every_utf8_width(
    api: Api, alice: Caller, width: str
) -> None:
    details = details_of(MAX_DETAILS_BYTES, WIDTHS[width])
    key = new_id("req")
    first = keyed(api, alice, key, details=details)
    assert first.status == 201, first.body
    again = keyed(api, alice, key, details=details)
    assert again.status == 201, again.body
    assert again.body == first.body
    assert incidents_of(api, alice) == [first.body["summary"]["id"]]


@pytest.mark.parametrize("width", WIDTHS)
def test_details_over_the_limit_write_nothing(api: Api, alice: Caller, width: str) -> None:
    details = details_of(MAX_DETAILS_BYTES + len(WIDTHS[width].encode()), WIDTHS[width])
    for _ in range(2):
        refused = keyed(api, alice, new_id("req"), details=details)
        assert (refused.status, refused.body["code"]) == (413, "payload_too_large")
    assert incidents_of(api, alice) == []


@pytest.fixture
def record_saves_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every idempotency record update (the save after the create ran) fails."""

    def fail(self: DynamoDBPersistenceLayer, data_record: Any) -> None:
        raise RuntimeError("injected: the record could not be saved")

    monkeypatch.setattr(DynamoDBPersistenceLayer, "_update_record", fail)


def delete_idempotency_records() -> None:
    client, table = runtime.dynamodb(), runtime.table_name()
    pages = client.get_paginator("scan").paginate(
        TableName=table,
        FilterExpression="begins_with(PK, :prefix)",
        ExpressionAttributeValues={":prefix": {"S": "idempotency#"}},
    )
    for record in [item for page in pages for item in page["Items"]]:
        client.delete_item(TableName=table, Key={"PK": record["PK"], "SK": record["SK"]})


def test_a_record_that_cannot_be_saved_still_answers_with_the_incident(
    api: Api, alice: Caller, record_saves_fail: None
) -> None:
    key = new_id("req")
    first = keyed(api, alice, key)
    assert first.status == 201, first.body
    delete_idempotency_records()  # the in-progress record expires: a retry runs again
    again = keyed(api, alice, key)
    assert again.status == 201, again.body
    assert again.body["summary"]["id"] == first.body["summary"]["id"]
    assert incidents_of(api, alice) == [first.body["summary"]["id"]]


def test_a_retry_after_the_record_is_gone_returns_the_first_incident(
    api: Api, alice: Caller
) -> None:
    key = new_id("req")
    first = keyed(api, alice, key, details={"notes": "é" * 1000})
    delete_idempotency_records()
    again = keyed(api, alice, key, details={"notes": "é" * 1000})
    assert again.status == 201
    assert again.body == first.body
    assert incidents_of(api, alice) == [first.body["summary"]["id"]]
    other = keyed(api, Caller(alice.account_id, new_id("user")), key)
    assert other.body["summary"]["id"] != first.body["summary"]["id"], "keys are per caller"
